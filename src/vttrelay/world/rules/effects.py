"""Active effects: the dnd5e status conditions and new ActiveEffect documents
(endpoints-beyond-seed §5).

`STATUS_EFFECTS` is dnd5e 5.0.4's `CONFIG.statusEffects`, in its order (43 entries, observed in a
real world). A status effect added to an actor is an ActiveEffect carrying that status id in
`statuses`; a custom one is created from the caller's ActiveEffect data with the tabletop's
defaults for what it leaves out. `apply_changes` gives an actor as its enabled effects' changes
make it (what the tabletop derives before reading bonuses and scores). Pure functions over plain
data.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Final

from vttrelay.world.errors import EffectDataError
from vttrelay.world.model.documents import new_stats
from vttrelay.world.rules.paths import get_path, set_path

# ActiveEffect change modes (CONST.ACTIVE_EFFECT_MODES).
CUSTOM, MULTIPLY, ADD, DOWNGRADE, UPGRADE, OVERRIDE = range(6)


@dataclass(frozen=True)
class StatusEffect:
    id: str
    name: str

    @property
    def icon(self) -> str:
        kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", self.id).lower()
        return f"systems/dnd5e/icons/svg/statuses/{kebab}.svg"

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "icon": self.icon}


STATUS_EFFECTS: Final = tuple(
    StatusEffect(i, n)
    for i, n in (
        ("dead", "Dead"),
        ("coverHalf", "Half Cover"),
        ("coverThreeQuarters", "Three-Quarters Cover"),
        ("coverTotal", "Total Cover"),
        ("bleeding", "Bleeding"),
        ("blinded", "Blinded"),
        ("burning", "Burning"),
        ("burrowing", "Burrowing"),
        ("charmed", "Charmed"),
        ("concentrating", "Concentrating"),
        ("cursed", "Cursed"),
        ("deafened", "Deafened"),
        ("dehydration", "Dehydration"),
        ("diseased", "Diseased"),
        ("dodging", "Dodging"),
        ("encumbered", "Encumbered"),
        ("ethereal", "Ethereal"),
        ("exceedingCarryingCapacity", "Exceeding Carrying Capacity"),
        ("exhaustion", "Exhaustion"),
        ("falling", "Falling"),
        ("flying", "Flying"),
        ("frightened", "Frightened"),
        ("grappled", "Grappled"),
        ("heavilyEncumbered", "Heavily Encumbered"),
        ("hiding", "Hiding"),
        ("hovering", "Hovering"),
        ("incapacitated", "Incapacitated"),
        ("invisible", "Invisible"),
        ("malnutrition", "Malnutrition"),
        ("marked", "Marked"),
        ("paralyzed", "Paralyzed"),
        ("petrified", "Petrified"),
        ("poisoned", "Poisoned"),
        ("prone", "Prone"),
        ("restrained", "Restrained"),
        ("silenced", "Silenced"),
        ("sleeping", "Sleeping"),
        ("stable", "Stable"),
        ("stunned", "Stunned"),
        ("suffocation", "Suffocation"),
        ("surprised", "Surprised"),
        ("transformed", "Transformed"),
        ("unconscious", "Unconscious"),
    )
)
STATUS_BY_ID: Final = {s.id: s for s in STATUS_EFFECTS}
DEFAULT_ICON: Final = "icons/svg/aura.svg"


def empty_duration() -> dict[str, Any]:
    return {
        "startTime": 0,
        "seconds": None,
        "combat": None,
        "rounds": None,
        "turns": None,
        "startRound": None,
        "startTurn": None,
    }


def _check(data: dict[str, Any]) -> None:
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise EffectDataError("ActiveEffect validation errors: name: may not be undefined")
    changes = data.get("changes", [])
    if not isinstance(changes, list):
        raise EffectDataError("ActiveEffect validation errors: changes: must be an array")
    for change in changes:
        if not isinstance(change, dict) or not isinstance(change.get("key"), str):
            raise EffectDataError(
                "ActiveEffect validation errors: changes: each change needs a string key"
            )
    for key in ("duration", "flags", "system"):
        if key in data and not isinstance(data[key], dict):
            raise EffectDataError(f"ActiveEffect validation errors: {key}: must be an object")
    statuses = data.get("statuses", [])
    if not isinstance(statuses, list) or not all(isinstance(s, str) for s in statuses):
        raise EffectDataError("ActiveEffect validation errors: statuses: must be a string array")


def new_effect(effect_id: str, data: dict[str, Any], now_ms: int) -> dict[str, Any]:
    """An ActiveEffect document from caller data (`icon` is the older name of `img`), with
    defaults for everything it leaves out. Raises EffectDataError."""
    _check(data)
    data = copy.deepcopy(data)
    icon = data.pop("icon", None)
    changes = [
        {
            "key": c["key"],
            "mode": c.get("mode", 2),
            "value": c.get("value", ""),
            "priority": c.get("priority"),
        }
        for c in data.pop("changes", [])
    ]
    duration = {**empty_duration(), **data.pop("duration", {})}
    doc: dict[str, Any] = {
        "_id": effect_id,
        "name": data.pop("name"),
        "img": data.pop("img", None) or icon or DEFAULT_ICON,
        "changes": changes,
        "disabled": bool(data.pop("disabled", False)),
        "duration": duration,
        "description": data.pop("description", ""),
        "origin": data.pop("origin", None),
        "tint": data.pop("tint", "#ffffff"),
        "transfer": bool(data.pop("transfer", False)),
        "statuses": list(dict.fromkeys(data.pop("statuses", []))),
        "sort": data.pop("sort", 0),
        "flags": data.pop("flags", {}),
        "type": data.pop("type", "base"),
        "system": data.pop("system", {}),
        "_stats": new_stats(now_ms),
    }
    data.pop("_id", None)
    data.pop("_stats", None)
    doc.update(data)  # anything else the caller set, as given
    return doc


def new_status_effect(effect_id: str, status: StatusEffect, now_ms: int) -> dict[str, Any]:
    """The effect a status toggle adds: `{name, img, statuses: [id]}`."""
    return new_effect(
        effect_id, {"name": status.name, "img": status.icon, "statuses": [status.id]}, now_ms
    )


def with_status(effects: list[dict[str, Any]], status_id: str) -> dict[str, Any] | None:
    """The first effect carrying `status_id`, or None."""
    for effect in effects:
        if status_id in (effect.get("statuses") or ()):
            return effect
    return None


def icon_of(effect: dict[str, Any]) -> Any:
    return effect.get("icon") or effect.get("img")


def effect_detail(effect: dict[str, Any], uuid: str) -> dict[str, Any]:
    """An effect as GET /effects lists it."""
    return {
        "id": effect["_id"],
        "uuid": uuid,
        "name": effect.get("name", ""),
        "icon": icon_of(effect),
        "disabled": bool(effect.get("disabled")),
        "duration": effect.get("duration") or empty_duration(),
        "statuses": list(effect.get("statuses") or []),
        "changes": list(effect.get("changes") or []),
        "origin": effect.get("origin"),
    }


def effect_brief(effect: dict[str, Any], uuid: str) -> dict[str, Any]:
    """An effect as POST /effects answers it."""
    return {
        "id": effect["_id"],
        "uuid": uuid,
        "name": effect.get("name", ""),
        "icon": icon_of(effect),
        "statuses": list(effect.get("statuses") or []),
    }


# Applying changes ----------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def apply_change(current: Any, mode: int, value: Any) -> Any:
    """One change on one value, as the tabletop applies it: ADD sums numbers and joins formula
    strings with ` + `, MULTIPLY multiplies, UPGRADE/DOWNGRADE keep the larger/smaller number,
    OVERRIDE replaces; a change that does not fit the value's type leaves it as it was."""
    if mode == OVERRIDE:
        number = _number(value)
        return _whole(number) if isinstance(current, int | float) and number is not None else value
    if mode == ADD:
        if isinstance(current, list):
            return [*current, value]
        if isinstance(current, str) or (current is None and _number(value) is None):
            text = str(value).strip()
            return f"{current} + {text}" if current and text else (current or text)
        number = _number(value)
        if number is None:
            return current
        return _whole((current if isinstance(current, int | float) else 0) + number)
    number, base = _number(value), _number(current)
    if number is None or base is None or isinstance(current, bool):
        return current
    if mode == MULTIPLY:
        return _whole(base * number)
    if mode == UPGRADE:
        return _whole(max(base, number))
    if mode == DOWNGRADE:
        return _whole(min(base, number))
    return current  # CUSTOM: system code only


def active_changes(actor: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes of the actor's enabled effects and its items' enabled transfer effects,
    in the order the tabletop applies them (priority, default mode x 10)."""
    effects = [e for e in actor.get("effects") or () if isinstance(e, dict)]
    for item in actor.get("items") or ():
        for effect in item.get("effects") or () if isinstance(item, dict) else ():
            if isinstance(effect, dict) and effect.get("transfer"):
                effects.append(effect)
    changes: list[dict[str, Any]] = []
    for effect in effects:
        if effect.get("disabled"):
            continue
        for change in effect.get("changes") or ():
            if isinstance(change, dict) and isinstance(change.get("key"), str) and change["key"]:
                changes.append(change)

    def priority(change: dict[str, Any]) -> float:
        explicit = _number(change.get("priority"))
        mode = _number(change.get("mode"))
        return explicit if explicit is not None else (mode or 0) * 10

    return sorted(changes, key=priority)


def apply_changes(actor: dict[str, Any]) -> dict[str, Any]:
    """The actor as its effects make it: a copy with every active change applied (the stored
    actor is untouched; nothing with no changes is copied)."""
    changes = active_changes(actor)
    if not changes:
        return actor
    out = copy.deepcopy(actor)
    for change in changes:
        mode = _number(change.get("mode"))
        key = change["key"]
        new = apply_change(
            get_path(out, key), int(mode) if mode is not None else ADD, change.get("value")
        )
        set_path(out, key, new)
    return out


# Durations in combat ---------------------------------------------------------------------------


def _combat_time(round_: Any, turn: Any, n_turns: int | None = None) -> float:
    """`ActiveEffect#_getCombatTime`: rounds plus turns as hundredths."""
    r = _number(round_) or 0
    t = _number(turn) or 0
    if n_turns:
        t = min(t, n_turns)
    return max(r, 0) + max(t, 0) / 100


def counts_in_combat(effect: dict[str, Any]) -> bool:
    """True if the effect lasts a number of rounds or turns."""
    duration = effect.get("duration") or {}
    return bool(_number(duration.get("rounds")) or _number(duration.get("turns")))


def start_duration(effect: dict[str, Any], combat: dict[str, Any] | None) -> None:
    """Start a round/turn duration at the combat's current round and turn (what the tabletop
    records when such an effect is created during a combat); nothing without a combat."""
    if combat is None or not counts_in_combat(effect):
        return
    duration = effect.setdefault("duration", empty_duration())
    if duration.get("startRound") is None:
        duration["startRound"] = combat.get("round") or 0
    if duration.get("startTurn") is None:
        duration["startTurn"] = combat.get("turn") or 0
    if duration.get("combat") is None:
        duration["combat"] = combat.get("_id")


def is_expired(effect: dict[str, Any], combat: dict[str, Any]) -> bool:
    """True once a round/turn duration has run out in this combat (`ActiveEffect#duration`
    `remaining` reaching 0: start + duration <= the combat's current round and turn). Effects of
    another combat, or without a round/turn duration, never expire here."""
    if not counts_in_combat(effect):
        return False
    duration = effect.get("duration") or {}
    if duration.get("combat") not in (None, combat.get("_id")):
        return False
    n_turns = len(combat.get("combatants") or ())
    current = _combat_time(combat.get("round"), combat.get("turn"))
    start = _combat_time(duration.get("startRound"), duration.get("startTurn"), n_turns)
    if current <= start:
        return False
    length = _combat_time(duration.get("rounds"), duration.get("turns"))
    return round(start + length - current, 2) <= 0


def remove_expired(actor: dict[str, Any], combat: dict[str, Any]) -> list[dict[str, Any]]:
    """Delete the actor's own effects whose duration ran out in `combat` (in place); the
    removed effects, in their order."""
    effects = [e for e in actor.get("effects") or () if isinstance(e, dict)]
    expired = [e for e in effects if is_expired(e, combat)]
    if expired:
        actor["effects"] = [e for e in effects if e not in expired]
    return expired
