"""A picture of a scene, drawn with Pillow: what the embedded world shows for GET /scene/image.

The embedded world has no canvas, so it draws what it knows of the scene: the scene's background
colour, its background image when the file is in the world's file store (`background`, stretched
over the scene rectangle), its grid (square grids; `showGrid`), the walls (doors in their own
colour), the lights' bright and dim radii, and the tokens as discs in their disposition's colour
with their initial, or their image from the file store cut to a disc (`images`: src -> file;
`hideOverlays` leaves out walls and lights). The picture covers the scene
rectangle (`rules.grid.scene_rect`: the scene without its padding), scaled to the requested
width and/or height keeping the aspect ratio, at most `MAX_SIDE` pixels a side.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from vttrelay.world.rules import grid as grid_rules

MAX_SIDE: Final = 4096
FORMATS: Final = {"png": ("PNG", "image/png"), "jpeg": ("JPEG", "image/jpeg")}
# Token disc colours by disposition: secret, hostile, neutral, friendly (the tabletop's).
DISPOSITION_COLORS: Final = {-2: "#7f3fbf", -1: "#e72124", 0: "#f1d836", 1: "#43dfdf"}
WALL_COLOR: Final = "#ffffff"
DOOR_COLOR: Final = "#3fa9f5"
LIGHT_COLOR: Final = "#ffd27f"


@dataclass(frozen=True)
class Picture:
    data: bytes
    mime_type: str
    width: int
    height: int

    def data_url(self) -> str:
        return f"data:{self.mime_type};base64,{base64.b64encode(self.data).decode()}"


def _number(value: Any, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return default


def output_size(scene: dict[str, Any], width: Any, height: Any) -> tuple[int, int, float]:
    """(width, height, scale) of the picture: the scene's size, or the requested width and/or
    height keeping the aspect ratio, bounded by MAX_SIDE."""
    scene_w = max(1.0, _number(scene.get("width"), 4000))
    scene_h = max(1.0, _number(scene.get("height"), 3000))
    want_w, want_h = _number(width, 0), _number(height, 0)
    if want_w > 0 and want_h > 0:
        scale = min(want_w / scene_w, want_h / scene_h)
    elif want_w > 0:
        scale = want_w / scene_w
    elif want_h > 0:
        scale = want_h / scene_h
    else:
        scale = 1.0
    scale = min(scale, MAX_SIDE / scene_w, MAX_SIDE / scene_h)
    return max(1, round(scene_w * scale)), max(1, round(scene_h * scale)), scale


def token_sources(scene: dict[str, Any]) -> list[str]:
    """The image `src` of each token (`texture.src`)."""
    found = []
    for token in scene.get("tokens") or ():
        texture = token.get("texture") if isinstance(token, dict) else None
        src = texture.get("src") if isinstance(texture, dict) else None
        if isinstance(src, str) and src:
            found.append(src)
    return found


def open_image(path: Path | None, size: tuple[int, int]) -> Any:
    """The image file at `path` scaled to `size` (RGBA), or None if it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    if path is None or size[0] < 1 or size[1] < 1:
        return None
    try:
        with Image.open(path) as source:
            if source.width * source.height > MAX_SIDE * MAX_SIDE * 4:
                return None  # a decompression bomb is not drawn
            source.draft("RGB", size)  # JPEG: decode at a reduced size
            return source.convert("RGBA").resize(size)
    except (OSError, UnidentifiedImageError, ValueError):
        return None


def render(
    scene: dict[str, Any],
    *,
    fmt: str = "png",
    quality: Any = None,
    width: Any = None,
    height: Any = None,
    show_grid: bool = True,
    hide_overlays: bool = False,
    background: Path | None = None,
    images: Mapping[str, Path] | None = None,
) -> Picture:
    """Draw the scene. `fmt` is "png" or "jpeg" (`quality` 0-1 or 1-100 for jpeg); `background`
    and `images` are files of the world's store (see the module docstring)."""
    from PIL import Image, ImageDraw  # loaded when a picture is drawn, not at world start-up

    pil_format, mime_type = FORMATS[fmt]
    out_w, out_h, scale = output_size(scene, width, height)
    rect = grid_rules.scene_rect(scene)
    ox, oy = rect.x, rect.y
    image = Image.new("RGB", (out_w, out_h), str(scene.get("backgroundColor") or "#999999"))
    backdrop = open_image(background, (out_w, out_h))
    if backdrop is not None:
        image.paste(backdrop, (0, 0), backdrop)
    draw = ImageDraw.Draw(image)

    def at(x: Any, y: Any) -> tuple[float, float]:
        return ((_number(x, 0) - ox) * scale, (_number(y, 0) - oy) * scale)

    grid = grid_rules.grid_of(scene)
    size = grid.size
    if show_grid and grid.type == grid_rules.SQUARE and size * scale >= 2:
        step = size * scale
        color = str((scene.get("grid") or {}).get("color") or "#000000")
        for i in range(1, math.ceil(out_w / step)):
            draw.line([(i * step, 0), (i * step, out_h)], fill=color)
        for i in range(1, math.ceil(out_h / step)):
            draw.line([(0, i * step), (out_w, i * step)], fill=color)
    if not hide_overlays:
        for light in scene.get("lights") or ():
            if not isinstance(light, dict) or light.get("hidden"):
                continue
            x, y = at(light.get("x"), light.get("y"))
            config = light.get("config") or {}
            for radius, width_px in ((config.get("dim"), 1), (config.get("bright"), 2)):
                r = _number(radius, 0) / (grid.distance or 1) * size * scale
                if r > 0:
                    draw.ellipse([x - r, y - r, x + r, y + r], outline=LIGHT_COLOR, width=width_px)
        for wall in scene.get("walls") or ():
            c = wall.get("c") if isinstance(wall, dict) else None
            if isinstance(c, list) and len(c) == 4:
                color = DOOR_COLOR if wall.get("door") else WALL_COLOR
                draw.line([at(c[0], c[1]), at(c[2], c[3])], fill=color, width=3)
    for token in scene.get("tokens") or ():
        if not isinstance(token, dict) or token.get("hidden"):
            continue
        x, y = at(token.get("x"), token.get("y"))
        w = _number(token.get("width"), 1) * size * scale
        h = _number(token.get("height"), 1) * size * scale
        color = DISPOSITION_COLORS.get(int(_number(token.get("disposition"), 0)), "#f1d836")
        draw.ellipse([x + 2, y + 2, x + w - 2, y + h - 2], fill=color, outline="#000000")
        texture = token.get("texture")
        src = texture.get("src") if isinstance(texture, dict) else None
        picture = open_image((images or {}).get(str(src)), (round(w) - 6, round(h) - 6))
        if picture is not None:
            mask = Image.new("L", picture.size, 0)
            ImageDraw.Draw(mask).ellipse([0, 0, picture.width - 1, picture.height - 1], fill=255)
            image.paste(picture, (round(x) + 3, round(y) + 3), mask)
            continue
        name = str(token.get("name") or "")
        if name and w >= 12:
            draw.text((x + w / 2, y + h / 2), name[0].upper(), fill="#000000", anchor="mm")
    buffer = io.BytesIO()
    if pil_format == "JPEG":
        q = _number(quality, 0.92)
        image.save(buffer, "JPEG", quality=max(1, min(95, round(q * 100 if q <= 1 else q))))
    else:
        image.save(buffer, "PNG")
    return Picture(buffer.getvalue(), mime_type, out_w, out_h)
