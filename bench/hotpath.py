"""Where a forwarded request's relay CPU goes, measured in one process (robust to a busy machine).

Run: `python -m bench.hotpath [--requests 3000] [--top 30] [--mix common|forwarded]
[--replies small|actor|recorded]`.

It provisions a data dir, starts the relay application (`server.assemble.build_app`) on
127.0.0.1 in this process, connects the bench's fake world over a real WebSocket in the same
event loop, and sends the forwarded mix one request at a time through an aiohttp client.
Everything runs under cProfile; the report lists, per request, the calls and the time of each
function of the relay (`vttrelay`) and of aiohttp's server side, so two trees can be compared
function by function: the call counts are exact, the times are the profiler's (inflated alike on
both sides). `--mix common` (the default) is the
issue-6 mix of five actions that every tree since then serves, so the same script compares an old
tree with a new one.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestServer

from bench import mixes
from bench.fake_world import FakeWorlds, connect_world, serve_world
from bench.provision import provision
from bench.replies import REPLY_SETS
from vttrelay.relay.config import RelayConfig
from vttrelay.server.assemble import build_app

COMMON_ACTIONS = 5  # the first five entries of mixes.FORWARDED are the issue-6 mix
WARMUP = 300
SERVER_FILES = ("vttrelay", "aiohttp/web_", "aiohttp/http_", "aiohttp/_websocket", "multidict")


async def drive(
    requests: int, mix: str, profile: cProfile.Profile, replies: str = "recorded"
) -> tuple[float, float]:
    """Send `requests` forwarded requests; returns (process CPU s, wall s) for the profiled
    part."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        prov = provision(data, 1)
        app = build_app(RelayConfig(host="127.0.0.1", data_dir=data))
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        base = str(server.make_url("")).rstrip("/")
        fake = FakeWorlds(replies=replies)
        async with aiohttp.ClientSession() as session:
            cid, token = prov.worlds[0]
            world = await connect_world(session, base, cid, token)
            serving = asyncio.create_task(serve_world(fake, world))
            chosen = mixes.FORWARDED if mix == "forwarded" else mixes.FORWARDED[:COMMON_ACTIONS]
            batch = mixes.for_world(chosen, cid)
            headers = {"x-api-key": prov.api_key}

            async def one(i: int) -> None:
                method, path, body = batch[i % len(batch)]
                async with session.request(method, base + path, json=body, headers=headers) as resp:
                    await resp.read()
                    if resp.status != 200:
                        raise RuntimeError(f"{method} {path}: {resp.status} {await resp.text()}")

            for i in range(WARMUP):
                await one(i)
            cpu, wall = time.process_time(), time.perf_counter()
            profile.enable()
            for i in range(requests):
                await one(i)
            profile.disable()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            await world.ws.close()
            await serving
        await server.close()
    return cpu, wall


def report(profile: cProfile.Profile, requests: int, top: int) -> None:
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, name), (_cc, calls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if not any(part in file for part in SERVER_FILES):
            continue
        short = file.split("site-packages/")[-1].split("src/")[-1]
        rows.append((tottime, cumtime, calls, f"{short}:{line}({name})"))
    rows.sort(reverse=True)
    relay_self = sum(r[0] for r in rows if "vttrelay" in r[3])
    print(f"relay (vttrelay) self time per request: {relay_self / requests * 1e6:.1f} us")
    print(f"{'self us/req':>11} {'cum us/req':>10} {'calls/req':>9}  function")
    for tottime, cumtime, calls, where in rows[:top]:
        print(
            f"{tottime / requests * 1e6:11.2f} {cumtime / requests * 1e6:10.2f}"
            f" {calls / requests:9.2f}  {where}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--mix", choices=("common", "forwarded"), default="common")
    parser.add_argument("--no-profile", action="store_true", help="only the CPU per request")
    parser.add_argument(
        "--replies", choices=REPLY_SETS, default="recorded", help="the fake world's reply set"
    )
    args = parser.parse_args(argv)
    profile = cProfile.Profile()
    if args.no_profile:
        profile.enable = profile.disable = lambda: None  # type: ignore[method-assign, assignment]
    cpu, wall = asyncio.run(drive(args.requests, args.mix, profile, args.replies))
    print(
        f"{args.requests} requests ({args.mix} mix), client + world + relay in one process:"
        f" {cpu / args.requests * 1e3:.3f} ms CPU/request, {wall / args.requests * 1e3:.3f} ms"
        " wall"
    )
    if not args.no_profile:
        report(profile, args.requests, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
