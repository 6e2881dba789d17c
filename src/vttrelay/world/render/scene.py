"""A picture of a scene, drawn with Pillow: what the embedded world shows for GET /scene/image.

The embedded world has no canvas, so it draws what it knows of the scene: the scene's background
colour, its background image when the file is in the world's file store (`background`, stretched
over the scene rectangle), its grid (square grids; `showGrid`), the walls (doors in their own
colour), the lights' bright and dim radii, and the tokens as ringed discs in their disposition's
colour with their short label (`token_labels`: "EQ", "G2", "Wo"; bold DejaVu sized from the disc,
dark or light against its colour, none on a disc too small to read), or their image from the
file store cut to a disc (`images`: src -> file; `hideOverlays` leaves out walls and lights).
The picture covers the scene rectangle (`rules.grid.scene_rect`: the scene without its
padding), scaled to the requested width and/or height keeping the aspect ratio, at most
`MAX_SIDE` pixels a side.

Its cost is bounded whatever the scene holds (scenes written before the world bounded their
numbers included): Pillow's circle costs time in proportion to its radius (a light 10^6 pixels
wide took a minute), so a light's circle that misses the picture, or holds it whole, is not
drawn, and one wider than `BIG` pixels is drawn as the arc that crosses the picture, a point
every 2 pixels (at most `MAX_ARC_POINTS`); a token's disc is drawn only if its box meets the
picture, at most `BIG` pixels a side around its centre, its label at most 3 characters of at
most `LABEL_MAX_PX` pixels. Lines are clipped by Pillow itself.
The caller's `checkpoint` runs between documents (the action's time limit).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from vttrelay.world.render.fonts import font
from vttrelay.world.rules import grid as grid_rules
from vttrelay.world.rules.canvas import numbered_names

MAX_SIDE: Final = 4096
FORMATS: Final = {"png": ("PNG", "image/png"), "jpeg": ("JPEG", "image/jpeg")}
# Token disc colours by disposition: secret, hostile, neutral, friendly (the tabletop's).
DISPOSITION_COLORS: Final = {-2: "#7f3fbf", -1: "#e72124", 0: "#f1d836", 1: "#43dfdf"}
WALL_COLOR: Final = "#ffffff"
DOOR_COLOR: Final = "#3fa9f5"
LIGHT_COLOR: Final = "#ffd27f"
BIG: Final = 8 * MAX_SIDE  # pixels: wider circles are drawn as their arc across the picture
MAX_ARC_POINTS: Final = 20_000
RING_COLOR: Final = "#1b1b1f"  # the ring around a token's disc, so it stands out from the grid
RING_MAX_PX: Final = 6
LABEL_DARK: Final = "#111111"
LABEL_LIGHT: Final = "#ffffff"
LABEL_MIN_PX: Final = 9  # a label smaller than this is not drawn (unreadable)
LABEL_MAX_PX: Final = 160  # nor larger than this, however large the disc
MAX_NAME: Final = 200  # characters of a token's name read for its label


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


def _circle(
    draw: Any, cx: float, cy: float, r: float, size: tuple[int, int], color: str, width: int
) -> None:
    """The outline of a circle, at a cost bounded by the picture's size, not the radius."""
    w, h = size
    corners = [(x, y) for x in (0, w) for y in (0, h)]
    near = math.hypot(cx - min(max(cx, 0), w), cy - min(max(cy, 0), h))
    far = max(math.hypot(cx - x, cy - y) for x, y in corners)
    if r + width < near or r - width > far:
        return  # wholly outside the picture, or the picture wholly inside the circle
    if r <= BIG:
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=color, width=width)
        return
    # Here the centre lies outside the picture (else r > far): the picture spans less than a
    # half-turn seen from it, and only the arc in that span can show.
    mid = math.atan2(h / 2 - cy, w / 2 - cx)
    turns = [(math.atan2(y - cy, x - cx) - mid + math.pi) % math.tau - math.pi for x, y in corners]
    pad = width / r
    lo, hi = mid + min(turns) - pad, mid + max(turns) + pad
    n = min(MAX_ARC_POINTS, max(2, math.ceil((hi - lo) * r / 2)))
    step = (hi - lo) / (n - 1)
    points = [
        (cx + r * math.cos(lo + i * step), cy + r * math.sin(lo + i * step)) for i in range(n)
    ]
    draw.line(points, fill=color, width=width)


def _meets(box: tuple[float, float, float, float], size: tuple[int, int]) -> bool:
    x0, y0, x1, y1 = box
    return x1 >= 0 and y1 >= 0 and x0 <= size[0] and y0 <= size[1]


def token_label(name: Any) -> str:
    """The short label drawn on a token with no image: the initials of a name of several words,
    its number kept ("Elara Quill" -> "EQ", "Goblin 2" -> "G2"), the first two letters of a
    single word ("Wolf" -> "Wo"); "" for no name."""
    words = str(name or "")[:MAX_NAME].split()
    if not words:
        return ""
    first, last = words[0], words[-1]
    if len(words) == 1:
        return first[:1].upper() + first[1:2].lower()
    if last.isdecimal():
        return first[:1].upper() + last[:2]
    return (first[:1] + last[:1]).upper()


def token_labels(tokens: list[Any]) -> list[str]:
    """Each token's label (`token_label`), tokens that share a name numbered in scene order as
    the dashboard and the MCP tools name them (`rules.canvas.numbered_names`: "Goblin 1",
    "Goblin 2" -> "G1", "G2")."""
    names = [str(t.get("name") or "")[:MAX_NAME] if isinstance(t, dict) else "" for t in tokens]
    return [token_label(name) for name in numbered_names(names)]


def _label(draw: Any, text: str, centre: tuple[float, float], disc: float, color: str) -> None:
    """`text` on a disc `disc` pixels wide of `color`: in bold DejaVu sized from the disc, dark
    on a light disc and light on a dark one, outlined in the other; nothing if it would be too
    small to read."""
    from PIL import ImageColor

    if not text:
        return
    size = min(LABEL_MAX_PX, math.floor(min(disc * 0.42, disc * 0.2 + 24)))  # large: smaller
    if size < LABEL_MIN_PX:
        return
    length = float(font("bold", size).getlength(text))
    if length > disc * 0.7:  # a wide label ("G12", "MW") shrinks to fit inside the disc
        size = math.floor(size * disc * 0.7 / length)
        if size < LABEL_MIN_PX:
            return
    r, g, b = ImageColor.getrgb(color)[:3]
    light = (0.299 * r + 0.587 * g + 0.114 * b) / 255 > 0.55
    ink, edge = (LABEL_DARK, LABEL_LIGHT) if light else (LABEL_LIGHT, LABEL_DARK)
    draw.text(
        centre,
        text,
        fill=ink,
        font=font("bold", size),
        anchor="mm",
        stroke_width=max(1, min(4, size // 12)),
        stroke_fill=edge,
    )


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
    checkpoint: Callable[[], None] = lambda: None,
) -> Picture:
    """Draw the scene. `fmt` is "png" or "jpeg" (`quality` 0-1 or 1-100 for jpeg); `background`
    and `images` are files of the world's store (see the module docstring). `checkpoint` is
    called between the documents drawn (it raises to stop the drawing)."""
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
            checkpoint()
            if not isinstance(light, dict) or light.get("hidden"):
                continue
            x, y = at(light.get("x"), light.get("y"))
            config = light.get("config") or {}
            config = config if isinstance(config, dict) else {}
            for radius, width_px in ((config.get("dim"), 1), (config.get("bright"), 2)):
                r = _number(radius, 0) / (grid.distance or 1) * size * scale
                if 0 < r < math.inf:
                    _circle(draw, x, y, r, image.size, LIGHT_COLOR, width_px)
        for wall in scene.get("walls") or ():
            checkpoint()
            c = wall.get("c") if isinstance(wall, dict) else None
            if isinstance(c, list) and len(c) == 4:
                color = DOOR_COLOR if wall.get("door") else WALL_COLOR
                draw.line([at(c[0], c[1]), at(c[2], c[3])], fill=color, width=3)
    tokens = list(scene.get("tokens") or ())
    for token, label in zip(tokens, token_labels(tokens), strict=True):
        checkpoint()
        if not isinstance(token, dict) or token.get("hidden"):
            continue
        x, y = at(token.get("x"), token.get("y"))
        w = _number(token.get("width"), 1) * size * scale
        h = _number(token.get("height"), 1) * size * scale
        if w < 4 or h < 4 or not _meets((x, y, x + w, y + h), image.size):
            continue  # too small to show, or off the picture
        if w > BIG or h > BIG:  # clamped around its centre
            x, y = x + w / 2 - min(w, BIG) / 2, y + h / 2 - min(h, BIG) / 2
            w, h = min(w, BIG), min(h, BIG)
        color = DISPOSITION_COLORS.get(int(_number(token.get("disposition"), 0)), "#f1d836")
        ring = max(1, min(RING_MAX_PX, round(min(w, h) / 30)))
        draw.ellipse([x + 1, y + 1, x + w - 1, y + h - 1], fill=RING_COLOR)
        draw.ellipse([x + 1 + ring, y + 1 + ring, x + w - 1 - ring, y + h - 1 - ring], fill=color)
        texture = token.get("texture")
        src = texture.get("src") if isinstance(texture, dict) else None
        fits = w <= MAX_SIDE and h <= MAX_SIDE  # a larger token is its colour disc only
        path = (images or {}).get(str(src)) if fits else None
        picture = open_image(path, (round(w) - 6, round(h) - 6))
        if picture is not None:
            mask = Image.new("L", picture.size, 0)
            ImageDraw.Draw(mask).ellipse([0, 0, picture.width - 1, picture.height - 1], fill=255)
            image.paste(picture, (round(x) + 3, round(y) + 3), mask)
            continue
        _label(draw, label, (x + w / 2, y + h / 2), min(w, h), color)
    buffer = io.BytesIO()
    if pil_format == "JPEG":
        q = _number(quality, 0.92)
        image.save(buffer, "JPEG", quality=max(1, min(95, round(q * 100 if q <= 1 else q))))
    else:
        image.save(buffer, "PNG")
    return Picture(buffer.getvalue(), mime_type, out_w, out_h)
