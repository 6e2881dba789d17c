"""Does drawing sheets and taking uploads delay other callers? (issue 23)

    python -m bench.files_load [--seconds 10] [--runs 3]

Starts `vttrelay serve` (the relay with its embedded world, as a user runs it), then measures
`GET /api/health` latency from one client calling it back to back: first alone, then while two
clients fetch `GET /sheet` pictures in a loop and one uploads a 16 MiB file in a loop (raw
body, streamed). Prints p50 and p99 of each phase and how many sheets and uploads were served;
the target is the loaded p99 within 2 x the idle p99. Stops the relay by pid.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.procs import free_port, start
from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.relay.store import RelayStore

UPLOAD = 16 * 1024 * 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def health_latencies(http: aiohttp.ClientSession, url: str, seconds: float) -> list[float]:
    out = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        async with http.get(url + "/api/health") as answer:
            await answer.read()
        out.append((time.perf_counter() - started) * 1000)
    return out


async def sheets(http: aiohttp.ClientSession, url: str, key: str, stop: asyncio.Event) -> int:
    done = 0
    while not stop.is_set():
        params = {"uuid": "Actor.elaraWizard00001"}
        async with http.get(url + "/sheet", params=params, headers={"x-api-key": key}) as answer:
            await answer.read()
            assert answer.status == 200, answer.status
        done += 1
    return done


async def uploads(http: aiohttp.ClientSession, url: str, key: str, stop: asyncio.Event) -> int:
    block = os.urandom(1024 * 1024)
    done = 0

    async def body() -> object:
        for _ in range(UPLOAD // len(block)):
            yield block

    while not stop.is_set():
        params = {"path": "bench", "filename": "load.bin", "overwrite": "true"}
        headers = {"x-api-key": key, "Content-Type": "application/octet-stream"}
        async with http.post(url + "/upload", data=body(), params=params, headers=headers) as a:
            await a.read()
            assert a.status == 200, a.status
        done += 1
    return done


async def one_run(
    seconds: float, workdir: Path, load_kinds: str
) -> tuple[list[float], list[float], int, int]:
    port = free_port()
    relay = await start(
        "relay",
        [sys.executable, "-m", "vttrelay", "serve", "--port", str(port), "--data-dir",
         str(workdir), "--rate", "0"],
        log_path=workdir / "relay.log",
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(300):
                try:
                    async with http.get(url + "/world-info") as answer:
                        if answer.status == 401:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            store = RelayStore(workdir / "relay.db")
            key = store.create_key("default", ALL_SCOPES, rate_per_minute=0)[1]
            store.close()
            await asyncio.sleep(2)  # the world connects
            await health_latencies(http, url, 1)  # warm up
            idle = await health_latencies(http, url, seconds)
            stop = asyncio.Event()
            drawing = (
                [sheets(http, url, key, stop) for _ in range(2)] if "sheets" in load_kinds else []
            )
            taking = [uploads(http, url, key, stop)] if "uploads" in load_kinds else []
            drawn = asyncio.gather(*drawing)
            taken = asyncio.gather(*taking)
            await asyncio.sleep(0.5)
            loaded = await health_latencies(http, url, seconds)
            stop.set()
            return idle, loaded, sum(await drawn), sum(await taken)
    finally:
        await relay.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", default="sheets,uploads", help="sheets, uploads or both")
    args = parser.parse_args()
    rows = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            idle, loaded, sheet_count, upload_count = await one_run(
                args.seconds, Path(tmp), args.load
            )
        row = (
            percentile(idle, 0.5),
            percentile(idle, 0.99),
            percentile(loaded, 0.5),
            percentile(loaded, 0.99),
            sheet_count,
            upload_count,
        )
        rows.append(row)
        print(
            f"health idle p50 {row[0]:.2f} p99 {row[1]:.2f} ms | under load p50 {row[2]:.2f} "
            f"p99 {row[3]:.2f} ms | {sheet_count} sheets, {upload_count} uploads of 16 MiB",
            flush=True,
        )
    medians = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(
        f"median: idle p50 {medians[0]:.2f} p99 {medians[1]:.2f} ms, loaded p50 {medians[2]:.2f} "
        f"p99 {medians[3]:.2f} ms (loaded p99 / idle p99 = {medians[3] / medians[1]:.2f})"
    )


if __name__ == "__main__":
    asyncio.run(main())
