"""Smoke test of `bench.world_stall`: one short run against a real `vttrelay serve` (its world
on its own thread) measures health latencies idle and loaded and draws pictures meanwhile (the
drawing clients in a process of their own, or on the probe's loop), and the memory of serve and
its heavy-work process; its processes are gone afterwards. A correctness check of the script,
not timing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

from bench.world_stall import HEADERS, Options, main_async, median_row  # noqa: E402


@pytest.mark.parametrize("drawers", ["process", "same"])
def test_one_short_run_measures_both_phases(drawers: str) -> None:
    options = Options(
        seconds=0.5, clients=2, size=512, interval=0.005, world="embedded", drawers=drawers
    )
    (result,) = asyncio.run(main_async(1, options))
    assert result.idle and result.loaded
    assert result.pictures  # the clients drew pictures while the loaded phase was measured
    assert all(latency > 0 for latency in [*result.idle, *result.loaded, *result.pictures])
    assert result.rss > 20 * 2**20  # serve and its heavy-work process, both counted
    assert len(median_row([result])) == len(HEADERS)
