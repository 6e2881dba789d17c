"""Does the embedded world's heavy work stall the relay? `/api/health` latency of `vttrelay serve`
idle, then while clients draw large scene pictures, in one run.

    python -m bench.world_stall [--runs 3] [--seconds 8] [--clients 2] [--size 4096]
                                [--world embedded|process] [--drawers process|same]

Each run starts `vttrelay serve --rate 0` on a free port with a fresh data directory (the serve
key has the default scopes; `--rate 0` so that the pictures are drawn rather than refused), waits
until its world answers, then:

1. idle: one client asks `GET /api/health` back to back (a pause of `--interval` ms between
   answers) for `--seconds`;
2. loaded: the same, while `--clients` other clients each ask `GET /scene/image` (PNG,
   `--size` x `--size` asked: 4096 x 2867 for the demo scene) over and over.

The drawing clients run in a process of their own (`--drawers process`, the default), as other
callers of a relay do; `--drawers same` runs them on the probe's own event loop, as the bench
did before, where the probe's latencies also hold the bench's own work of receiving pictures.

`--world embedded` (the default) is what `vttrelay serve` does. `--world process` runs the relay
alone (`--no-world`) and the demo world in a process of its own (`vttrelay world run`, paired
with a code from `vttrelay pair`): the other way to take the world off the relay's loop.

Prints each run's health p50/p99 idle and loaded, loaded p99 / idle p99 (the target: at most 2),
the pictures drawn per second and their p50, the resident memory of serve and its children (the
world's heavy-work process) after the pictures, then the medians over the runs. The bench imports
nothing of vttrelay: `PYTHONPATH` chooses the tree it measures (before/after in RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp

from bench.procs import Child, free_port, python_argv, start
from bench.stats import percentile, table

READY_TIMEOUT = 60.0  # seconds for serve to listen and its world to connect (a loaded machine)


@dataclass(frozen=True)
class Options:
    seconds: float
    clients: int
    size: int
    interval: float  # seconds between health probes
    world: str  # "embedded" or "process"
    drawers: str = "process"  # where the drawing clients run: "process" or "same" (loop)


@dataclass(frozen=True)
class Result:
    idle: list[float]  # health latencies, seconds
    loaded: list[float]
    pictures: list[float]  # latencies of the pictures drawn during the loaded phase
    seconds: float  # length of the loaded phase
    rss: int  # bytes: serve and its child processes (the heavy-work worker), after the pictures

    def row(self, label: str) -> list[str]:
        idle99, loaded99 = percentile(self.idle, 99), percentile(self.loaded, 99)
        return [
            label,
            f"{percentile(self.idle, 50) * 1000:.1f}",
            f"{idle99 * 1000:.1f}",
            f"{percentile(self.loaded, 50) * 1000:.1f}",
            f"{loaded99 * 1000:.1f}",
            f"{loaded99 / idle99:.2f}",
            f"{len(self.pictures) / self.seconds:.2f}",
            f"{percentile(self.pictures, 50) * 1000:.0f}",
            f"{self.rss / 2**20:.0f}",
        ]


HEADERS = [
    "run",
    "idle p50 ms",
    "idle p99 ms",
    "loaded p50 ms",
    "loaded p99 ms",
    "p99 ratio",
    "pictures/s",
    "picture p50 ms",
    "serve RSS MiB",
]


async def _cli(*args: str, data_dir: str) -> str:
    """Run one `vttrelay` command to its end; its stdout."""
    proc = await asyncio.create_subprocess_exec(
        *python_argv("vttrelay", *args, "--data-dir", data_dir),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"vttrelay {' '.join(args)} failed: {err.decode()[-2000:]}")
    return out.decode()


@contextlib.asynccontextmanager
async def serving(options: Options) -> AsyncIterator[tuple[str, str, Child]]:
    """A `vttrelay serve` with its world (embedded, or in a process of its own): (base url, key,
    the serve process). Every process started here is stopped by its pid on the way out."""
    children: list[Child] = []
    with tempfile.TemporaryDirectory() as relay_dir, tempfile.TemporaryDirectory() as world_dir:
        try:
            port = free_port()
            argv = ["serve", "--port", str(port), "--data-dir", relay_dir, "--rate", "0"]
            if options.world == "process":
                argv.append("--no-world")
            serve = await start("serve", python_argv("vttrelay", *argv), pipes=True)
            children.append(serve)
            await serve.expect("vttrelay", READY_TIMEOUT)
            key = await serve.expect("API key:", READY_TIMEOUT)
            base = f"http://127.0.0.1:{port}"
            if options.world == "process":
                code = (await _cli("pair", data_dir=relay_dir)).strip()
                await _cli("world", "pair", code, "--relay", base, data_dir=world_dir)
                world = await start(
                    "world", python_argv("vttrelay", "world", "run", "--data-dir", world_dir)
                )
                children.append(world)
            yield base, key, serve
        finally:
            for child in reversed(children):
                await child.stop()


async def _picture(session: aiohttp.ClientSession, base: str, size: int) -> None:
    params = {"width": str(size), "height": str(size), "format": "png"}
    async with session.get(f"{base}/scene/image", params=params) as resp:
        body = await resp.read()
        if resp.status != 200 or not body.startswith(b"\x89PNG"):
            raise RuntimeError(f"/scene/image answered {resp.status}: {body[:200]!r}")


async def _wait_world(base: str, key: str, size: int) -> None:
    """Until the world answers a (small) picture: it is connected and warm."""
    deadline = time.monotonic() + READY_TIMEOUT
    async with aiohttp.ClientSession(headers={"x-api-key": key}) as session:
        while True:
            try:
                await _picture(session, base, min(size, 512))
                return
            except (RuntimeError, aiohttp.ClientError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)


async def _probe(base: str, seconds: float, interval: float) -> list[float]:
    """Health latencies, one request at a time, for `seconds`."""
    out: list[float] = []
    async with aiohttp.ClientSession() as session:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            began = time.perf_counter()
            async with session.get(f"{base}/api/health") as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"/api/health answered {resp.status}")
            out.append(time.perf_counter() - began)
            await asyncio.sleep(interval)
    return out


async def _draw(base: str, key: str, size: int, stop: asyncio.Event, out: list[float]) -> None:
    async with aiohttp.ClientSession(headers={"x-api-key": key}) as session:
        while not stop.is_set():
            began = time.perf_counter()
            await _picture(session, base, size)
            out.append(time.perf_counter() - began)


async def _draw_all(base: str, key: str, size: int, clients: int) -> None:
    """The drawing clients in a process of their own (`--draw`): they draw from the start until
    a line (or the end) on stdin, then print their picture latencies as one JSON line."""
    stop = asyncio.Event()
    pictures: list[float] = []
    drawers = [asyncio.create_task(_draw(base, key, size, stop, pictures)) for _ in range(clients)]
    print("drawing", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    stop.set()
    await asyncio.gather(*drawers)
    print("pictures " + json.dumps(pictures), flush=True)


@contextlib.asynccontextmanager
async def drawing(options: Options, base: str, key: str) -> AsyncIterator[list[float]]:
    """Clients drawing pictures while the block runs; the list holds their latencies after it."""
    pictures: list[float] = []
    if options.drawers == "same":
        stop = asyncio.Event()
        drawers = [
            asyncio.create_task(_draw(base, key, options.size, stop, pictures))
            for _ in range(options.clients)
        ]
        try:
            yield pictures
        finally:
            stop.set()
            await asyncio.gather(*drawers)
        return
    argv = ["--draw", base, key, str(options.size), str(options.clients)]
    child = await start("drawers", python_argv("bench.world_stall", *argv), pipes=True)
    try:
        await child.expect("drawing", READY_TIMEOUT)
        yield pictures
        await child.send("stop")
        pictures.extend(json.loads(await child.expect("pictures", READY_TIMEOUT)))
    finally:
        await child.stop()


async def one_run(options: Options) -> Result:
    async with serving(options) as (base, key, serve):
        await _wait_world(base, key, options.size)
        idle = await _probe(base, options.seconds, options.interval)
        async with drawing(options, base, key) as pictures:
            await asyncio.sleep(0.2)  # the first pictures are on their way
            loaded = await _probe(base, options.seconds, options.interval)
        return Result(idle, loaded, pictures, options.seconds, serve.rss_bytes())


def median_row(results: list[Result]) -> list[str]:
    """The median of each column over the runs."""
    rows = [r.row("") for r in results]
    return ["median"] + [
        f"{statistics.median(float(row[i]) for row in rows):.{2 if i in (5, 6) else 1}f}"
        for i in range(1, len(HEADERS))
    ]


async def main_async(runs: int, options: Options) -> list[Result]:
    results = []
    for index in range(runs):
        results.append(await one_run(options))
        print(table(HEADERS, [results[-1].row(str(index + 1))]).splitlines()[-1], flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each phase")
    parser.add_argument("--clients", type=int, default=2, help="clients drawing pictures")
    parser.add_argument("--size", type=int, default=4096, help="width and height asked")
    parser.add_argument("--interval", type=float, default=5.0, help="ms between health probes")
    parser.add_argument("--world", choices=("embedded", "process"), default="embedded")
    parser.add_argument(
        "--drawers",
        choices=("process", "same"),
        default="process",
        help="the drawing clients in a process of their own, or on the probe's loop",
    )
    parser.add_argument(
        "--draw", nargs=4, metavar=("BASE", "KEY", "SIZE", "CLIENTS"), help=argparse.SUPPRESS
    )  # the drawers' process
    args = parser.parse_args(argv)
    if args.draw:
        base, key, size, clients = args.draw
        asyncio.run(_draw_all(base, key, int(size), int(clients)))
        return 0
    options = Options(
        args.seconds, args.clients, args.size, args.interval / 1000, args.world, args.drawers
    )
    where = "in a process of their own" if options.drawers == "process" else "on the probe's loop"
    print(
        f"world {options.world}, {options.clients} clients drawing {options.size}x{options.size}"
        f" PNGs ({where}), {options.seconds:g} s per phase, {args.runs} runs"
    )
    print("\n".join(table(HEADERS, []).splitlines()), flush=True)
    results = asyncio.run(main_async(args.runs, options))
    print(table(HEADERS, [median_row(results)]).splitlines()[-1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
