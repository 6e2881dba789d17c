"""Memory of the relay and of the world while a large file is uploaded (issue 23).

    python -m bench.upload_rss [--mb 200] [--runs 3]

Starts `vttrelay serve --no-world` and `vttrelay world run` (the embedded world in its own
process, connected over a real WebSocket), then POSTs a file of `--mb` MiB to /upload twice per
run: as a JSON body (`fileData`, a base64 data URL: the reference clients' way) and as a raw
body (the file's bytes), each streamed from a generator so that the client holds no copy either.
RSS of both processes is read from /proc every 20 ms during the upload. Prints, per mode, the
RSS before and the peak during the upload, and the medians over the runs; both processes are
stopped by pid.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp

from bench.procs import Child, free_port, rss_bytes, start
from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.relay.store import RelayStore

MIB = 1024 * 1024
PIECE = 3 * MIB // 4 * 4  # bytes of file per generated piece (a multiple of 3: clean base64)


async def file_pieces(size: int) -> AsyncIterator[bytes]:
    sent = 0
    block = os.urandom(PIECE)
    while sent < size:
        piece = block[: min(PIECE, size - sent)]
        sent += len(piece)
        yield piece


async def json_body(size: int) -> AsyncIterator[bytes]:
    yield b'{"path":"bench","filename":"json.bin","overwrite":true,'
    yield b'"fileData":"data:application/octet-stream;base64,'
    async for piece in file_pieces(size):
        yield base64.b64encode(piece)
    yield b'"}'


async def sample(pids: dict[str, int], peaks: dict[str, int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for name, pid in pids.items():
            peaks[name] = max(peaks[name], rss_bytes(pid))
        await asyncio.sleep(0.02)


async def one_run(size: int, workdir: Path) -> list[tuple[str, dict[str, int], dict[str, int]]]:
    port = free_port()
    relay_dir, world_dir = workdir / "relay", workdir / "world"
    relay_dir.mkdir()
    world_dir.mkdir()
    python = sys.executable
    relay = await start(
        "relay",
        [python, "-m", "vttrelay", "serve", "--no-world", "--port", str(port), "--data-dir",
         str(relay_dir), "--rate", "0", "--body-timeout", "600"],
        log_path=workdir / "relay.log",
    )  # fmt: skip
    world: Child | None = None
    try:
        url = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as http:
            for _ in range(300):
                try:
                    async with http.get(url + "/api/health") as answer:
                        if answer.status == 200:
                            break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.1)
            store = RelayStore(relay_dir / "relay.db")
            key = store.create_key("default", ALL_SCOPES, rate_per_minute=0)[1]
            token = store.create_connection_token("default", "bench-world", name="bench")
            store.close()
            world = await start(
                "world",
                [python, "-m", "vttrelay", "world", "run", "--relay", url, "--token", token,
                 "--client-id", "bench-world", "--data-dir", str(world_dir)],
                log_path=workdir / "world.log",
            )  # fmt: skip
            headers = {"x-api-key": key}
            for _ in range(300):
                async with http.get(url + "/clients", headers=headers) as answer:
                    if '"isOnline":true' in await answer.text():
                        break
                await asyncio.sleep(0.1)
            results = []
            for mode in ("json", "raw"):
                pids = {"relay": relay.pid, "world": world.pid}
                before = {name: rss_bytes(pid) for name, pid in pids.items()}
                peaks = dict(before)
                stop = asyncio.Event()
                sampler = asyncio.ensure_future(sample(pids, peaks, stop))
                started = time.perf_counter()
                if mode == "json":
                    body: AsyncIterator[bytes] = json_body(size)
                    params = {}
                    kind = "application/json"
                else:
                    body = file_pieces(size)
                    params = {"path": "bench", "filename": "raw.bin", "overwrite": "true"}
                    kind = "application/octet-stream"
                async with http.post(
                    url + "/upload",
                    data=body,
                    params=params,
                    headers={**headers, "Content-Type": kind},
                ) as answer:
                    reply = await answer.text()
                    assert answer.status == 200, reply
                seconds = time.perf_counter() - started
                stop.set()
                await sampler
                stored = world_dir / "world" / "files" / "data" / "bench" / f"{mode}.bin"
                assert stored.stat().st_size == size, stored.stat().st_size
                print(
                    f"{mode:5} {seconds:6.1f} s  relay {before['relay'] / MIB:6.1f} -> "
                    f"{peaks['relay'] / MIB:6.1f} MiB   world {before['world'] / MIB:6.1f} -> "
                    f"{peaks['world'] / MIB:6.1f} MiB",
                    flush=True,
                )
                results.append((mode, before, peaks))
            return results
    finally:
        if world is not None:
            await world.stop()
        await relay.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    size = args.mb * MIB
    print(f"upload of {args.mb} MiB, RSS before -> peak during the upload")
    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(await one_run(size, Path(tmp)))
    for mode in ("json", "raw"):
        rows = [r for run in runs for r in run if r[0] == mode]
        shown = []
        for name in ("relay", "world"):
            peak = statistics.median(r[2][name] for r in rows) / MIB
            grew = statistics.median(r[2][name] - r[1][name] for r in rows) / MIB
            shown.append(f"{name} peak {peak:.1f} MiB (+{grew:.1f})")
        print(f"median {mode:5}: " + ", ".join(shown))


if __name__ == "__main__":
    asyncio.run(main())
