"""Pure numbers and text: percentiles, median/min/max over runs, and the printed tables."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(values: Sequence[float], pct: float) -> float:
    """The `pct` percentile (0-100) by the nearest-rank method; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class Spread:
    """Median, min and max of one metric over repeated runs."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        real = [v for v in values if not math.isnan(v)]
        if not real:
            return cls(math.nan, math.nan, math.nan)
        return cls(statistics.median(real), min(real), max(real))


def fmt_number(value: float, digits: int = 1) -> str:
    """A compact number: thousands separators for big values, `digits` decimals for small."""
    if math.isnan(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value == int(value) and digits == 0:
        return str(int(value))
    return f"{value:.{digits}f}"


def fmt_spread(spread: Spread, digits: int = 1) -> str:
    """`median (min-max)`, or just the value when all runs agree."""
    med = fmt_number(spread.median, digits)
    if spread.low == spread.high or math.isnan(spread.low):
        return med
    return f"{med} ({fmt_number(spread.low, digits)}-{fmt_number(spread.high, digits)})"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with aligned columns (readable on a terminal, pasteable in RESULTS.md)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def mib(nbytes: float) -> float:
    return nbytes / (1024 * 1024)


def kib(nbytes: float) -> float:
    return nbytes / 1024
