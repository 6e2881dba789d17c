"""Scene geometry: the scene's rectangle on the canvas and distances measured on the grid with
the tabletop's diagonal rules.

Pure functions over a Scene document's `width`, `height`, `padding` and `grid` (`{type, size,
distance, units}`). Positions are canvas pixels, as the tabletop stores them: the canvas is the
scene plus `padding` on every side, so the scene's own rectangle starts at (padX, padY).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from vttrelay.world.rules.paths import as_number

GRIDLESS: Final = 0
SQUARE: Final = 1

# The tabletop's `core.gridDiagonals` setting (CONST.GRID_DIAGONALS). dnd5e's rule, each diagonal
# step costing one square (5 ft on a 5-ft grid), is EQUIDISTANT, the default.
EQUIDISTANT: Final = 0
EXACT: Final = 1
APPROXIMATE: Final = 2
RECTILINEAR: Final = 3
ALTERNATING_1: Final = 4  # 5/10/5: every second diagonal costs two squares
ALTERNATING_2: Final = 5  # 10/5/10
DIAGONAL_RULES: Final = (
    EQUIDISTANT,
    EXACT,
    APPROXIMATE,
    RECTILINEAR,
    ALTERNATING_1,
    ALTERNATING_2,
)

DEFAULT_SIZE: Final = 100  # pixels per cell
DEFAULT_DISTANCE: Final = 5  # feet per cell


@dataclass(frozen=True)
class Grid:
    type: int
    size: float  # pixels per cell
    distance: float  # scene units per cell
    units: str


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float


def grid_of(scene: dict[str, Any]) -> Grid:
    """The scene's grid, with the tabletop's defaults for missing fields (units `ft`)."""
    grid = scene.get("grid")
    grid = grid if isinstance(grid, dict) else {}
    size = as_number(grid.get("size"), DEFAULT_SIZE) or DEFAULT_SIZE
    units = grid.get("units")
    return Grid(
        type=int(as_number(grid.get("type"), SQUARE)),
        size=size,
        distance=as_number(grid.get("distance"), DEFAULT_DISTANCE),
        units=units if isinstance(units, str) and units else "ft",
    )


def scene_rect(scene: dict[str, Any]) -> Rect:
    """The scene's own rectangle on the canvas (the map, without its padding)."""
    size = grid_of(scene).size
    width = as_number(scene.get("width"), 4000)
    height = as_number(scene.get("height"), 3000)
    padding = as_number(scene.get("padding"), 0.25)
    pad_x = math.ceil(padding * width / size) * size
    pad_y = math.ceil(padding * height / size) * size
    return Rect(pad_x, pad_y, width, height)


def diagonal_cost(diagonals: int, rule: int) -> float:
    """How many cells `diagonals` diagonal steps cost under a diagonal rule."""
    if rule == EXACT:
        return diagonals * math.sqrt(2)
    if rule == APPROXIMATE:
        return diagonals * 1.5
    if rule == RECTILINEAR:
        return diagonals * 2
    if rule == ALTERNATING_1:
        return diagonals + diagonals // 2
    if rule == ALTERNATING_2:
        return diagonals + (diagonals + 1) // 2
    return diagonals  # EQUIDISTANT


def measure(
    grid: Grid,
    origin: tuple[float, float],
    target: tuple[float, float],
    rule: int = EQUIDISTANT,
) -> float:
    """The distance in scene units from origin to target (canvas pixels).

    Square grid: the cells holding the two points, counted in straight and diagonal steps
    with `rule` (the tabletop's `measurePath`). Gridless and hex grids (not modelled here): the
    straight line between the points, in cells of the grid's size.
    """
    if grid.type != SQUARE:
        pixels = math.hypot(target[0] - origin[0], target[1] - origin[1])
        return _tidy(pixels / grid.size * grid.distance)
    di = abs(math.floor(target[0] / grid.size) - math.floor(origin[0] / grid.size))
    dj = abs(math.floor(target[1] / grid.size) - math.floor(origin[1] / grid.size))
    diagonals = min(di, dj)
    straight = max(di, dj) - diagonals
    return _tidy((straight + diagonal_cost(diagonals, rule)) * grid.distance)


def _tidy(value: float) -> float:
    """Whole numbers as ints (25, not 25.0); others rounded to 2 decimals, as the ruler shows."""
    rounded = round(value, 2)
    return int(rounded) if float(rounded).is_integer() else rounded
