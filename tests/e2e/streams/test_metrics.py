"""GET /metrics over real sockets: a real relay, a world double and an SSE subscriber; the
text is parsed with prometheus-client's own parser (what a Prometheus server reads)."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from tests.support.e2e import eventually


async def scrape(relay: Any) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample of /metrics: name -> {sorted labels: value}."""
    answer = await relay.call("GET", "/metrics")
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(answer.body.decode()):
        for sample in family.samples:
            labels = tuple(sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[labels] = sample.value
    return samples


def labels(**kw: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(kw.items()))


async def test_requests_by_route_and_status_and_the_latency_histogram(relay: Any) -> None:
    await relay.world()
    key = relay.key()
    body = {"actorUuid": "Actor.x", "skill": "prc"}
    for _ in range(3):
        assert (await relay.call("POST", "/dnd5e/skill-check", key=key, json=body)).status == 200
    assert (await relay.call("POST", "/dnd5e/skill-check", json=body)).status == 401
    assert (await relay.call("GET", "/no/such/route")).status == 404
    assert (await relay.call("GET", "/api/clients/world-1/active")).status == 200

    samples = await scrape(relay)
    total = samples["vttrelay_http_requests_total"]
    skill = {"route": "/dnd5e/skill-check", "method": "POST"}
    assert total[labels(**skill, status="200")] == 3
    assert total[labels(**skill, status="401")] == 1
    assert total[labels(route="unmatched", method="GET", status="404")] == 1
    # routes are labelled by their template, not by the path asked for
    active = labels(route="/api/clients/{clientId}/active", method="GET", status="200")
    assert total[active] == 1
    # the histogram counts both statuses of the route; its +Inf bucket equals its count
    counts = samples["vttrelay_http_request_duration_seconds_count"]
    assert counts[labels(**skill)] == 4
    buckets = samples["vttrelay_http_request_duration_seconds_bucket"]
    assert buckets[labels(**skill, le="+Inf")] == 4
    assert buckets[labels(**skill, le="0.001")] <= buckets[labels(**skill, le="10.0")] <= 4
    assert 0 < samples["vttrelay_http_request_duration_seconds_sum"][labels(**skill)] < 10

    info = samples["vttrelay_instance_info"]
    assert list(info) == [labels(instance_id=relay.config.instance_id, version=info_version(info))]
    assert samples["vttrelay_worlds_connected"][()] == 1
    assert samples["process_resident_memory_bytes"][()] > 0
    assert samples["vttrelay_redis_round_trips_total"][()] == 0  # one process: no Redis


def info_version(info: dict[tuple[tuple[str, str], ...], float]) -> str:
    return dict(next(iter(info)))["version"]


async def test_gauges_pending_requests_and_subscribers(relay: Any, sse: Any) -> None:
    world = await relay.world(handler=None)  # answers nothing: requests stay pending
    key = relay.key()
    call = asyncio.ensure_future(
        relay.call("POST", "/dnd5e/skill-check", key=key, json={"actorUuid": "A", "skill": "prc"})
    )
    stream = await sse(relay, "/rolls/subscribe", key, clientId=world.client_id)
    await stream.event()  # connected
    await world.next_request()
    await eventually(lambda: relay.state.streams.hub.subscribers())

    samples = await scrape(relay)
    assert samples["vttrelay_pending_requests"][()] == 1
    assert samples["vttrelay_stream_subscribers"][labels(kind="sse")] == 1
    assert samples["vttrelay_stream_subscribers"][labels(kind="ws")] == 0
    assert samples["vttrelay_worlds_connected"][()] == 1

    await world.close()
    assert (await call).status == 503
    stream.close()
    await eventually(lambda: not relay.state.streams.hub.subscribers())
    samples = await scrape(relay)
    assert samples["vttrelay_pending_requests"][()] == 0
    assert samples["vttrelay_worlds_connected"][()] == 0
    assert samples["vttrelay_stream_subscribers"][labels(kind="sse")] == 0
    # the stream was counted as a request, but kept out of the latency histogram
    stream_row = labels(route="/rolls/subscribe", method="GET", status="200")
    assert samples["vttrelay_http_requests_total"][stream_row] == 1
    histogram = samples["vttrelay_http_request_duration_seconds_count"]
    assert labels(route="/rolls/subscribe", method="GET") not in histogram
