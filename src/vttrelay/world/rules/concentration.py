"""Concentration: finding the concentration effect and the save DC (spec §8:
DC = max(10, floor(damage / 2)), no upper cap)."""

from __future__ import annotations

import math
from typing import Any, Final

CONCENTRATION_STATUSES: Final = ("concentrating", "concentration")


def concentration_dc(damage: float) -> int:
    return max(10, math.floor(damage / 2))


def concentration_effect(actor: dict[str, Any]) -> dict[str, Any] | None:
    """The first effect whose statuses include concentrating/concentration."""
    for effect in actor.get("effects", []):
        statuses = effect.get("statuses") or []
        if any(s in CONCENTRATION_STATUSES for s in statuses):
            return effect
    return None


def remove_effect(actor: dict[str, Any], effect_id: str) -> None:
    actor["effects"] = [e for e in actor.get("effects", []) if e.get("_id") != effect_id]


def new_concentration_effect(
    effect_id: str, *, spell_name: str, origin: str, img: str, now_ms: int
) -> dict[str, Any]:
    """The effect a concentration spell leaves on its caster (ActiveEffect source data)."""
    return {
        "_id": effect_id,
        "name": f"Concentrating: {spell_name}",
        "img": img or "systems/dnd5e/icons/svg/statuses/concentrating.svg",
        "changes": [],
        "disabled": False,
        "duration": {
            "startTime": 0,
            "seconds": None,
            "combat": None,
            "rounds": None,
            "turns": None,
            "startRound": None,
            "startTurn": None,
        },
        "description": "",
        "origin": origin,
        "tint": "#ffffff",
        "transfer": False,
        "statuses": ["concentrating"],
        "sort": 0,
        "flags": {"dnd5e": {"item": {"type": "spell"}}},
        "_stats": {
            "compendiumSource": None,
            "duplicateSource": None,
            "exportSource": None,
            "coreVersion": "14.363",
            "systemId": "dnd5e",
            "systemVersion": "5.0.4",
            "createdTime": now_ms,
            "modifiedTime": now_ms,
            "lastModifiedBy": None,
        },
        "type": "base",
        "system": {},
    }
