"""How long does drawing a scene picture keep other Python threads of its process waiting?

    python -m bench.gil_spans [--pictures 5] [--size 4096]

A probe thread sleeps 0.2 ms at a time and records how late each wake-up is: a wake-up waits for
the interpreter's lock (the GIL) while another thread of the process holds it. The probe runs
while `--pictures` pictures of the demo scene are drawn (`world.render.scene.render`, `--size`
pixels asked on each side):

- `thread`: on a thread of the probe's process (where the embedded world's pictures were drawn
  before issue 21's last step, and where the relay's loop would be waiting);
- `worker`: in the world's heavy-work process (`world.runtime.heavy.HeavyWork`).

Prints, for each, the probe's wake-up delays (p50, p99, p99.9, max, in ms) and how many passed
1 ms: what a relay loop in that process would have waited for.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.stats import percentile, table
from vttrelay.world.render import scene as scene_image
from vttrelay.world.runtime.heavy import HeavyWork
from vttrelay.world.store.seed import load_world_content

SLEEP = 0.0002  # seconds the probe sleeps between wake-ups


def demo_scene() -> dict[str, Any]:
    scene: dict[str, Any] = load_world_content()["scenes"][0]
    return scene


async def probed(draw: Callable[[], Awaitable[None]]) -> list[float]:
    """The probe's wake-up delays (seconds past its sleep) while `draw()` runs."""
    delays: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            began = time.perf_counter()
            time.sleep(SLEEP)
            delays.append(time.perf_counter() - began - SLEEP)

    thread = threading.Thread(target=probe, name="probe")
    thread.start()
    try:
        await draw()
    finally:
        stop.set()
        thread.join()
    return delays


async def measure(where: str, pictures: int, size: int) -> list[float]:
    scene = demo_scene()
    heavy = HeavyWork()
    try:
        await heavy.run(scene_image.render, scene, width=64)  # the worker started and warm

        async def draw() -> None:
            for _ in range(pictures):
                if where == "thread":
                    await asyncio.to_thread(scene_image.render, scene, width=size, height=size)
                else:
                    await heavy.run(scene_image.render, scene, width=size, height=size)

        return await probed(draw)
    finally:
        heavy.close()


def row(where: str, delays: list[float]) -> list[str]:
    ms = [percentile(delays, p) * 1000 for p in (50, 99, 99.9)]
    return [
        where,
        *(f"{v:.2f}" for v in ms),
        f"{max(delays) * 1000:.2f}",
        str(sum(d > 0.001 for d in delays)),
        str(len(delays)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pictures", type=int, default=5)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args(argv)
    rows = [row(w, asyncio.run(measure(w, args.pictures, args.size))) for w in ("thread", "worker")]
    headers = ["drawn on", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "over 1 ms", "wake-ups"]
    print(f"{args.pictures} pictures of {args.size} x {args.size} asked")
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
