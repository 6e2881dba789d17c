"""Armor class, the way dnd5e derives it from `system.attributes.ac.calc` and equipped gear."""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.rules.abilities import ability_mod, resolve_formula
from vttrelay.world.rules.paths import as_int, as_number, get_path

ARMOR_TYPES: Final = ("light", "medium", "heavy")
# Dexterity cap by armor type when the item does not set one (None: no cap).
DEX_CAP: Final[dict[str, int | None]] = {"light": None, "medium": 2, "heavy": 0}


def _equipped(actor: dict[str, Any], kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        item
        for item in actor.get("items") or []
        if item.get("type") == "equipment"
        and get_path(item, "system.equipped")
        and get_path(item, "system.type.value") in kinds
    ]


def _bonus(actor: dict[str, Any]) -> int:
    text = resolve_formula(str(get_path(actor, "system.attributes.ac.bonus") or ""), actor)
    return as_int(text.replace(" ", "").lstrip("+"), 0) if text.strip() else 0


def armor_class(actor: dict[str, Any]) -> int:
    ac = get_path(actor, "system.attributes.ac") or {}
    calc = ac.get("calc") or "default"
    flat = ac.get("flat")
    if calc in ("flat", "natural") and isinstance(flat, int | float):
        return int(flat)
    dex = ability_mod(actor, "dex")
    armor = _equipped(actor, ARMOR_TYPES)
    shields = _equipped(actor, ("shield",))
    shield_bonus = sum(
        as_int(get_path(s, "system.armor.value"), 2) + as_int(get_path(s, "system.magicalBonus"), 0)
        for s in shields
    )
    if calc == "unarmoredMonk" and not armor and not shields:
        base = 10 + dex + ability_mod(actor, "wis")
    elif calc == "unarmoredBarb" and not armor:
        base = 10 + dex + ability_mod(actor, "con")
    elif calc == "mage" and not armor:
        base = 13 + dex
    elif calc == "custom" and ac.get("formula"):
        base = int(as_number(resolve_formula(str(ac["formula"]), actor), 10))
    elif armor:
        worn = armor[0]
        kind = str(get_path(worn, "system.type.value"))
        cap = get_path(worn, "system.armor.dex")
        cap = DEX_CAP.get(kind) if cap in (None, "") else as_int(cap, 0)
        base = as_int(get_path(worn, "system.armor.value"), 10) + as_int(
            get_path(worn, "system.magicalBonus"), 0
        )
        base += dex if cap is None else min(dex, cap)
    else:
        base = 10 + dex
    return base + shield_bonus + _bonus(actor)
