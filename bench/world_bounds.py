"""How long the embedded world spends on the inputs of issue 20 items 1 and 2: a batch of walls
created in one call, and a picture of a scene holding a light of a huge radius.

Run: `python -m bench.world_bounds [--walls 1000,5000,10000] [--dims 1000,50000,100000]
[--repeat 3]`. Each case opens a fresh demo world in a temporary directory and times the
world's own action in process (`create-canvas-document` with `data` an array of walls;
`scene-screenshot` of the active scene after a light with `config.dim` of that many units is
stored directly, as a world from before the bounds could hold it), and prints min and median
seconds of `--repeat` runs. It uses only `World.open` and `World.handle` (and the standard
action table where the tree has one), so it also runs against an older tree
(`PYTHONPATH=<old>/src`) for a before/after. A case whose first run passes
`--give-up` seconds is not repeated.
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

try:
    from vttrelay.world.model import documents
    from vttrelay.world.runtime.world import World
except ImportError:  # a tree from before the world's layout of DESIGN §11
    from vttrelay.world.world import World  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]  # noqa: E501, I001

    from vttrelay.world import documents  # type: ignore[attr-defined, no-redef, unused-ignore]


def _open(path: Path) -> World:
    """The demo world at `path`, with the standard action table (older trees: their registry)."""
    try:
        from vttrelay.world.actions.table import standard_table
    except ImportError:  # a tree from before the action table
        return World.open(path)  # type: ignore[call-arg, unused-ignore]
    return World.open(path, actions=standard_table())


async def _walls(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        world = _open(Path(tmp))
        try:
            frame = {
                "type": "create-canvas-document",
                "requestId": "w",
                "documentType": "walls",
                "className": "Wall",
                "data": [{"c": [i % 2000, 0, i % 2000, 100]} for i in range(n)],
            }
            start = time.perf_counter()
            reply = await world.handle(frame)
            took = time.perf_counter() - start
            assert "error" not in reply, reply.get("error")
            return took
        finally:
            world.close()


async def _picture(dim: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        world = _open(Path(tmp))
        try:
            with world.store.transaction() as tx:
                scene: dict[str, Any] | None = documents.active_scene(tx)
                assert scene is not None
                scene["lights"] = [{"_id": "l", "x": 1500, "y": 1100, "config": {"dim": dim}}]
                tx.put("Scene", scene)
            start = time.perf_counter()
            reply = await world.handle({"type": "scene-screenshot", "requestId": "p"})
            took = time.perf_counter() - start
            assert "error" not in reply, reply.get("error")
            return took
        finally:
            world.close()


async def _cases(walls: list[int], dims: list[int], repeat: int, give_up: float) -> list[list[str]]:
    rows: list[list[str]] = []
    cases: list[tuple[str, Any]] = [(f"{n:,} walls in one call", (_walls, n)) for n in walls]
    cases += [(f"picture, light of {d:,} units", (_picture, d)) for d in dims]
    for label, (fn, arg) in cases:
        times = [await fn(arg)]
        while len(times) < repeat and times[0] < give_up:
            times.append(await fn(arg))
        rows.append(
            [label, str(len(times)), f"{min(times):.3f}", f"{statistics.median(times):.3f}"]
        )
    return rows


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walls", type=_ints, default=[1_000, 5_000, 10_000])
    parser.add_argument("--dims", type=_ints, default=[1_000, 50_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--give-up", type=float, default=20.0)
    args = parser.parse_args()
    rows = asyncio.run(_cases(args.walls, args.dims, args.repeat, args.give_up))
    print(table(["case", "runs", "min s", "median s"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
