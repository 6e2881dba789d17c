"""The scene picture's unit tests' scene: 1000 x 1000 px, 100 px cells of 5 ft, no padding, so
scene pixels are picture pixels at scale 1; `pixels` draws a scene (no grid) as RGB."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from vttrelay.world.render import scene as scene_image


def square_scene(background: str) -> dict[str, Any]:
    return {
        "width": 1000,
        "height": 1000,
        "padding": 0,
        "grid": {"type": 1, "size": 100, "distance": 5},
        "backgroundColor": background,
    }


def pixels(scene: dict[str, Any], **options: Any) -> Image.Image:
    picture = scene_image.render(scene, show_grid=False, **options)
    return Image.open(io.BytesIO(picture.data)).convert("RGB")
