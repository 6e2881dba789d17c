"""Micro-measurements of the relay's per-request hot spots, robust to a busy machine.

Run: `python -m bench.micro`. Each line is the minimum over 5 repeats (the least disturbed one):
parsing each recorded reply of the forwarded mix in full (the relay's path before the fast path)
and through the fast path `worlds.peek_reply`, one request-log line through `logging` at INFO
(the relay's path before `BufferedAccessLog`) and through `BufferedAccessLog` (what `vttrelay
serve` uses now), the call when the level is higher, and a request id made with random bytes per
request (before) and by `core.new_request_id` (now), and a request counted for `/metrics`: by
prometheus-client's labelled counter and histogram, and by `metrics.RequestMetrics.observe` (what
the middleware does, route lookup included).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import secrets
import tempfile
import time
import timeit
from collections.abc import Callable
from typing import TextIO

import orjson
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from prometheus_client import CollectorRegistry, Counter, Histogram

from bench.replies import build_reply
from bench.stats import table
from vttrelay.relay.accesslog import ACCESS_LOGGER, LOG_FORMAT, BufferedAccessLog, RequestRecord
from vttrelay.relay.core import new_request_id
from vttrelay.relay.link.pending import peek_reply
from vttrelay.relay.metrics import LATENCY_BUCKETS, RequestMetrics

MIX_ACTIONS = ("get-actor-details", "skill-check", "chat-messages", "chat-send", "players")


def per_call_us(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


async def buffered_line_us(stream: TextIO, args: tuple[str, str, int, float]) -> float:
    """One line through BufferedAccessLog in a running loop (the loop does not turn while it is
    measured, so the buffer is formatted and written when it holds MAX_LINES, as under load)."""
    sink = BufferedAccessLog(stream, interval=3600)
    method, path, status, ms = args
    record = RequestRecord(0.0, None, "", "", method, path, None, status, ms, "127.0.0.1", 1, 312)
    cost = per_call_us(lambda: sink.record(record._replace(at=time.time())), 5000)
    sink.close()
    return cost


async def metrics_rows() -> list[list[str]]:
    """One forwarded request counted for /metrics: with prometheus-client's own labelled
    metrics, and with RequestMetrics.observe plus the route lookup the middleware does."""
    registry = CollectorRegistry()
    labels = ("route", "method", "status")
    counter = Counter("requests", "requests", labels, registry=registry)
    histogram = Histogram(
        "latency", "latency", ("route", "method"), buckets=LATENCY_BUCKETS, registry=registry
    )
    route = "/dnd5e/skill-check"

    def with_client() -> None:
        counter.labels(route, "POST", "200").inc()
        histogram.labels(route, "POST").observe(0.0031)

    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        return web.Response()

    app.router.add_post(route, handler)
    request = make_mocked_request("POST", route, app=app)
    request._match_info = await app.router.resolve(request)
    observe = RequestMetrics().observe

    def with_ours() -> None:
        observe(request.match_info.route.resource, request.method, 200, 0.0031)

    client_us = per_call_us(with_client, 20000)
    ours_us = per_call_us(with_ours, 20000)
    return [
        ["request counted, prometheus-client Counter + Histogram", "", f"{client_us:.2f}"],
        ["request counted, metrics.RequestMetrics (as the middleware)", "", f"{ours_us:.2f}"],
    ]


def main() -> int:
    rows: list[list[str]] = []
    total = 0.0
    for action in MIX_ACTIONS:
        raw = build_reply(action, f"{action}_1_abcdef").encode()
        cost = per_call_us(functools.partial(orjson.loads, raw), 2000)
        total += cost
        rows.append([f"orjson.loads, {action} reply", f"{len(raw):,} B", f"{cost:.1f}"])
    rows.append(["orjson.loads, mix average", "", f"{total / len(MIX_ACTIONS):.1f}"])
    total = 0.0
    for action in MIX_ACTIONS:
        raw = build_reply(action, f"{action}_1_abcdef").encode()
        cost = per_call_us(functools.partial(peek_reply, raw), 2000)
        total += cost
        rows.append([f"peek_reply (fast path), {action} reply", f"{len(raw):,} B", f"{cost:.1f}"])
    rows.append(["peek_reply, mix average", "", f"{total / len(MIX_ACTIONS):.1f}"])

    fd, path = tempfile.mkstemp(prefix="bench-log-")
    os.close(fd)
    try:
        with open(path, "w") as stream:
            handler = logging.StreamHandler(stream)
            handler.setFormatter(logging.Formatter(LOG_FORMAT))
            logger = logging.getLogger("bench.micro.access")
            logger.addHandler(handler)
            logger.propagate = False
            args = ("GET", "/dnd5e/get-actor-details", 200, 3.21)
            logger.setLevel(logging.INFO)
            cost = per_call_us(lambda: logger.info("%s %s %d %.1fms", *args), 5000)
            rows.append(["request-log line at INFO (to a file)", "", f"{cost:.1f}"])
            logger.setLevel(logging.WARNING)
            cost = per_call_us(lambda: logger.info("%s %s %d %.1fms", *args), 5000)
            rows.append(["request-log call below the level", "", f"{cost:.2f}"])
            logger.removeHandler(handler)
            access = logging.getLogger(ACCESS_LOGGER)
            level = access.level
            access.setLevel(logging.INFO)
            cost = asyncio.run(buffered_line_us(stream, args))
            rows.append(["request-log line, BufferedAccessLog (to a file)", "", f"{cost:.2f}"])
            access.setLevel(level)
    finally:
        os.unlink(path)

    counter = itertools.count(1)
    cost = per_call_us(lambda: f"skill-check_{next(counter)}_{secrets.token_hex(3)}", 20000)
    rows.append(["request id with secrets.token_hex(3)", "", f"{cost:.2f}"])
    cost = per_call_us(lambda: new_request_id("skill-check"), 20000)
    rows.append(["request id, core.new_request_id", "", f"{cost:.2f}"])
    rows.extend(asyncio.run(metrics_rows()))
    print(table(("what, per request", "size", "us"), rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
