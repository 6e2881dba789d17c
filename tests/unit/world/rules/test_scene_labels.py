"""The scene picture's tokens with no image: a disc in the disposition's colour with a dark ring
around it (it stands out from the grid) and the token's short label on it, dark on a light disc
and light on a dark one, sized from the disc and left out when the disc is too small to read."""

from __future__ import annotations

import time
from typing import Any

from PIL import Image, ImageColor
from tests.support.scene_pictures import pixels, square_scene

from vttrelay.world.render.scene import (
    DISPOSITION_COLORS,
    RING_COLOR,
    token_label,
    token_labels,
)

BASE = square_scene("#999999")


def token(name: str, x: float, y: float, disposition: int = 1, size: float = 1) -> dict[str, Any]:
    return {"name": name, "x": x, "y": y, "width": size, "height": size, "disposition": disposition}


def picture(tokens: list[dict[str, Any]], **options: Any) -> Image.Image:
    return pixels({**BASE, "tokens": tokens}, **options)


def rgb(color: str) -> tuple[int, int, int]:
    r, g, b = ImageColor.getrgb(color)[:3]
    return r, g, b


def inks(image: Image.Image, box: tuple[int, int, int, int]) -> dict[str, int]:
    """How many pixels of `box` are near black and near white: the label's ink is the more of
    the two, its outline the other."""
    histogram = image.crop(box).convert("L").histogram()
    return {"dark": sum(histogram[:60]), "light": sum(histogram[231:])}


def test_labels_are_initials_numbers_or_first_letters() -> None:
    assert token_label("Elara Quill") == "EQ"
    assert token_label("brann  stoneheart") == "BS"
    assert token_label("Sir Pip of the Tea Leaf") == "SL"  # first and last word
    assert token_label("Goblin 2") == "G2"
    assert token_label("Goblin 12") == "G12"
    assert token_label("Wolf") == "Wo"
    assert token_label("ORC") == "Or"
    assert token_label("") == token_label(None) == token_label("   ") == ""
    assert token_label(12) == "12"  # a name stored as a number still labels
    start = time.perf_counter()
    assert token_label("x" * 10_000_000 + " y") == "Xx"  # only the name's first characters
    assert time.perf_counter() - start < 0.5


def test_tokens_sharing_a_name_are_numbered_in_scene_order() -> None:
    tokens = [
        {"name": "Goblin"},
        {"name": "Wolf"},
        {"name": "goblin"},
        "not a token",
        {"name": "Brann Stoneheart"},
        {"name": "Goblin"},
        {},
        {"name": ""},
    ]
    labels = token_labels(tokens)
    assert labels == ["G1", "Wo", "G2", "", "BS", "G3", "", ""]
    image = picture([token("Goblin", 100, 100, 0), token("Goblin", 300, 100, 0)])
    first, second = image.crop((100, 100, 200, 200)), image.crop((300, 100, 400, 200))
    assert first.tobytes() != second.tobytes()  # "G1" and "G2", not two "Go"


def test_a_friendly_disc_has_a_ring_and_a_dark_label_a_hostile_one_a_light_label() -> None:
    image = picture([token("Elara Quill", 100, 100, 1), token("Goblin", 300, 100, -1)])
    friendly, hostile = rgb(DISPOSITION_COLORS[1]), rgb(DISPOSITION_COLORS[-1])
    assert image.getpixel((115, 150)) == friendly  # the disc, left of its label
    assert image.getpixel((150, 110)) == friendly  # and above it
    assert image.getpixel((102, 150)) == rgb(RING_COLOR)  # its ring
    assert image.getpixel((150, 102)) == rgb(RING_COLOR)
    assert image.getpixel((95, 150)) == rgb("#999999")  # outside it
    elara = inks(image, (125, 135, 175, 165))  # the label's middle
    goblin = inks(image, (325, 135, 375, 165))
    assert elara["dark"] > 150 and elara["dark"] > elara["light"], elara
    assert goblin["light"] > 150 and goblin["light"] > goblin["dark"], goblin
    assert image.getpixel((315, 150)) == hostile


def test_the_label_sizes_with_the_disc_and_goes_when_too_small() -> None:
    big = picture([token("Brann Stoneheart", 100, 100, size=4)])  # a 400 px disc
    small = picture([token("Brann Stoneheart", 100, 100)], width=200)  # a 20 px disc
    big_ink = inks(big, (100, 100, 500, 500))["dark"]
    normal_ink = inks(picture([token("Brann Stoneheart", 100, 100)]), (100, 100, 200, 200))
    assert big_ink > 4 * normal_ink["dark"] > 0  # its letters about 2.5 times as tall
    assert big.getpixel((170, 300)) == rgb(DISPOSITION_COLORS[1])  # it stays inside the disc
    # 20 px: the ring and the disc, no label (a 8 px text cannot be read)
    assert inks(small, (25, 25, 36, 36))["dark"] == 0
    assert small.getpixel((30, 30)) == rgb(DISPOSITION_COLORS[1])


def test_a_wide_label_shrinks_to_fit_its_disc_and_a_huge_disc_stays_cheap() -> None:
    image = picture([token("Goblin 12", 100, 100, -1)])
    hostile = rgb(DISPOSITION_COLORS[-1])
    for x in (112, 188):  # inside the disc, beside the label: the label fits within the disc
        assert image.getpixel((x, 150)) == hostile, x
    huge = token("Ogre King", 500 - 5e7, 500 - 5e7, -1, size=10**6)
    start = time.perf_counter()
    picture(
        [huge, *[token(f"Goblin {i}", 100 * (i % 10), 100 * (i // 10), -1) for i in range(100)]]
    )
    assert time.perf_counter() - start < 2.0
