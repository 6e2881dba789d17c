"""`GET /metrics`: this instance's counters in the Prometheus text format.

The hot path pays one dict lookup and two additions per request: the middleware calls
`RequestMetrics.observe(resource, method, status, seconds)`, which adds one to the latency bucket
of that (route, method, status) row and the seconds to its sum. Everything else is computed when
`/metrics` is scraped (`RelayCollector`): counts by route and status, the latency histogram by
route, and gauges read from the relay's state (worlds connected here, pending requests, SSE and
`/ws/api` subscribers), and the round trips to Redis (`backends.redis.client` counts them).
prometheus-client does the exposition (and `process_*`: CPU, memory, open files), but not the
per-request counting: its labelled counter and histogram cost about 3 us per request against
0.25 us here (`python -m bench.micro`).

Routes are labelled by their template (`/dnd5e/get-actor-details`, `/api/clients/{clientId}/
active`), never by the raw path, so the number of series stays bounded; a request that matches
no route is counted as `route="unmatched"`. Long-lived requests (SSE streams, WebSocket upgrades:
status 101) are counted but kept out of the latency histogram: their "latency" is how long the
stream stayed open.

Each instance serves its own figures (`vttrelay_instance_info{instance_id=...}` says which one
answered). Behind one port shared by several processes (`vttrelay serve --workers N`) a scrape
reaches any of them, so each can also serve `/metrics` alone on a port of its own
(`--metrics-port`: `metrics_app`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from vttrelay import __version__

if TYPE_CHECKING:
    from aiohttp.web import AbstractResource

    from vttrelay.relay.backends.ports import WorldDirectory
    from vttrelay.relay.events.streams import Streams

# Upper bounds (seconds) of the latency buckets: a forwarded request takes 1-5 ms on an idle
# relay; the route timeouts are 10, 20 and 30 s.
LATENCY_BUCKETS: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)
UNMATCHED = "unmatched"
# The classic text format, which every Prometheus version reads (our names need no escaping).
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
WEBSOCKET_UPGRADE = 101

RowKey = tuple["AbstractResource | None", str, int]


class RequestMetrics:
    """Requests counted per (route, method, status): per row, the count in each latency bucket
    (the last one past every bound) and the sum of seconds."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.rows: dict[RowKey, list[float]] = {}
        self.streaming: set[AbstractResource] = set()  # resources whose requests are streams

    def observe(
        self, resource: AbstractResource | None, method: str, status: int, seconds: float
    ) -> None:
        """Count one finished request (the middleware's `finally`)."""
        key = (resource, method, status)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = [0] * (len(self.buckets) + 1) + [0.0]
        row[bisect.bisect_left(self.buckets, seconds)] += 1
        row[-1] += seconds

    def add_streaming(self, resources: Iterable[AbstractResource]) -> None:
        """Mark routes whose requests stay open (SSE): kept out of the latency histogram."""
        self.streaming.update(resources)

    def families(self) -> Iterator[Metric]:
        """`vttrelay_http_requests_total` and `vttrelay_http_request_duration_seconds`."""
        total = CounterMetricFamily(
            "vttrelay_http_requests",
            "HTTP requests answered by this instance, by route template, method and status.",
            labels=("route", "method", "status"),
        )
        merged: dict[tuple[str, str], list[float]] = {}
        for (resource, method, status), row in list(self.rows.items()):
            route = resource.canonical if resource is not None else UNMATCHED
            total.add_metric((route, method, str(status)), sum(row[:-1]))
            if status == WEBSOCKET_UPGRADE or resource in self.streaming:
                continue
            into = merged.setdefault((route, method), [0.0] * len(row))
            for i, value in enumerate(row):
                into[i] += value
        yield total
        latency = HistogramMetricFamily(
            "vttrelay_http_request_duration_seconds",
            "Time from a request's arrival to its response, by route template and method "
            "(streams and WebSocket upgrades excluded).",
            labels=("route", "method"),
        )
        bounds = [*(_le(b) for b in self.buckets), "+Inf"]
        for (route, method), row in sorted(merged.items()):
            cumulative: list[tuple[str, float]] = []
            running = 0.0
            for bound, count in zip(bounds, row[:-1], strict=True):
                running += count
                cumulative.append((bound, running))
            latency.add_metric((route, method), cumulative, sum_value=row[-1])
        yield latency


def _le(bound: float) -> str:
    return repr(float(bound))


class RoundTrips:
    """Round trips to Redis made by one instance's clients (`backends.redis.client`)."""

    def __init__(self) -> None:
        self.count = 0


# Per instance id: every Redis client of an instance adds to the same counter, and several
# instances in one process (tests) keep theirs apart.
_ROUND_TRIPS: dict[str, RoundTrips] = {}


def redis_round_trips(instance_id: str) -> RoundTrips:
    """The round-trip counter of an instance (made on first use)."""
    counter = _ROUND_TRIPS.get(instance_id)
    if counter is None:
        counter = _ROUND_TRIPS[instance_id] = RoundTrips()
    return counter


class RelayCollector(Collector):
    """Reads the relay's state at scrape time: request metrics and the gauges."""

    def __init__(
        self, instance_id: str, metrics: RequestMetrics, worlds: WorldDirectory, streams: Streams
    ) -> None:
        self.instance_id = instance_id
        self.metrics = metrics
        self.worlds = worlds
        self.streams = streams

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "vttrelay_instance_info",
            "The instance that answered this scrape (always 1).",
            labels=("instance_id", "version"),
        )
        info.add_metric((self.instance_id, __version__), 1)
        yield info
        yield from self.metrics.families()
        worlds = list(self.worlds)
        yield GaugeMetricFamily(
            "vttrelay_worlds_connected",
            "Worlds whose /relay socket is connected to this instance.",
            value=len(worlds),
        )
        yield GaugeMetricFamily(
            "vttrelay_pending_requests",
            "Requests sent to the worlds of this instance and not answered yet.",
            value=sum(len(w.pending) for w in worlds),
        )
        subscribers = GaugeMetricFamily(
            "vttrelay_stream_subscribers",
            "Event subscriptions held by this instance (kind: sse, or ws for /ws/api).",
            labels=("kind",),
        )
        kinds: dict[str, int] = {"sse": 0, "ws": 0}
        for sub in self.streams.hub.subscribers():
            kinds[sub.kind] = kinds.get(sub.kind, 0) + 1
        for kind, count in sorted(kinds.items()):
            subscribers.add_metric((kind,), count)
        yield subscribers
        yield GaugeMetricFamily(
            "vttrelay_client_sockets",
            "Open /ws/api client connections on this instance.",
            value=len(self.streams.sockets),
        )
        yield CounterMetricFamily(
            "vttrelay_redis_round_trips",
            "Commands and pipelines this instance sent to Redis (0 without --redis).",
            value=redis_round_trips(self.instance_id).count,
        )


def make_registry(collector: RelayCollector) -> CollectorRegistry:
    """The collectors `/metrics` exposes: the relay's own and the process's (CPU, memory)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    ProcessCollector(registry=registry)
    return registry


def metrics_response(registry: CollectorRegistry) -> web.Response:
    """The registry in the Prometheus text format (version 0.0.4)."""
    return web.Response(
        body=generate_latest(registry), headers={"Content-Type": METRICS_CONTENT_TYPE}
    )


def metrics_app(registry: CollectorRegistry) -> web.Application:
    """An application that serves only `GET /metrics` (an instance's own metrics port)."""

    async def handler(request: web.Request) -> web.Response:
        return metrics_response(registry)

    app = web.Application()
    app.router.add_get("/metrics", handler)
    return app


__all__ = [
    "METRICS_CONTENT_TYPE",
    "LATENCY_BUCKETS",
    "RelayCollector",
    "RequestMetrics",
    "RoundTrips",
    "metrics_app",
    "metrics_response",
    "make_registry",
    "redis_round_trips",
]
