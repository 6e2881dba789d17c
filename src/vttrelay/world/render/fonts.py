"""The fonts the world's pictures are drawn with (DejaVu, Pillow's own font where it is missing):
the character sheet's text and the scene's token labels."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Final

FONT_DIR: Final = Path("/usr/share/fonts/truetype/dejavu")
FONTS: Final = {
    "title": "DejaVuSerif-Bold.ttf",
    "serif": "DejaVuSerif.ttf",
    "bold": "DejaVuSans-Bold.ttf",
    "sans": "DejaVuSans.ttf",
    "narrow": "DejaVuSansCondensed.ttf",
}


@functools.lru_cache(maxsize=64)
def font(kind: str, size: int) -> Any:
    """A TrueType font of the family `kind` at `size` px (DejaVu; Pillow's own otherwise)."""
    from PIL import ImageFont

    try:
        return ImageFont.truetype(str(FONT_DIR / FONTS[kind]), size)
    except OSError:
        return ImageFont.load_default(size)
