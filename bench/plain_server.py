"""A reference server: plain aiohttp on uvloop answering GET /api/health, nothing else.

Run: `python -m bench.plain_server PORT [--like-relay]`, then point wrk at it, e.g.
`taskset -c 1 wrk -t1 -c200 -d6s --latency http://127.0.0.1:PORT/api/health`.
It shows what the framework itself does on this machine (requests/s, and the latency tail at 200
connections on one saturated core), so the relay's floor can be read against it. `--like-relay`
adds what the relay's floor adds: two middlewares (one writing a log line per request), a CORS
response signal and a timestamped JSON body. Listens on 127.0.0.1; stop it with SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import orjson
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
log = logging.getLogger("bench.plain_server.access")


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"status":"ok"}', content_type="application/json")


async def health_like_relay(request: web.Request) -> web.Response:
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    body = orjson.dumps({"status": "ok", "timestamp": stamp, "instanceId": "plain"})
    return web.Response(body=body, content_type="application/json")


@web.middleware
async def log_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    try:
        return await handler(request)
    finally:
        log.info("%s %s %.1fms", request.method, request.path, time.perf_counter() - started)


@web.middleware
async def preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method == "OPTIONS":
        return web.Response(status=200)
    return await handler(request)


async def cors(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.setdefault("Access-Control-Allow-Origin", "*")


def build(like_relay: bool) -> web.Application:
    app = web.Application(middlewares=[log_requests, preflight] if like_relay else [])
    if like_relay:
        app.on_response_prepare.append(cors)
    app.router.add_get("/api/health", health_like_relay if like_relay else health)
    return app


async def serve(port: int, like_relay: bool) -> None:
    runner = web.AppRunner(build(like_relay), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--like-relay", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args.port, args.like_relay))
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(serve(args.port, args.like_relay))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
