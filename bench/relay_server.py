"""The relay under test, as one process: `create_app(RelayConfig)` on uvloop, 127.0.0.1 only.

Run: `python -m bench.relay_server --port N --data-dir D [--max-streams N]`.
This is the product's own application with its defaults, except what a benchmark of 1,000+
subscribers on one world needs: a higher `max_streams_per_channel` (the default is 10 per world
and channel, as in the reference relay). No access log is written (as `vttrelay serve`, whose
request log is off unless asked for). SIGTERM or SIGINT stops it gracefully.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from aiohttp import web

from vttrelay.relay.app import create_app
from vttrelay.relay.config import RelayConfig

BENCH_MAX_STREAMS = 20_000


def config_from(argv: list[str] | None = None) -> RelayConfig:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--max-streams", type=int, default=BENCH_MAX_STREAMS)
    args = parser.parse_args(argv)
    return RelayConfig(
        host="127.0.0.1",
        port=args.port,
        data_dir=args.data_dir,
        max_streams_per_channel=args.max_streams,
    )


def main(argv: list[str] | None = None) -> int:
    config = config_from(argv)
    try:
        import uvloop

        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    except ImportError:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    web.run_app(
        create_app(config),
        host=config.host,
        port=config.port,
        access_log=None,
        print=None,
        handle_signals=True,
        loop=loop,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
