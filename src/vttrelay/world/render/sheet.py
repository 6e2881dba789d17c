"""A character sheet as a picture, drawn with Pillow: what the embedded world answers for
GET /sheet (files-sheet-sessions §2).

`render(sheet, fmt, quality, scale, portrait)` draws a `sheet_data.SheetData` 1000 px wide (times
`scale`, 0.25 to 3): a header band with the portrait (the actor's image from the world's file
store, else a monogram) and the name, class and level, origin; badges for armor class, hit points
(with a bar), speed, initiative, proficiency and passive perception; the six abilities with
modifier, score and save; then skills and proficiencies on the left and attacks, spellcasting
with slot pips, spells by level, features, inventory with currency and conditions on the right.
A LIMITED sheet has the header alone. The height follows the content: the layout runs once to
measure (`Pen` with no image) and once to draw. Pure CPU work: the action runs it in a thread.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from vttrelay.world.render.fonts import font
from vttrelay.world.render.scene import FORMATS, Picture, open_image
from vttrelay.world.render.sheet_data import SheetData, signed

WIDTH: Final = 1000
MARGIN: Final = 32
MIN_SCALE: Final = 0.25
MAX_SCALE: Final = 3.0
PARCHMENT: Final = "#f6eedb"
INK: Final = "#2b2118"
MUTED: Final = "#7a6a55"
CRIMSON: Final = "#7c1d1d"
CRIMSON_DARK: Final = "#4e1010"
GOLD: Final = "#c9a24a"
CREAM: Final = "#fff9ec"
RULE: Final = "#d8c7a3"
COINS: Final = {
    "pp": "#dfe3e8",
    "gp": "#e0b83c",
    "ep": "#a9c0c9",
    "sp": "#c4c4c4",
    "cp": "#c27a44",
}
ABILITY_NAMES: Final = {
    "str": "STR",
    "dex": "DEX",
    "con": "CON",
    "int": "INT",
    "wis": "WIS",
    "cha": "CHA",
}


class Pen:
    """Draws in sheet coordinates (1000 wide), scaled by `scale`; with no image it only
    measures (the first layout pass)."""

    def __init__(self, image: Any, scale: float) -> None:
        from PIL import ImageDraw

        self.image = image
        self.scale = scale
        self.draw = ImageDraw.Draw(image) if image is not None else None

    def s(self, value: float) -> int:
        return round(value * self.scale)

    def font(self, kind: str, size: float) -> Any:
        return font(kind, max(6, self.s(size)))

    def width(self, text: str, kind: str, size: float) -> float:
        return float(self.font(kind, size).getlength(text)) / self.scale

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        kind: str = "sans",
        size: float = 16,
        fill: str = INK,
        anchor: str = "la",
    ) -> None:
        if self.draw is not None and text:
            self.draw.text(
                (self.s(xy[0]), self.s(xy[1])),
                text,
                font=self.font(kind, size),
                fill=fill,
                anchor=anchor,
            )

    def box(
        self,
        rect: tuple[float, float, float, float],
        fill: str | None = None,
        outline: str | None = None,
        width: float = 1,
        radius: float = 0,
    ) -> None:
        if self.draw is not None:
            coords = [self.s(v) for v in rect]
            line = max(1, self.s(width)) if outline else 0
            if radius:
                self.draw.rounded_rectangle(
                    coords, self.s(radius), fill=fill, outline=outline, width=line
                )
            else:
                self.draw.rectangle(coords, fill=fill, outline=outline, width=line)

    def circle(
        self, center: tuple[float, float], r: float, fill: str | None, outline: str | None = None
    ) -> None:
        if self.draw is not None:
            x, y = center
            coords = [self.s(x - r), self.s(y - r), self.s(x + r), self.s(y + r)]
            self.draw.ellipse(coords, fill=fill, outline=outline, width=max(1, self.s(1.5)))

    def polygon(self, points: list[tuple[float, float]], fill: str, outline: str) -> None:
        if self.draw is not None:
            scaled = [(self.s(x), self.s(y)) for x, y in points]
            self.draw.polygon(scaled, fill=fill, outline=outline, width=max(1, self.s(2)))

    def line(self, a: tuple[float, float], b: tuple[float, float], fill: str = RULE) -> None:
        if self.draw is not None:
            self.draw.line(
                [(self.s(a[0]), self.s(a[1])), (self.s(b[0]), self.s(b[1]))],
                fill=fill,
                width=max(1, self.s(1)),
            )

    def wrap(self, text: str, kind: str, size: float, width: float) -> list[str]:
        """`text` in lines at most `width` wide (words kept whole, very long ones cut)."""
        lines: list[str] = []
        current = ""
        for word in text.split(" "):
            trial = f"{current} {word}".strip()
            if self.width(trial, kind, size) <= width or not current:
                current = trial
            else:
                lines.append(current)
                current = word
            while self.width(current, kind, size) > width and len(current) > 1:
                cut = max(1, int(len(current) * width / self.width(current, kind, size)) - 1)
                lines.append(current[:cut])
                current = current[cut:]
        if current:
            lines.append(current)
        return lines

    def paragraph(
        self,
        x: float,
        y: float,
        text: str,
        width: float,
        kind: str = "sans",
        size: float = 15,
        fill: str = INK,
    ) -> float:
        """Wrapped text from (x, y); returns the y below it."""
        for line in self.wrap(text, kind, size, width):
            self.text((x, y), line, kind, size, fill)
            y += size * 1.35
        return y


def _header(pen: Pen, sheet: SheetData, portrait: Any) -> float:
    height = 176.0
    pen.box((0, 0, WIDTH, height), fill=CRIMSON)
    pen.box((0, height - 8, WIDTH, height), fill=CRIMSON_DARK)
    pen.line((0, height), (WIDTH, height), GOLD)
    cx, cy, r = MARGIN + 66, 86.0, 66.0
    pen.circle((cx, cy), r + 5, GOLD)
    if portrait is not None and pen.image is not None:
        from PIL import Image, ImageDraw

        side = pen.s(2 * r)
        picture = portrait.resize((side, side))
        mask = Image.new("L", (side, side), 0)
        ImageDraw.Draw(mask).ellipse([0, 0, side - 1, side - 1], fill=255)
        pen.image.paste(picture, (pen.s(cx - r), pen.s(cy - r)), mask)
    else:
        pen.circle((cx, cy), r, CRIMSON_DARK)
        pen.text((cx, cy + 4), (sheet.name[:1] or "?").upper(), "title", 64, GOLD, "mm")
    x = cx + r + 30
    name_size = 44.0
    while name_size > 22 and pen.width(sheet.name, "title", name_size) > WIDTH - x - MARGIN:
        name_size -= 2
    pen.text((x, 30), sheet.name, "title", name_size, CREAM)
    pen.text(
        (x, 92), sheet.headline or ("Limited view" if sheet.limited else ""), "bold", 21, "#f3dcb6"
    )
    pen.text((x, 124), sheet.origin, "sans", 17, "#e6cfa6")
    return height + 22


def _badge(pen: Pen, x: float, y: float, w: float, label: str, value: str, note: str = "") -> None:
    pen.box((x, y, x + w, y + 92), fill=CREAM, outline=CRIMSON, width=2, radius=10)
    pen.text((x + w / 2, y + 16), label, "bold", 12, MUTED, "mm")
    pen.text((x + w / 2, y + 50), value, "title", 30, INK, "mm")
    pen.text((x + w / 2, y + 78), note, "sans", 12, MUTED, "mm")


def _armor(pen: Pen, x: float, y: float, w: float, ac: int) -> None:
    m = x + w / 2
    shield = [(x + 8, y), (x + w - 8, y), (x + w - 8, y + 46), (m, y + 92), (x + 8, y + 46)]
    pen.polygon(shield, CREAM, CRIMSON)
    pen.text((m, y + 16), "ARMOR", "bold", 12, MUTED, "mm")
    pen.text((m, y + 48), str(ac), "title", 32, INK, "mm")


def _hit_points(pen: Pen, x: float, y: float, w: float, sheet: SheetData) -> None:
    value, maximum, temp = sheet.hp
    pen.box((x, y, x + w, y + 92), fill=CREAM, outline=CRIMSON, width=2, radius=10)
    pen.text((x + w / 2, y + 16), "HIT POINTS", "bold", 12, MUTED, "mm")
    pen.text((x + w / 2, y + 46), f"{value} / {maximum}", "title", 30, INK, "mm")
    ratio = 0.0 if maximum <= 0 else max(0.0, min(1.0, value / maximum))
    color = "#3f8f3a" if ratio > 0.5 else "#d29a22" if ratio > 0.25 else "#b3261e"
    bar = (x + 16, y + 68, x + w - 16, y + 80)
    pen.box(bar, fill="#e8dcc2", radius=6)
    if ratio > 0:
        pen.box((bar[0], bar[1], bar[0] + (bar[2] - bar[0]) * ratio, bar[3]), fill=color, radius=6)
    if temp:
        pen.text((x + w - 14, y + 16), f"+{temp} temp", "bold", 12, "#2f6f9f", "rm")


def _stats(pen: Pen, y: float, sheet: SheetData) -> float:
    x = float(MARGIN)
    _armor(pen, x, y, 110, sheet.ac)
    x += 126
    _hit_points(pen, x, y, 250, sheet)
    x += 266
    for label, value, note in (
        ("SPEED", sheet.speed.split(",")[0], ", ".join(sheet.speed.split(", ")[1:])),
        ("INITIATIVE", signed(sheet.initiative), ""),
        ("PROFICIENCY", signed(sheet.proficiency), "bonus"),
        ("PASSIVE", str(sheet.passive_perception), "perception"),
    ):
        _badge(pen, x, y, 130, label, value, note)
        x += 140
    return y + 112


def _abilities(pen: Pen, y: float, sheet: SheetData) -> float:
    gap = 12.0
    w = (WIDTH - 2 * MARGIN - 5 * gap) / 6
    for i, ability in enumerate(sheet.abilities):
        x = MARGIN + i * (w + gap)
        pen.box((x, y, x + w, y + 118), fill=CREAM, outline=CRIMSON, width=2, radius=12)
        pen.text(
            (x + w / 2, y + 16),
            ABILITY_NAMES.get(ability.key, ability.key),
            "bold",
            14,
            CRIMSON,
            "mm",
        )
        pen.text((x + w / 2, y + 50), signed(ability.mod), "title", 34, INK, "mm")
        pen.box(
            (x + w / 2 - 24, y + 72, x + w / 2 + 24, y + 94),
            fill=PARCHMENT,
            outline=RULE,
            radius=11,
        )
        pen.text((x + w / 2, y + 83), str(ability.score), "bold", 14, INK, "mm")
        mark = "\u25cf" if ability.proficient else "\u25cb"
        pen.text(
            (x + w / 2, y + 107), f"{mark} save {signed(ability.save)}", "sans", 12, MUTED, "mm"
        )
    return y + 138


def _section(pen: Pen, x: float, y: float, w: float, title: str) -> float:
    pen.text((x, y), title.upper(), "bold", 14, CRIMSON)
    pen.line((x, y + 21), (x + w, y + 21), GOLD)
    return y + 30


def _left(pen: Pen, y: float, sheet: SheetData) -> float:
    x, w = float(MARGIN), 300.0
    y = _section(pen, x, y, w, "Skills")
    for skill in sheet.skills:
        marks = {0.5: "\u25d0", 1.0: "\u25cf", 2.0: "\u25c9"}
        pen.text((x + 2, y), marks.get(skill.proficiency, "\u25cb"), "sans", 14, CRIMSON)
        pen.text((x + 24, y), skill.label, "sans", 15)
        pen.text((x + 198, y + 1), skill.ability.upper(), "narrow", 12, MUTED)
        pen.text((x + w, y), signed(skill.total), "bold", 15, INK, "ra")
        y += 23
    y += 14
    if sheet.proficiencies:
        y = _section(pen, x, y, w, "Proficiencies")
        for label, text in sheet.proficiencies:
            pen.text((x, y), label, "bold", 13, MUTED)
            y = pen.paragraph(x, y + 18, text, w, "sans", 14) + 6
    return y


def _pips(pen: Pen, x: float, y: float, left: int, maximum: int) -> float:
    for i in range(min(maximum, 12)):
        pen.circle((x + 7 + i * 20, y + 8), 6.5, CRIMSON if i < left else None, CRIMSON)
    return x + min(maximum, 12) * 20 + 4


def _table(pen: Pen, x: float, y: float, sheet: SheetData) -> float:
    columns = ((x, "NAME"), (x + 250, "TO HIT"), (x + 330, "DAMAGE"), (x + 520, "RANGE"))
    for cx, label in columns:
        pen.text((cx, y), label, "bold", 11, MUTED)
    y += 20
    for attack in sheet.attacks:
        pen.text((x, y), attack.name, "bold", 15)
        pen.text((x + 250, y), attack.to_hit, "bold", 15, CRIMSON)
        pen.text((x + 330, y), attack.damage, "sans", 14)
        pen.text((x + 520, y), attack.range, "narrow", 13, MUTED)
        y += 24
    return y


def _grid(pen: Pen, x: float, y: float, w: float, rows: list[Any], marker: str) -> float:
    """Two columns of names with a note (uses, quantity); `marker` before marked rows."""
    half = (w - 16) / 2
    for i, row in enumerate(rows):
        cx = x + (i % 2) * (half + 16)
        cy = y + (i // 2) * 23
        name = (marker + " " if row.marked else "") + row.name
        while len(name) > 3 and pen.width(name, "sans", 14) > half - 50:
            name = name[:-2] + "\u2026"
        pen.text((cx, cy), name, "sans", 14)
        pen.text((cx + half, cy), row.note, "bold", 13, CRIMSON, "ra")
    return y + math.ceil(len(rows) / 2) * 23


def _right(pen: Pen, y: float, sheet: SheetData) -> float:
    x, w = float(MARGIN + 330), float(WIDTH - MARGIN - (MARGIN + 330))
    if sheet.attacks:
        y = _section(pen, x, y, w, "Attacks")
        y = _table(pen, x, y, sheet) + 14
    if sheet.spells or sheet.slots:
        y = _section(pen, x, y, w, "Spellcasting")
        if sheet.spellcasting:
            pen.text((x, y), sheet.spellcasting, "bold", 14, MUTED)
            y += 24
        for label, left, maximum in sheet.slots:
            pen.text((x, y), f"{label} slots", "sans", 14)
            end = _pips(pen, x + 110, y, left, maximum)
            pen.text((end + 4, y), f"{left}/{maximum}", "narrow", 13, MUTED)
            y += 24
        for level, spells in sheet.spells:
            pen.text((x, y + 2), level, "bold", 14, CRIMSON)
            for prepared in (True, False):
                names = ", ".join(
                    s.name + (" (C)" if s.concentration else "") + (" (R)" if s.ritual else "")
                    for s in spells
                    if s.prepared is prepared
                )
                if names:
                    text, fill = (names, INK) if prepared else (f"not prepared: {names}", MUTED)
                    y = pen.paragraph(x + 100, y + 2, text, w - 100, "sans", 14, fill) + 2
            y += 2
        if sheet.spells:
            pen.text((x, y + 2), "(C) concentration \u00b7 (R) ritual", "narrow", 12, MUTED)
            y += 22
        y += 8
    if sheet.features:
        y = _section(pen, x, y, w, "Features & traits")
        y = _grid(pen, x, y, w, sheet.features, "") + 14
    y = _section(pen, x, y, w, "Inventory")
    y = _grid(pen, x, y, w, sheet.inventory, "\u25c6") + 8
    cx = x
    for coin, amount in sheet.currency.items():
        pen.circle((cx + 12, y + 12), 11, COINS[coin], "#8a6d3b")
        pen.text((cx + 12, y + 12), coin, "bold", 10, INK, "mm")
        pen.text((cx + 29, y + 3), str(amount), "bold", 15)
        cx += 40 + pen.width(str(amount), "bold", 15) + 14
    return y + 34


def _conditions(pen: Pen, y: float, sheet: SheetData) -> float:
    chips = list(sheet.conditions)
    if sheet.exhaustion:
        chips.append(f"Exhaustion {sheet.exhaustion}")
    if sheet.hp[0] <= 0 and sheet.hp[1] > 0:
        success, failure = sheet.death_saves
        chips.append(
            f"Dying: {success} success{'' if success == 1 else 'es'}, "
            f"{failure} failure{'' if failure == 1 else 's'}"
        )
    if not chips:
        return y
    pen.text((MARGIN, y + 4), "CONDITIONS", "bold", 12, MUTED)
    x = MARGIN + 100.0
    for chip in chips:
        w = pen.width(chip, "bold", 13) + 24
        if x + w > WIDTH - MARGIN:
            x, y = MARGIN + 100.0, y + 30
        pen.box((x, y, x + w, y + 24), fill="#b3261e", radius=12)
        pen.text((x + w / 2, y + 12), chip, "bold", 13, "#ffffff", "mm")
        x += w + 8
    return y + 40


def _layout(pen: Pen, sheet: SheetData, portrait: Any) -> float:
    y = _header(pen, sheet, portrait)
    if sheet.limited:
        text = "Only the name and portrait of this character are visible to this user."
        return pen.paragraph(MARGIN, y + 6, text, WIDTH - 2 * MARGIN, "serif", 17) + 24
    y = _conditions(pen, y, sheet)
    y = _stats(pen, y, sheet)
    y = _abilities(pen, y, sheet)
    bottom = max(_left(pen, y, sheet), _right(pen, y, sheet))
    more = ", ".join(f"{n} more {k}" for k, n in sheet.more.items())
    pen.line((MARGIN, bottom + 6), (WIDTH - MARGIN, bottom + 6), GOLD)
    pen.text((WIDTH - MARGIN, bottom + 14), more, "narrow", 12, MUTED, "ra")
    return bottom + 36


def scale_of(value: Any) -> float:
    """The requested `scale` (the reference's pixel ratio), within MIN_SCALE..MAX_SCALE; 1 when
    missing, zero or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 1.0
    return 1.0 if value <= 0 else max(MIN_SCALE, min(MAX_SCALE, float(value)))


def render(
    sheet: SheetData,
    *,
    fmt: str = "png",
    quality: Any = None,
    scale: Any = 1,
    portrait: Path | None = None,
    checkpoint: Callable[[], None] = lambda: None,
) -> Picture:
    """Draw `sheet`; `fmt` is "png" or "jpeg" (`quality` 0-1); `portrait` an image file.
    `checkpoint` is called between the steps (measure, draw, encode; it raises to stop)."""
    from PIL import Image

    factor = scale_of(scale)
    picture = open_image(portrait, (round(132 * factor), round(132 * factor)))
    height = _layout(Pen(None, factor), sheet, picture)
    checkpoint()
    size = (round(WIDTH * factor), round(height * factor))
    image = Image.new("RGB", size, PARCHMENT)
    _layout(Pen(image, factor), sheet, picture)
    checkpoint()
    return encode(image, fmt, quality)


def encode(image: Any, fmt: str, quality: Any) -> Picture:
    pil_format, mime_type = FORMATS[fmt]
    buffer = io.BytesIO()
    if pil_format == "JPEG":
        q = quality if isinstance(quality, int | float) and not isinstance(quality, bool) else 0.9
        q = q * 100 if q <= 1 else q
        image.save(buffer, "JPEG", quality=max(1, min(95, round(q))))
    else:
        image.save(buffer, "PNG", optimize=False)
    return Picture(buffer.getvalue(), mime_type, image.width, image.height)
