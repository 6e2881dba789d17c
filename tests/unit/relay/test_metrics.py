"""RequestMetrics: the bucket a latency falls in, the families /metrics shows from the rows."""

from __future__ import annotations

from aiohttp import web

from vttrelay.relay.metrics import LATENCY_BUCKETS, RequestMetrics


def resources() -> tuple[web.AbstractResource, web.AbstractResource]:
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        return web.Response()

    plain = app.router.add_get("/actor/{uuid}", handler).resource
    stream = app.router.add_get("/chat/subscribe", handler).resource
    assert plain is not None and stream is not None
    return plain, stream


def samples(metrics: RequestMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in metrics.families()
        for s in family.samples
    }


def test_a_latency_on_a_bound_counts_in_that_bucket_le() -> None:
    plain, _ = resources()
    metrics = RequestMetrics()
    metrics.observe(plain, "GET", 200, 0.001)  # exactly the first bound: le="0.001"
    metrics.observe(plain, "GET", 200, 0.0011)
    metrics.observe(plain, "GET", 500, 45.0)  # past the last bound: only +Inf
    got = samples(metrics)
    route = (("method", "GET"), ("route", "/actor/{uuid}"))

    def bucket(le: str) -> float:
        key = tuple(sorted((*route, ("le", le))))
        return got[("vttrelay_http_request_duration_seconds_bucket", key)]

    assert bucket("0.001") == 1
    assert bucket("0.0025") == 2
    assert bucket(repr(LATENCY_BUCKETS[-1])) == 2
    assert bucket("+Inf") == 3
    assert got[("vttrelay_http_request_duration_seconds_count", route)] == 3
    assert abs(got[("vttrelay_http_request_duration_seconds_sum", route)] - 45.0021) < 1e-9
    assert got[("vttrelay_http_requests_total", (*route, ("status", "200")))] == 2
    assert got[("vttrelay_http_requests_total", (*route, ("status", "500")))] == 1


def test_streams_upgrades_and_unmatched_requests() -> None:
    plain, stream = resources()
    metrics = RequestMetrics()
    metrics.add_streaming([stream])
    metrics.observe(stream, "GET", 200, 120.0)  # an SSE stream open for two minutes
    metrics.observe(plain, "GET", 101, 60.0)  # a WebSocket upgrade
    metrics.observe(None, "GET", 404, 0.0002)  # no route matched
    got = samples(metrics)
    total = "vttrelay_http_requests_total"
    assert got[(total, (("method", "GET"), ("route", "/chat/subscribe"), ("status", "200")))] == 1
    assert got[(total, (("method", "GET"), ("route", "/actor/{uuid}"), ("status", "101")))] == 1
    assert got[(total, (("method", "GET"), ("route", "unmatched"), ("status", "404")))] == 1
    counts = {
        labels for (name, labels) in got if name == "vttrelay_http_request_duration_seconds_count"
    }
    assert counts == {(("method", "GET"), ("route", "unmatched"))}
