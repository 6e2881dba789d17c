"""Issue 20 item 2: the scene picture's cost is bounded whatever the scene holds. A light of a
huge radius (stored before the world bounded radii) made Pillow draw for a minute; now a circle
that misses the picture or holds it whole is skipped, a huge one that crosses it is drawn as its
arc across the picture only, and a huge token's disc is clamped. The pictures stay right: the
arc lands where the circle crosses the picture."""

from __future__ import annotations

import math
import time
from typing import Any

from PIL import Image
from tests.support.scene_pictures import pixels, square_scene

from vttrelay.world.render import scene as scene_image
from vttrelay.world.render.scene import BIG, LIGHT_COLOR, MAX_ARC_POINTS

BASE = square_scene("#202020")


def light(x: float, y: float, dim: float) -> dict[str, Any]:
    return {"_id": "l", "x": x, "y": y, "config": {"dim": dim, "bright": 0}}


def px_radius(units: float) -> float:
    return units / 5 * 100


class Recorder:
    """An ImageDraw stand-in that records what it is asked to draw."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def ellipse(self, box: Any, **_: Any) -> None:
        self.calls.append(("ellipse", box))

    def line(self, points: Any, **_: Any) -> None:
        self.calls.append(("line", points))


def test_a_circle_holding_the_picture_or_missing_it_is_not_drawn() -> None:
    for cx, cy, r in ((500, 500, 10**9), (500, 500, 10**6), (-5000, 500, 100)):
        recorder = Recorder()
        scene_image._circle(recorder, cx, cy, r, (1000, 1000), LIGHT_COLOR, 2)
        assert recorder.calls == []


def test_a_huge_circle_across_the_picture_is_a_bounded_arc_on_the_circle() -> None:
    recorder = Recorder()
    cx, cy, r = -(10**7) + 500, 500, 10**7  # its rightmost point is the picture's centre
    scene_image._circle(recorder, cx, cy, r, (1000, 1000), LIGHT_COLOR, 2)
    [(kind, points)] = recorder.calls
    assert kind == "line" and 2 <= len(points) <= MAX_ARC_POINTS
    assert all(abs(math.hypot(x - cx, y - cy) - r) < 1e-3 * r for x, y in points)
    assert min(y for _, y in points) < 0 and max(y for _, y in points) > 1000  # it spans it


def test_a_huge_light_is_drawn_at_once_and_in_the_right_place() -> None:
    radius_units = 500_000  # 10,000,000 px: Pillow's own circle would take minutes
    scene = {**BASE, "lights": [light(500 - px_radius(radius_units), 500, radius_units)]}
    start = time.perf_counter()
    image = pixels(scene)
    assert time.perf_counter() - start < 2.0
    lit = Image.new("RGB", (1, 1), LIGHT_COLOR).getpixel((0, 0))
    for y in (0, 500, 999):  # the arc, near x = 500 where it crosses the picture
        assert lit in [image.getpixel((x, y)) for x in range(497, 502)], y
    assert image.getpixel((300, 500)) == (0x20, 0x20, 0x20)


def test_a_light_around_the_whole_scene_draws_nothing_and_costs_nothing() -> None:
    start = time.perf_counter()
    with_light = pixels({**BASE, "lights": [light(500, 500, 50_000)]})  # 10^6 px: was 60 s
    assert time.perf_counter() - start < 2.0
    assert with_light.tobytes() == pixels(BASE).tobytes()


def test_a_huge_token_is_clamped_and_one_off_the_picture_skipped() -> None:
    # 10^8 px wide, centred on the picture: Pillow's own disc would take minutes
    huge = {"_id": "t", "x": 500 - 5e7, "y": 500 - 5e7, "width": 10**6, "height": 10**6}
    huge["disposition"] = -1
    far = {**huge, "_id": "u", "x": 10**8, "width": 1, "height": 1}
    start = time.perf_counter()
    image = pixels({**BASE, "tokens": [huge, far]})
    assert time.perf_counter() - start < 2.0
    for point in ((0, 0), (500, 500), (999, 999)):  # inside the disc, clamped around its centre
        assert image.getpixel(point) == (0xE7, 0x21, 0x24)
    assert BIG >= 8 * scene_image.MAX_SIDE  # so that a clamped disc still covers the picture


def test_the_checkpoint_runs_between_documents() -> None:
    seen: list[int] = []
    scene = {**BASE, "lights": [light(1, 1, 1)] * 3, "walls": [{"c": [0, 0, 1, 1]}] * 2}
    scene_image.render(scene, checkpoint=lambda: seen.append(1))
    assert len(seen) == 5
