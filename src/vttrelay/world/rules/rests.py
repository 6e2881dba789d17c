"""Short and long rests (world-behaviour §3.3, with the spec's `autoHDThreshold` fraction).

`short_rest` / `long_rest` take an actor document (not modified) and a Dice, and return the
dnd5e RestResult (keys and order as the system returns them), the actor after the rest, and what
the chat summary says. Hit dice spent by `autoHD` are rolled and applied at once (they show in
`deltas`, not in `updateData`); everything else is listed in `updateData` (dotted paths, `_id`
last) and `updateItems` and applied to the returned actor.

A long rest also lowers exhaustion by one level (2024 rules; the SRD 5.1 rule is the same for a
creature that has eaten and drunk, which we assume). Each rest records its type in the actor's
`flags.vttrelay.lastRest`: features usable only after a short rest (Arcane Recovery) read it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Final

from vttrelay.world.rules.abilities import (
    ability_mod,
    class_items,
    join_formula,
    resolve_formula,
)
from vttrelay.world.rules.details import RESOURCE_KEYS
from vttrelay.world.rules.dice import Dice, Roll
from vttrelay.world.rules.items import uses_max, uses_spent
from vttrelay.world.rules.paths import apply_update, as_int, get_path, set_path
from vttrelay.world.rules.spells import SLOT_KEYS, pact_max_and_level, slot_max

CLONE_KEYS: Final = (
    "effects",
    "img",
    "items",
    "name",
    "prototypeToken",
    "system",
    "type",
    "folder",
    "sort",
    "ownership",
    "flags",
    "_stats",
    "_id",
)
# Share of the total hit dice a long rest restores (dnd5e `CONFIG.DND5E.rest`).
HIT_DICE_RECOVERY: Final = {"modern": 1.0, "legacy": 0.5}
NEW_DAY_PERIODS: Final = ("day", "dawn", "dusk")
LAST_REST_FLAG: Final = "flags.vttrelay.lastRest"  # "short" or "long": the latest rest taken


@dataclass
class RestOutcome:
    result: dict[str, Any]  # the RestResult
    actor: dict[str, Any]  # the actor after the rest
    content: str  # chat summary text
    flavor: str
    hit_die_rolls: list[Roll] = field(default_factory=list)


def effective_max_hp(actor: dict[str, Any]) -> int:
    hp = get_path(actor, "system.attributes.hp", {}) or {}
    return as_int(hp.get("max"), 0) + as_int(hp.get("tempmax"), 0)


def hit_dice_classes(actor: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in class_items(actor) if as_int(get_path(c, "system.levels"), 0) > 0]


def _denomination(cls: dict[str, Any]) -> int:
    match = re.fullmatch(r"d?(\d+)", str(get_path(cls, "system.hd.denomination") or "d8"))
    return int(match.group(1)) if match else 8


def _class_hd_left(cls: dict[str, Any]) -> int:
    return as_int(get_path(cls, "system.levels"), 0) - as_int(get_path(cls, "system.hd.spent"), 0)


def npc_hit_dice(actor: dict[str, Any]) -> tuple[int, int]:
    """(count, faces) of an NPC's hit dice, from its hit point formula ("2d6" -> (2, 6))."""
    match = re.search(r"(\d+)d(\d+)", str(get_path(actor, "system.attributes.hp.formula") or ""))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _spend_hit_die(actor: dict[str, Any]) -> int | None:
    """Mark one hit die spent (the first class with dice left; an NPC's own pool) and return
    its faces, or None when none is left."""
    classes = hit_dice_classes(actor)
    if classes:
        cls = next((c for c in classes if _class_hd_left(c) > 0), None)
        if cls is None:
            return None
        set_path(cls, "system.hd.spent", as_int(get_path(cls, "system.hd.spent"), 0) + 1)
        return _denomination(cls)
    count, faces = npc_hit_dice(actor)
    spent = as_int(get_path(actor, "system.attributes.hd.spent"), 0)
    if actor.get("type") != "npc" or spent >= count:
        return None
    set_path(actor, "system.attributes.hd.spent", spent + 1)
    return faces


def clone_of(actor: dict[str, Any]) -> dict[str, Any]:
    """The pre-rest snapshot: the actor source with `_id` null, keys in the system's order."""
    source = copy.deepcopy(actor)
    defaults: dict[str, Any] = {
        "effects": [],
        "img": "",
        "items": [],
        "name": "",
        "prototypeToken": {},
        "system": {},
        "type": "character",
        "folder": None,
        "sort": 0,
        "ownership": {"default": 0},
        "flags": {},
        "_stats": {},
    }
    out = {key: source.get(key, defaults.get(key)) for key in CLONE_KEYS}
    out["_id"] = None
    system: dict[str, Any] = out["system"] or {}
    out["system"] = {key: system[key] for key in sorted(system)}
    return out


def _recover_uses(
    actor: dict[str, Any], periods: tuple[str, ...], dice: Dice, rolls: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """updateItems entries for item and activity uses that recover in `periods`."""
    updates: list[dict[str, Any]] = []
    for item in actor.get("items", []):
        entry: dict[str, Any] = {}
        new_spent = _recovered_spent(get_path(item, "system.uses"), actor, periods, dice, rolls)
        if new_spent is not None:
            entry.setdefault("system", {})["uses"] = {"spent": new_spent}
        for activity_id, activity in (get_path(item, "system.activities") or {}).items():
            spent = _recovered_spent(activity.get("uses"), actor, periods, dice, rolls)
            if spent is not None:
                activities = entry.setdefault("system", {}).setdefault("activities", {})
                activities[activity_id] = {"uses": {"spent": spent}}
        if entry:
            updates.append({"_id": item["_id"], **entry})
    return updates


def _recovered_spent(
    uses: Any,
    actor: dict[str, Any],
    periods: tuple[str, ...],
    dice: Dice,
    rolls: list[dict[str, Any]],
) -> int | None:
    if not isinstance(uses, dict):
        return None
    profile = next((r for r in uses.get("recovery") or [] if r.get("period") in periods), None)
    if profile is None:
        return None
    maximum = uses_max(uses, actor)
    spent = uses_spent(uses)
    kind = profile.get("type") or "recoverAll"
    if kind == "recoverAll":
        new_spent = 0
    elif kind == "loseAll":
        new_spent = maximum
    else:
        formula = resolve_formula(str(profile.get("formula") or "0"), actor)
        roll = dice.roll(formula)
        if not roll.is_deterministic:
            rolls.append(roll.to_chat())
        new_spent = max(0, min(spent - roll.total, maximum))
    return None if new_spent == spent else new_spent


def _apply_item_updates(actor: dict[str, Any], updates: list[dict[str, Any]]) -> None:
    by_id = {item["_id"]: item for item in actor.get("items", [])}
    for update in updates:
        item = by_id.get(update["_id"])
        if item is None:
            continue
        for key, value in update.items():
            if key == "_id":
                continue
            if "." in key:
                set_path(item, key, value)
            else:
                _merge(item.setdefault(key, {}), value)


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _resource_updates(actor: dict[str, Any], flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in RESOURCE_KEYS:
        resource = get_path(actor, f"system.resources.{key}") or {}
        maximum = resource.get("max")
        numeric = isinstance(maximum, int | float) and not isinstance(maximum, bool)
        if resource.get(flag) and numeric:
            out[f"system.resources.{key}.value"] = maximum
    return out


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def short_rest(
    actor: dict[str, Any],
    dice: Dice,
    *,
    auto_hd: bool = False,
    threshold: float = 1.0,
    new_day: bool = False,
) -> RestOutcome:
    """A short rest. With `auto_hd`, hit dice are spent while HP < threshold * max HP."""
    clone = clone_of(actor)
    after = copy.deepcopy(actor)
    name = str(actor.get("name", ""))
    hp_path = "system.attributes.hp.value"
    eff_max = effective_max_hp(after)
    hp = as_int(get_path(after, hp_path), 0)
    hp_gained = 0
    dice_spent = 0
    hit_die_rolls: list[Roll] = []
    if auto_hd:
        con = ability_mod(after, "con")
        while hp < threshold * eff_max:
            faces = _spend_hit_die(after)
            if faces is None:
                break
            roll = dice.roll(join_formula(f"1d{faces}", [con]))
            healed = min(eff_max - hp, max(0, roll.total))
            hp += healed
            hp_gained += healed
            dice_spent += 1
            hit_die_rolls.append(roll)
        set_path(after, hp_path, hp)

    periods: tuple[str, ...] = ("sr", *(NEW_DAY_PERIODS if new_day else ()))
    update_data: dict[str, Any] = {}
    update_data.update(_resource_updates(after, "sr"))
    pact_max, _ = pact_max_and_level(after)
    update_data["system.spells.pact.value"] = pact_max
    rolls: list[dict[str, Any]] = []
    update_items = _recover_uses(after, periods, dice, rolls)
    update_data["_id"] = actor.get("_id")
    apply_update(after, update_data)
    _apply_item_updates(after, update_items)
    set_path(after, LAST_REST_FLAG, "short")

    deltas = {"hitPoints": hp_gained, "hitDice": -dice_spent}
    result = {
        "type": "short",
        "deltas": deltas,
        "updateData": update_data,
        "updateItems": update_items,
        "newDay": new_day,
        "rolls": rolls,
        "clone": clone,
        "dhd": deltas["hitDice"],
        "dhp": deltas["hitPoints"],
        "longRest": False,
    }
    if dice_spent:
        content = (
            f"{name} takes a short rest spending {_plural(dice_spent, 'Hit Die', 'Hit Dice')} "
            f"to recover {_plural(hp_gained, 'Hit Point', 'Hit Points')}."
        )
    else:
        content = f"{name} takes a short rest."
    flavor = "Short Rest (1 hour, new day)" if new_day else "Short Rest (1 hour)"
    return RestOutcome(result, after, content, flavor, hit_die_rolls)


def long_rest(
    actor: dict[str, Any], dice: Dice, *, new_day: bool = True, rules: str = "modern"
) -> RestOutcome:
    """A long rest: full HP, one level of exhaustion less, hit dice back (all of them under the
    2024 rules, half under the 2014 ones), every spell slot, long-rest resources and item
    uses."""
    clone = clone_of(actor)
    after = copy.deepcopy(actor)
    name = str(actor.get("name", ""))
    update_data: dict[str, Any] = {}
    update_items: list[dict[str, Any]] = []

    eff_max = effective_max_hp(after)
    hp = as_int(get_path(after, "system.attributes.hp.value"), 0)
    hp_gained = max(0, eff_max - hp)
    update_data["system.attributes.hp.value"] = eff_max
    exhaustion = as_int(get_path(after, "system.attributes.exhaustion"), 0)
    if exhaustion > 0:
        update_data["system.attributes.exhaustion"] = exhaustion - 1

    fraction = HIT_DICE_RECOVERY.get(rules, 1.0)
    recovered_total = 0
    classes = hit_dice_classes(after)
    if actor.get("type") == "npc" and not classes:
        count, _ = npc_hit_dice(after)
        spent = as_int(get_path(after, "system.attributes.hd.spent"), 0)
        if count and spent:
            recovered_total = min(spent, max(1, int(count * fraction)))
            update_data["system.attributes.hd.spent"] = spent - recovered_total
    else:
        total_hd = sum(as_int(get_path(c, "system.levels"), 0) for c in classes)
        budget = max(1, int(total_hd * fraction)) if total_hd else 0
        for cls in sorted(classes, key=_denomination, reverse=True):
            spent = as_int(get_path(cls, "system.hd.spent"), 0)
            recovered = min(spent, budget - recovered_total)
            if recovered > 0:
                recovered_total += recovered
                update_items.append({"_id": cls["_id"], "system.hd.spent": spent - recovered})

    update_data.update(_resource_updates(after, "lr"))
    pact_max, _ = pact_max_and_level(after)
    update_data["system.spells.pact.value"] = pact_max
    for level, key in enumerate(SLOT_KEYS, start=1):
        update_data[f"system.spells.{key}.value"] = slot_max(after, level)

    periods: tuple[str, ...] = ("lr", "sr", *(NEW_DAY_PERIODS if new_day else ()))
    rolls: list[dict[str, Any]] = []
    update_items += _recover_uses(after, periods, dice, rolls)
    update_data["_id"] = actor.get("_id")
    apply_update(after, update_data)
    _apply_item_updates(after, update_items)
    set_path(after, LAST_REST_FLAG, "long")

    deltas = {"hitPoints": hp_gained, "hitDice": recovered_total}
    result = {
        "type": "long",
        "deltas": deltas,
        "updateData": update_data,
        "updateItems": update_items,
        "newDay": new_day,
        "rolls": rolls,
        "clone": clone,
        "dhp": deltas["hitPoints"],
        "dhd": deltas["hitDice"],
        "longRest": True,
    }
    gains: list[str] = []
    if hp_gained:
        gains.append(_plural(hp_gained, "hit point", "hit points"))
    if recovered_total:
        gains.append(_plural(recovered_total, "hit die", "hit dice"))
    if exhaustion > 0:
        gains.append("a level of exhaustion")
    content = f"{name} takes a long rest"
    content += f" and recovers {' and '.join(gains)}." if gains else "."
    flavor = "Long Rest (8 hours, new day)" if new_day else "Long Rest (8 hours)"
    return RestOutcome(result, after, content, flavor)
