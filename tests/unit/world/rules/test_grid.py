"""Scene geometry rules: the scene rectangle and grid distances."""

from __future__ import annotations

import math
import random

import pytest

from vttrelay.world.rules import grid as g

SCENE = {
    "width": 2000,
    "height": 1400,
    "padding": 0.25,
    "grid": {"type": 1, "size": 100, "distance": 5, "units": "ft"},
}
SQUARE = g.grid_of(SCENE)


def test_grid_of_reads_the_scene_with_defaults() -> None:
    assert g.Grid(1, 100, 5, "ft") == SQUARE
    assert g.grid_of({}) == g.Grid(1, 100, 5, "ft")
    assert g.grid_of({"grid": {"size": 140, "distance": 1.5, "units": "m"}}) == g.Grid(
        1, 140, 1.5, "m"
    )


def test_scene_rect_excludes_the_padding_rounded_up_to_whole_cells() -> None:
    assert g.scene_rect(SCENE) == g.Rect(500, 400, 2000, 1400)
    rect = g.scene_rect({**SCENE, "width": 1050, "padding": 0.1})
    assert (rect.x, rect.y) == (200, 200)  # ceil(105 / 100) cells, ceil(140 / 100) cells
    assert g.scene_rect({**SCENE, "padding": 0}).x == 0


def test_measure_counts_each_diagonal_as_one_square_by_default() -> None:
    # the reference's capture: (0,0) -> (500,500) on a 100 px, 5 ft grid is 25 ft
    assert g.measure(SQUARE, (0, 0), (500, 500)) == 25
    assert g.measure(SQUARE, (0, 0), (700, 300)) == 35
    assert g.measure(SQUARE, (50, 50), (99, 99)) == 0  # the same cell
    assert g.measure(SQUARE, (700, 300), (0, 0)) == 35


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (g.EQUIDISTANT, 25),
        (g.ALTERNATING_1, 35),  # 5/10/5/10/5
        (g.ALTERNATING_2, 40),  # 10/5/10/5/10
        (g.APPROXIMATE, 37.5),
        (g.RECTILINEAR, 50),
        (g.EXACT, round(25 * math.sqrt(2), 2)),
    ],
)
def test_measure_with_each_diagonal_rule(rule: int, expected: float) -> None:
    assert g.measure(SQUARE, (0, 0), (500, 500), rule) == expected


def test_measure_mixed_straight_and_diagonal_steps_with_alternating_rule() -> None:
    # 6 cells right, 3 down: 3 straight + 3 diagonals costing 1, 2, 1
    assert g.measure(SQUARE, (0, 0), (600, 300), g.ALTERNATING_1) == 35


def test_measure_gridless_is_the_straight_line_in_units() -> None:
    gridless = g.Grid(g.GRIDLESS, 100, 5, "ft")
    assert g.measure(gridless, (0, 0), (300, 400)) == 25
    assert g.measure(gridless, (0, 0), (100, 100)) == 7.07


def test_measure_is_symmetric_and_never_shorter_than_the_longer_axis() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        a = (rng.uniform(0, 3000), rng.uniform(0, 3000))
        b = (rng.uniform(0, 3000), rng.uniform(0, 3000))
        for rule in g.DIAGONAL_RULES:
            d = g.measure(SQUARE, a, b, rule)
            assert d == g.measure(SQUARE, b, a, rule)
            cells = max(abs(b[0] // 100 - a[0] // 100), abs(b[1] // 100 - a[1] // 100))
            assert d >= cells * 5 - 1e-9
