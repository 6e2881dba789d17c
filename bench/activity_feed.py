"""What one GET /auth/activity costs at its bounds, and whether it holds up other callers
(issue 22).

Run: `python -m bench.activity_feed [--runs 5]`. It fills a SQLite store in a temporary
directory with what one account can have at most that the feed reads: the newest
`activity_http.MAX_CALLS` API calls of its keys (the activity log's batches), 1,000 world
connections and 1,000 cross-world requests; then builds the whole feed (`activity_http.feed`,
no filter: the most work; its first page of 50) `--runs` times in a worker thread, as the
route does, while the event loop ticks every millisecond. As `vttrelay serve` does once it has
started, the objects made so far (here: the filled store's) are frozen out of the cyclic
collector's full collections (`gc.freeze`); `--no-freeze` leaves them in.
Prints the feed's time (min, median, max in ms) and the loop's longest late tick (how long
another caller would have waited at worst).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from pathlib import Path

from bench.stats import table
from vttrelay.relay.accesslog import RequestRecord
from vttrelay.relay.accounts import activity_http, remote_logs
from vttrelay.relay.activity import ActivityLog
from vttrelay.relay.store import RelayStore

ACCOUNT = "acct_bench"


def fill(store: RelayStore) -> None:
    log = ActivityLog(store.db, days=14.0, max_rows=200_000)
    key_id, _ = store.create_key(ACCOUNT, ["world:info"], name="bot")
    key = store.get_key(key_id)
    now = time.time()
    for i in range(activity_http.MAX_CALLS):
        status = 200 if i % 10 else 404
        at, world = now - i * 0.01, f"world-{i % 5}"
        log.add(RequestRecord(at, key, ACCOUNT, world, "GET", "/world-info", "/world-info",
                              status, 3.2, "::1", i, 120))  # fmt: skip
    log.flush()
    for i in range(1000):
        store.remember_client(f"world-{i % 5}", ACCOUNT, {"worldTitle": "T", "ipAddress": "h"})
        remote_logs.write(
            store,
            remote_logs.RemoteRequest(
                ACCOUNT, "world-0", "tok_1", "world-1", "world-info", i % 3 != 0, "", "127.0.0.1"
            ),  # fmt: skip
        )


async def measure(store: RelayStore, runs: int) -> tuple[list[float], float, float, int]:
    lag = 0.0
    done = False

    async def ticker() -> None:
        nonlocal lag
        while not done:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            lag = max(lag, time.perf_counter() - before - 0.001)

    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(1.0)  # the machine's own lateness, without the feed
    idle, lag = lag, 0.0
    times: list[float] = []
    events = 0
    for _ in range(runs):
        start = time.perf_counter()
        events, _ = await asyncio.to_thread(activity_http.feed, store, ACCOUNT, "", {}, 0, 50)
        times.append((time.perf_counter() - start) * 1000)
    done = True
    await ticking
    return times, lag * 1000, idle * 1000, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-freeze", action="store_true", help="no gc.freeze() after the fill")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = RelayStore(Path(tmp) / "relay.db")
        try:
            fill(store)
            if not args.no_freeze:  # what serve does after its start (server.run_instance)
                gc.collect()
                gc.freeze()
            times, lag, idle, events = asyncio.run(measure(store, args.runs))
        finally:
            store.close()
    print(f"{events} events in the feed, {args.runs} runs")
    print(
        table(
            ["", "min ms", "median ms", "max ms"],
            [
                [
                    "GET /auth/activity (whole feed)",
                    f"{min(times):.1f}",
                    f"{statistics.median(times):.1f}",
                    f"{max(times):.1f}",
                ]
            ],
        )
    )
    print(
        f"longest late event-loop tick meanwhile: {lag:.1f} ms (in 1 s without it: {idle:.1f} ms)"
    )


if __name__ == "__main__":
    main()
