"""Smoke test of `bench.gil_spans`: a picture drawn on a thread and one in the heavy-work
process, each while the probe thread records its wake-up delays; a row per place. A correctness
check of the script, not timing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

from bench.gil_spans import main, measure, row  # noqa: E402


@pytest.mark.parametrize("where", ["thread", "worker"])
def test_the_probe_runs_while_pictures_are_drawn(where: str) -> None:
    delays = asyncio.run(measure(where, pictures=2, size=256))
    assert delays and all(d > -0.001 for d in delays)
    cells = row(where, delays)
    assert cells[0] == where and int(cells[-1]) == len(delays)


def test_the_command_prints_both_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--pictures", "1", "--size", "128"]) == 0
    out = capsys.readouterr().out
    assert "| thread " in out and "| worker " in out
