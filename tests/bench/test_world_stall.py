"""Smoke test of `bench.world_stall`: one short run against a real `vttrelay serve` (its world
on its own thread) measures health latencies idle and loaded and draws pictures meanwhile; its
processes are gone afterwards. A correctness check of the script, not timing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

from bench.world_stall import HEADERS, Options, main_async, median_row  # noqa: E402


def test_one_short_run_measures_both_phases() -> None:
    options = Options(seconds=0.5, clients=2, size=512, interval=0.005, world="embedded")
    (result,) = asyncio.run(main_async(1, options))
    assert result.idle and result.loaded
    assert result.pictures  # the clients drew pictures while the loaded phase was measured
    assert all(latency > 0 for latency in [*result.idle, *result.loaded, *result.pictures])
    assert len(median_row([result])) == len(HEADERS)
