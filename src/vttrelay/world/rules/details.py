"""The sections of get-actor-details (world-behaviour §3.1): which are allowed, their fixed
output order, and the exact keys of each. Pure: takes the actor document and its uuid."""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.rules import spells as spell_rules
from vttrelay.world.rules.abilities import (
    ABILITIES,
    SKILLS,
    ability_mod,
    ability_score,
    character_level,
    initiative_bonus,
    proficiency_bonus,
    save_bonus,
    save_proficient,
    skill_ability,
    skill_passive,
    skill_total,
    skill_value,
)
from vttrelay.world.rules.armor import armor_class
from vttrelay.world.rules.concentration import concentration_effect
from vttrelay.world.rules.currency import DENOMINATIONS
from vttrelay.world.rules.effects import STATUS_EFFECTS
from vttrelay.world.rules.items import FEATURE_TYPES, ITEM_TYPES
from vttrelay.world.rules.paths import as_int, as_number, get_path

DETAIL_NAMES: Final = (
    "resources",
    "spells",
    "items",
    "features",
    "stats",
    "abilities",
    "skills",
    "details",
    "conditions",
)
# The three custom resources of an actor (`system.resources.<key>`).
RESOURCE_KEYS: Final = ("primary", "secondary", "tertiary")
DETAIL_TEXT_KEYS: Final = (
    "alignment",
    "biography",
    "age",
    "height",
    "weight",
    "eyes",
    "skin",
    "hair",
    "faith",
    "gender",
    "trait",
    "ideal",
    "bond",
    "flaw",
    "notes",
    "journal",
    "goals",
)
# Display names of status conditions (dnd5e CONFIG.statusEffects, English).
STATUS_NAMES: Final = {s.id: s.name for s in STATUS_EFFECTS}
CARRY_PER_STRENGTH: Final = 15


def actor_details(actor: dict[str, Any], uuid: str, details: list[Any]) -> dict[str, Any]:
    """The `data` of get-actor-details: `uuid` first, then the requested sections in the fixed
    order (unknown names ignored)."""
    wanted = {d for d in details if isinstance(d, str)}
    items = list(actor.get("items") or [])
    out: dict[str, Any] = {"uuid": uuid}
    if "resources" in wanted:
        out["resources"] = resources(actor)
    if "spells" in wanted:
        out["spells"] = [i for i in items if i.get("type") == "spell"]
        out["spellSlots"] = spell_rules.slots_view(actor)
    if "items" in wanted:
        out["items"] = [i for i in items if i.get("type") in ITEM_TYPES]
    if "features" in wanted:
        out["features"] = [i for i in items if i.get("type") in FEATURE_TYPES]
    if "stats" in wanted:
        out["stats"] = stats(actor)
    if "abilities" in wanted:
        out["abilities"] = abilities(actor)
    if "skills" in wanted:
        out["skills"] = skills(actor)
    if "details" in wanted:
        out["details"] = details_text(actor)
    if "conditions" in wanted:
        out["conditions"] = conditions(actor)
        effect = concentration_effect(actor)
        out["concentration"] = (
            {"active": True, "name": effect.get("name", "")} if effect else {"active": False}
        )
    return out


def resources(actor: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in RESOURCE_KEYS:
        res = get_path(actor, f"system.resources.{key}") or {}
        out[key] = {
            "value": as_number(res.get("value"), 0),
            "max": as_number(res.get("max"), 0),
            "sr": bool(res.get("sr")),
            "lr": bool(res.get("lr")),
            "label": str(res.get("label") or ""),
        }
    return out


def _actor_uuid(actor: dict[str, Any]) -> str:
    return f"Actor.{actor.get('_id')}"


def encumbrance(actor: dict[str, Any]) -> dict[str, Any]:
    weight = 0.0
    for item in actor.get("items") or []:
        if item.get("type") not in (*ITEM_TYPES, "container"):
            continue
        raw = get_path(item, "system.weight")
        unit = as_number(raw.get("value") if isinstance(raw, dict) else raw, 0)
        weight += unit * as_int(get_path(item, "system.quantity"), 1)
    return {
        "value": round(weight, 2),
        "max": ability_score(actor, "str") * CARRY_PER_STRENGTH,
    }


def stats(actor: dict[str, Any]) -> dict[str, Any]:
    hp = get_path(actor, "system.attributes.hp") or {}
    death = get_path(actor, "system.attributes.death") or {}
    currency = get_path(actor, "system.currency")
    return {
        "name": actor.get("name", ""),
        "img": actor.get("img", ""),
        "uuid": _actor_uuid(actor),
        "level": character_level(actor),
        "profBonus": proficiency_bonus(actor),
        "ac": armor_class(actor),
        "hp": {
            "value": as_int(hp.get("value"), 0),
            "max": as_int(hp.get("max"), 0),
            "temp": as_int(hp.get("temp"), 0),
        },
        "speed": as_number(get_path(actor, "system.attributes.movement.walk"), 0),
        "exhaustion": as_int(get_path(actor, "system.attributes.exhaustion"), 0),
        "inspiration": bool(get_path(actor, "system.attributes.inspiration")),
        "initBonus": initiative_bonus(actor),
        "deathSaves": {
            "success": as_int(death.get("success"), 0),
            "failure": as_int(death.get("failure"), 0),
        },
        "encumbrance": encumbrance(actor),
        "currency": (
            {d: as_number(currency.get(d), 0) for d in DENOMINATIONS}
            if isinstance(currency, dict)
            else {}
        ),
    }


def abilities(actor: dict[str, Any]) -> dict[str, Any]:
    return {
        a: {
            "value": ability_score(actor, a),
            "mod": ability_mod(actor, a),
            "save": save_bonus(actor, a),
            "proficient": save_proficient(actor, a),
        }
        for a in ABILITIES
    }


def skills(actor: dict[str, Any]) -> dict[str, Any]:
    keys = list((get_path(actor, "system.skills") or {}).keys())
    keys += [k for k in sorted(SKILLS) if k not in keys]
    out: dict[str, Any] = {}
    for key in keys:
        if key not in SKILLS:
            continue
        ability = skill_ability(actor, key)
        out[key] = {
            "ability": ability,
            "total": skill_total(actor, key),
            "mod": ability_mod(actor, ability),
            "value": skill_value(actor, key),
            "passive": skill_passive(actor, key),
        }
    return out


def _first_name(actor: dict[str, Any], item_type: str) -> str:
    for item in actor.get("items") or []:
        if item.get("type") == item_type:
            return str(item.get("name", ""))
    return "?"


def details_text(actor: dict[str, Any]) -> dict[str, Any]:
    det = get_path(actor, "system.details") or {}
    classes = [str(i.get("name", "")) for i in actor.get("items") or [] if i.get("type") == "class"]
    out: dict[str, Any] = {
        "race": _first_name(actor, "race"),
        "background": _first_name(actor, "background"),
        "class": "/".join(classes) if classes else "?",
    }
    for key in DETAIL_TEXT_KEYS:
        value = det.get(key)
        if key == "biography":
            value = value.get("value") if isinstance(value, dict) else value
        out[key] = str(value) if value not in (None,) else ""
    return out


def statuses(actor: dict[str, Any]) -> list[str]:
    """The actor's status ids from its enabled effects, in order, without repeats."""
    seen: list[str] = []
    for effect in actor.get("effects") or []:
        if effect.get("disabled"):
            continue
        for status in effect.get("statuses") or []:
            if status not in seen:
                seen.append(status)
    return seen


def conditions(actor: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": s, "name": STATUS_NAMES.get(s, s)} for s in statuses(actor)]
