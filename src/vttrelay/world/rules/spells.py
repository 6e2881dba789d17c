"""Spell slots and preparation.

Slot maximums are derived from the class items, as dnd5e does: full casters by class level,
half casters by half their level (rounded up, 2024 rules), third casters by a third; the sum
indexes the multiclass table. Warlocks (`pact` progression) get pact slots by warlock level.
A source `override` on a slot wins. Slot values live in `system.spells.<key>.value`.
"""

from __future__ import annotations

import math
from typing import Any, Final

from vttrelay.world.errors import SpellError
from vttrelay.world.rules.abilities import class_items
from vttrelay.world.rules.paths import as_number, get_path

# Slots per spell level 1..9 by (full-caster-equivalent) level 1..20 (SRD 5.1).
FULL_CASTER_SLOTS: Final[tuple[tuple[int, ...], ...]] = (
    (2, 0, 0, 0, 0, 0, 0, 0, 0),
    (3, 0, 0, 0, 0, 0, 0, 0, 0),
    (4, 2, 0, 0, 0, 0, 0, 0, 0),
    (4, 3, 0, 0, 0, 0, 0, 0, 0),
    (4, 3, 2, 0, 0, 0, 0, 0, 0),
    (4, 3, 3, 0, 0, 0, 0, 0, 0),
    (4, 3, 3, 1, 0, 0, 0, 0, 0),
    (4, 3, 3, 2, 0, 0, 0, 0, 0),
    (4, 3, 3, 3, 1, 0, 0, 0, 0),
    (4, 3, 3, 3, 2, 0, 0, 0, 0),
    (4, 3, 3, 3, 2, 1, 0, 0, 0),
    (4, 3, 3, 3, 2, 1, 0, 0, 0),
    (4, 3, 3, 3, 2, 1, 1, 0, 0),
    (4, 3, 3, 3, 2, 1, 1, 0, 0),
    (4, 3, 3, 3, 2, 1, 1, 1, 0),
    (4, 3, 3, 3, 2, 1, 1, 1, 0),
    (4, 3, 3, 3, 2, 1, 1, 1, 1),
    (4, 3, 3, 3, 3, 1, 1, 1, 1),
    (4, 3, 3, 3, 3, 2, 1, 1, 1),
    (4, 3, 3, 3, 3, 2, 2, 1, 1),
)

# (slots, slot level) by warlock level 1..20 (SRD 5.1 Pact Magic).
PACT_SLOTS: Final[tuple[tuple[int, int], ...]] = (
    (1, 1),
    (2, 1),
    (2, 2),
    (2, 2),
    (2, 3),
    (2, 3),
    (2, 4),
    (2, 4),
    (2, 5),
    (2, 5),
    (3, 5),
    (3, 5),
    (3, 5),
    (3, 5),
    (3, 5),
    (3, 5),
    (4, 5),
    (4, 5),
    (4, 5),
    (4, 5),
)

SLOT_KEYS: Final = tuple(f"spell{n}" for n in range(1, 10))


def _progression_levels(actor: dict[str, Any]) -> tuple[int, int]:
    """(full-caster-equivalent level, warlock level)."""
    full = 0.0
    pact = 0
    for item in class_items(actor):
        levels = int(as_number(get_path(item, "system.levels"), 0))
        progression = get_path(item, "system.spellcasting.progression") or "none"
        if progression == "full":
            full += levels
        elif progression == "half":
            full += math.ceil(levels / 2)
        elif progression == "third":
            full += math.floor(levels / 3)
        elif progression == "artificer":
            full += math.ceil(levels / 2)
        elif progression == "pact":
            pact += levels
    return int(full), pact


def slot_max(actor: dict[str, Any], level: int) -> int:
    """Maximum leveled slots of spell level 1..9."""
    override = get_path(actor, f"system.spells.spell{level}.override")
    if isinstance(override, int | float) and not isinstance(override, bool):
        return int(override)
    full, _ = _progression_levels(actor)
    if full <= 0:
        return 0
    return FULL_CASTER_SLOTS[min(full, 20) - 1][level - 1]


def pact_max_and_level(actor: dict[str, Any]) -> tuple[int, int]:
    _, pact = _progression_levels(actor)
    slots, level = PACT_SLOTS[min(pact, 20) - 1] if pact > 0 else (0, 0)
    override = get_path(actor, "system.spells.pact.override")
    if isinstance(override, int | float) and not isinstance(override, bool):
        slots = int(override)
    return slots, level


def slot_value(actor: dict[str, Any], key: str, maximum: int) -> int:
    value = int(as_number(get_path(actor, f"system.spells.{key}.value"), 0))
    return max(0, min(value, maximum))


def slots_view(actor: dict[str, Any]) -> dict[str, Any]:
    """`spellSlots` of get-actor-details: spell1..9 with max > 0, then pact if it has slots."""
    out: dict[str, Any] = {}
    for n, key in enumerate(SLOT_KEYS, start=1):
        maximum = slot_max(actor, n)
        if maximum > 0:
            out[key] = {"value": slot_value(actor, key, maximum), "max": maximum}
    pact_max, pact_level = pact_max_and_level(actor)
    if pact_max > 0:
        out["pact"] = {
            "value": slot_value(actor, "pact", pact_max),
            "max": pact_max,
            "level": pact_level,
        }
    return out


def spell_level(spell: dict[str, Any]) -> int:
    return int(as_number(get_path(spell, "system.level"), 0))


def preparation_mode(spell: dict[str, Any]) -> str:
    return str(get_path(spell, "system.preparation.mode") or "prepared")


def is_concentration(spell: dict[str, Any]) -> bool:
    return "concentration" in (get_path(spell, "system.properties") or [])


def prepares_spells(actor: dict[str, Any]) -> bool:
    """True if any class of the actor prepares spells (a preparation formula is set)."""
    return any(
        bool(str(get_path(c, "system.spellcasting.preparation.formula") or "").strip())
        for c in class_items(actor)
    )


def spend_slot_for(actor: dict[str, Any], spell: dict[str, Any]) -> str | None:
    """Spend the slot a cast of `spell` needs; returns a short description of what was spent
    (e.g. "1st-level slot", "pact slot (2nd level)") or None when no slot is needed."""
    level = spell_level(spell)
    mode = preparation_mode(spell)
    name = spell.get("name", "")
    if level == 0 or mode in ("atwill", "innate", "ritual"):
        return None
    if mode == "prepared" and not get_path(spell, "system.preparation.prepared"):
        raise SpellError(f"Spell '{name}' is not prepared")
    if mode == "pact":
        pact_max, pact_level = pact_max_and_level(actor)
        value = slot_value(actor, "pact", pact_max)
        if value <= 0:
            raise SpellError(f"No pact slots remaining to cast {name}")
        actor["system"]["spells"].setdefault("pact", {})["value"] = value - 1
        return f"pact slot ({ordinal(pact_level)} level)"
    key = f"spell{level}"
    maximum = slot_max(actor, level)
    value = slot_value(actor, key, maximum)
    if value <= 0:
        raise SpellError(f"No spell slots of level {level} remaining to cast {name}")
    actor["system"]["spells"].setdefault(key, {})["value"] = value - 1
    return f"{ordinal(level)}-level slot"


def recover_slots(actor: dict[str, Any], budget: int, max_level: int = 5) -> list[int]:
    """Arcane Recovery: regain expended leveled slots whose levels add up to at most `budget`
    (none above `max_level`), highest levels first. Returns the levels regained."""
    regained: list[int] = []
    for level in range(min(max_level, 9), 0, -1):
        key = f"spell{level}"
        maximum = slot_max(actor, level)
        value = slot_value(actor, key, maximum)
        while value < maximum and level <= budget:
            value += 1
            budget -= level
            regained.append(level)
        if regained and regained[-1] == level:
            actor["system"]["spells"].setdefault(key, {})["value"] = value
    return regained


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def set_prepared(spell: dict[str, Any], prepared: bool) -> None:
    system = spell.setdefault("system", {})
    preparation = system.setdefault("preparation", {"mode": "prepared", "prepared": False})
    preparation["prepared"] = prepared
