"""How long the embedded world spends answering one `GET /chat` page (issue 9, "Huge messages").

Run: `python -m bench.chat_page [--messages 1000] [--size 100000] [--limit 1]`. It opens a fresh
demo world in a temporary directory, stores `--messages` chat messages of `--size` characters
through the world's own `chat-send` action, then times the `chat-messages` action (what
`GET /chat?limit=...` runs in the world, on the event loop it shares with the relay under
`vttrelay serve`) for the game master and for a player, and prints the minimum and median of 20
calls in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stats import table
from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.world import World

PLAYER_ID = "playerAria000001"  # a player of the demo world


async def _timed(world: World, frame: dict[str, Any], repeat: int) -> list[float]:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        reply = await world.handle(frame)
        times.append((time.perf_counter() - start) * 1000)
        assert "error" not in reply, reply
    return times


async def run(messages: int, size: int, limit: int, repeat: int) -> list[list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        world = World.open(Path(tmp), actions=standard_table())
        try:
            content = "x" * size
            for n in range(messages):
                await world.handle({"type": "chat-send", "requestId": f"s{n}", "content": content})
            rows: list[list[str]] = []
            for who, user in (("game master", None), ("player", PLAYER_ID)):
                frame: dict[str, Any] = {"type": "chat-messages", "requestId": "m", "limit": limit}
                if user is not None:
                    frame["userId"] = user
                times = await _timed(world, frame, repeat)
                rows.append(
                    [
                        f"chat-messages limit={limit}, {who}",
                        f"{messages:,} x {size:,} chars",
                        f"{min(times):.2f}",
                        f"{statistics.median(times):.2f}",
                    ]
                )
            return rows
        finally:
            world.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rows = asyncio.run(run(args.messages, args.size, args.limit, args.repeat))
    print(table(["call", "world", "min ms", "median ms"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
