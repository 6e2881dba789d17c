"""The relay under test, as one process: what `vttrelay serve --no-world` runs, on 127.0.0.1.

Run: `python -m bench.relay_server --port N --data-dir D [--max-streams N] [--log-level L]
[--redis URL [--workers N]]`. With `--redis` it is one instance of a relay cluster over that
Redis (`vttrelay serve --redis`); with `--workers N` it runs what `vttrelay serve --workers N`
runs (a supervisor and N worker processes on the port, `vttrelay.server.workers`).
It calls the server's own `serve()` (uvloop, `create_app`, the same runner) with the product's
defaults and logging set up as `vttrelay` does (INFO: one request-log line per request, here into
the bench's relay.log). The one difference is what a benchmark of 1,000+ subscribers on one world
needs: a higher `max_streams_per_channel` (the default is 10 per world and channel, as in the
reference relay) and `max_connections` (default 10,000; serve() keeps it below the open-files
limit). SIGTERM or SIGINT stops it gracefully.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from vttrelay.relay.accesslog import LOG_FORMAT
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.listener import RelaySite
from vttrelay.server import serve
from vttrelay.server.workers import serve_workers

BENCH_MAX_STREAMS = 20_000
BENCH_MAX_CONNECTIONS = 100_000  # the fan-out scenarios hold more than the default 10,000


def parse(argv: list[str] | None = None) -> tuple[RelayConfig, str, int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--max-streams", type=int, default=BENCH_MAX_STREAMS)
    parser.add_argument("--log-level", default="INFO", help="as `vttrelay --log-level` (INFO)")
    parser.add_argument(
        "--backlog", type=int, help="listen backlog (default: serve()'s LISTEN_BACKLOG, 4096)"
    )
    parser.add_argument("--redis", help="join the relay cluster on this Redis URL")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (needs --redis)")
    parser.add_argument(
        "--activity-days",
        type=float,
        default=RelayConfig.activity_days,
        help="as `vttrelay serve --activity-days` (0: no activity log)",
    )
    parser.add_argument(
        "--activity-flush",
        type=float,
        default=RelayConfig.activity_flush_interval,
        help="seconds between the activity log's writes (RelayConfig.activity_flush_interval)",
    )
    args = parser.parse_args(argv)
    if args.backlog:
        listen_backlog(args.backlog)
    config = RelayConfig(
        host="127.0.0.1",
        port=args.port,
        data_dir=args.data_dir,
        max_streams_per_channel=args.max_streams,
        max_connections=BENCH_MAX_CONNECTIONS,  # serve() keeps it below the open-files limit
        redis_url=args.redis,
        activity_days=args.activity_days,
        activity_flush_interval=args.activity_flush,
    )
    return config, args.log_level, args.workers


def listen_backlog(backlog: int) -> None:
    """Make the RelaySite that serve() creates listen with `backlog` (an experiment switch: it
    shows what the listen backlog does to a burst of connects, see bench/RESULTS.md)."""
    original = RelaySite.__init__

    def init(self: RelaySite, *args: Any, **kwargs: Any) -> None:
        kwargs["backlog"] = backlog
        original(self, *args, **kwargs)

    RelaySite.__init__ = init  # type: ignore[method-assign]


def gc_experiment() -> None:
    """Two experiment switches from the environment (inherited through `python -m bench`):
    `BENCH_NO_GC_FREEZE=1` makes serve()'s gc.freeze() a no-op (the before), and
    `BENCH_GC_REPORT=FILE` writes the cyclic collector's passes per generation (count, total and
    longest pause in ms) to FILE as JSON when the relay stops."""
    if os.environ.get("BENCH_NO_GC_FREEZE"):
        gc.freeze = lambda: None
    report = os.environ.get("BENCH_GC_REPORT")
    if not report:
        return
    passes = {g: [0, 0.0, 0.0] for g in range(3)}  # count, total ms, max ms
    started = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
            return
        ms = (time.perf_counter() - started[0]) * 1000
        entry = passes[info["generation"]]
        entry[0] += 1
        entry[1] += ms
        entry[2] = max(entry[2], ms)

    gc.callbacks.append(callback)

    def write() -> None:
        out = {
            f"gen{g}": {"count": c, "total_ms": round(t, 2), "max_ms": round(m, 2)}
            for g, (c, t, m) in passes.items()
        }
        Path(f"{report}.{os.getpid()}").write_text(json.dumps(out))

    atexit.register(write)


def main(argv: list[str] | None = None) -> int:
    config, level, workers = parse(argv)
    gc_experiment()
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format=LOG_FORMAT,
        stream=sys.stderr,
    )
    logging.getLogger("yoyo").setLevel(logging.WARNING)
    if workers > 1:
        return serve_workers(config, workers, with_world=False, log_level=level)
    loop_factory: Any = None
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        pass
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve(config, with_world=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
