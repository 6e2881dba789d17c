"""Record the fake world's replies for the entity and search routes from the real embedded world.

    python -m bench.record

opens the demo world in a temporary directory, answers the requests of `RECORDED` with it (as the
relay would send them) and writes each reply body (without `type` and `requestId`) to
`bench/recorded/<action>.json`, which `bench/replies.py` loads. Run it again when the demo world
or the replies' shapes change.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Final

import orjson

from bench.replies import GET_UUID, RECORDED_DIR, SEARCH_FILTER
from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.world import World

# action -> the request frame's parameters (what the relay forwards for the bench mix's call).
RECORDED: Final[dict[str, dict[str, Any]]] = {
    "entity": {"uuid": GET_UUID},
    "search": {"filter": SEARCH_FILTER},
}


async def record(out_dir: Path = RECORDED_DIR) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        world = World.open(Path(tmp), actions=standard_table())
        try:
            for action, params in RECORDED.items():
                frame = {"type": action, "requestId": f"{action}_1", **params}
                reply = await world.handle(frame)
                if "error" in reply:
                    raise RuntimeError(f"{action}: {reply['error']}")
                body = {k: v for k, v in reply.items() if k not in ("type", "requestId")}
                (out_dir / f"{action}.json").write_bytes(
                    orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"
                )
        finally:
            world.close()


if __name__ == "__main__":
    asyncio.run(record())
