"""Combat as the tabletop runs it: turn order, turn and round navigation, keeping the current
combatant when combatants come and go, defeated combatants, and the dnd5e initiative formula.

Pure functions over plain data. A Combat document holds `round` (0 before it starts), `turn`
(index into the turn order, or None when it is nobody's turn) and `combatants`; the turn order is
the combatants sorted by initiative, highest first, combatants without one last, ties by id
(Foundry's `Combat#_sortCombatants`). Navigation returns the `{round, turn}` update to apply,
as `Combat#nextTurn`, `previousTurn`, `nextRound`, `previousRound` and `startCombat` compute it.
With `skip_defeated` (the core setting `combatTrackerConfig.skipDefeated`) defeated combatants
are passed over by next-turn and next-round.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final, TypedDict

from vttrelay.world.rules.abilities import (
    ability_mod,
    d20_term,
    join_formula,
    proficiency_bonus,
    resolve_formula,
)
from vttrelay.world.rules.paths import as_number, get_path

DEFEATED_STATUS: Final = "dead"  # CONFIG.specialStatusEffects.DEFEATED


class TurnUpdate(TypedDict):
    round: int
    turn: int | None


def _initiative_key(combatant: dict[str, Any]) -> tuple[float, str]:
    value = combatant.get("initiative")
    number = (
        float(value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else float("-inf")
    )
    return (-number, str(combatant.get("_id", "")))


def turn_order(combatants: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The combatants in turn order: initiative high to low, None last, ties by id."""
    return sorted(combatants, key=_initiative_key)


def current_combatant(combat: dict[str, Any]) -> dict[str, Any] | None:
    """The combatant whose turn it is, or None."""
    turn = combat.get("turn")
    order = turn_order(combat.get("combatants") or [])
    if isinstance(turn, int) and 0 <= turn < len(order):
        return order[turn]
    return None


def clamp_turn(turn: int | None, count: int) -> int | None:
    """`setupTurns`: a turn index kept inside the order (None stays None)."""
    if turn is None:
        return None
    return max(0, min(turn, count - 1)) if count else 0


def start(combat: dict[str, Any]) -> TurnUpdate:
    """`startCombat`: round 1, first turn."""
    return {"round": 1, "turn": 0}


def next_round(
    combat: dict[str, Any], defeated: Collection[str], skip_defeated: bool
) -> TurnUpdate:
    """`nextRound`: the next round, at its first (living, when skipping) combatant."""
    turn = combat.get("turn")
    new_turn: int | None = None if turn is None else 0
    if skip_defeated and new_turn is not None:
        order = turn_order(combat.get("combatants") or [])
        living = [i for i, c in enumerate(order) if c.get("_id") not in defeated]
        new_turn = living[0] if living else 0
    return {"round": int(combat.get("round") or 0) + 1, "turn": new_turn}


def next_turn(combat: dict[str, Any], defeated: Collection[str], skip_defeated: bool) -> TurnUpdate:
    """`nextTurn`: the next (living, when skipping) combatant; past the last, the next round."""
    order = turn_order(combat.get("combatants") or [])
    turn = combat.get("turn")
    current = turn if isinstance(turn, int) else -1
    upcoming: int | None
    if skip_defeated:
        upcoming = next(
            (i for i, c in enumerate(order) if i > current and c.get("_id") not in defeated),
            None,
        )
    else:
        upcoming = current + 1
    round_ = int(combat.get("round") or 0)
    if round_ == 0 or upcoming is None or upcoming >= len(order):
        return next_round(combat, defeated, skip_defeated)
    return {"round": round_, "turn": upcoming}


def previous_round(combat: dict[str, Any]) -> TurnUpdate:
    """`previousRound`: the previous round, at its last combatant (round 0: nobody's turn)."""
    count = len(combat.get("combatants") or [])
    round_ = int(combat.get("round") or 0)
    turn: int | None = 0 if round_ == 0 else max(count - 1, 0)
    if combat.get("turn") is None:
        turn = None
    new_round = max(round_ - 1, 0)
    if new_round == 0:
        turn = None
    return {"round": new_round, "turn": turn}


def previous_turn(combat: dict[str, Any]) -> TurnUpdate | None:
    """`previousTurn`: the previous combatant; before the first, the previous round. None when
    there is nothing before (round 0, turn 0)."""
    turn = combat.get("turn")
    round_ = int(combat.get("round") or 0)
    if turn == 0 and round_ == 0:
        return None
    if isinstance(turn, int) and turn <= 0:
        return previous_round(combat)
    count = len(combat.get("combatants") or [])
    return {"round": round_, "turn": (turn if isinstance(turn, int) else count) - 1}


def turn_keeping(
    combat: dict[str, Any], current_id: str | None, combatants: Sequence[dict[str, Any]]
) -> int | None:
    """The turn index that keeps `current_id` current once the combat holds `combatants`
    (`_onCreateDescendantDocuments`, and `rollInitiative` with `updateTurn`)."""
    turn = combat.get("turn")
    if current_id is None:
        return clamp_turn(turn, len(combatants))
    order = turn_order(combatants)
    index = next((i for i, c in enumerate(order) if c.get("_id") == current_id), 0)
    return max(index, 0)


def turn_after_removal(
    combat: dict[str, Any],
    removed: Collection[str],
    defeated: Collection[str],
    skip_defeated: bool,
) -> int | None:
    """The turn once `removed` combatants leave (`_onDeleteDescendantDocuments`): the current
    combatant stays current; if it was removed, the next survivor (else the previous) takes it."""
    turn = combat.get("turn")
    order = turn_order(combat.get("combatants") or [])
    remaining = [c for c in order if c.get("_id") not in removed]
    if turn is None:
        return None
    current = order[turn] if 0 <= turn < len(order) else None
    previous_survivor = next_survivor = None
    for i, c in enumerate(order):
        valid = c.get("_id") not in removed
        if skip_defeated:
            valid = valid and c.get("_id") not in defeated
        if not valid:
            continue
        if i < turn:
            previous_survivor = c
        if next_survivor is None and i >= turn:
            next_survivor = c
    target = current
    if current is not None and current.get("_id") in removed:
        target = next_survivor or previous_survivor
        if target is None:
            return clamp_turn(turn, len(remaining))
    ids = [c.get("_id") for c in remaining]
    index = ids.index(target.get("_id")) if target is not None and target.get("_id") in ids else -1
    return max(index, 0)


# Defeated and initiative ---------------------------------------------------------------------


def actor_statuses(actor: dict[str, Any] | None) -> set[str]:
    """The status ids of an actor's enabled effects."""
    out: set[str] = set()
    for effect in (actor or {}).get("effects") or ():
        if isinstance(effect, dict) and not effect.get("disabled"):
            out.update(s for s in effect.get("statuses") or () if isinstance(s, str))
    return out


def is_defeated(combatant: dict[str, Any], actor: dict[str, Any] | None) -> bool:
    """`Combatant#isDefeated`: marked defeated, or its actor has the defeated status."""
    return bool(combatant.get("defeated")) or DEFEATED_STATUS in actor_statuses(actor)


def _roll_mode(actor: dict[str, Any]) -> int:
    mode = as_number(get_path(actor, "system.attributes.init.roll.mode"), 0)
    if get_path(actor, "flags.dnd5e.initiativeAdv"):
        mode += 1
    if get_path(actor, "flags.dnd5e.initiativeDisadv"):
        mode -= 1
    return int(mode)


def initiative_formula(actor: dict[str, Any], *, dex_tiebreaker: bool = False) -> str:
    """The dnd5e initiative roll: d20 (advantage by the roll mode), the ability modifier
    (`attributes.init.ability`, else dex), proficiency when `init.prof` says so, the
    initiative bonus, the ability's check bonus and the global check bonus, then the
    dexterity tiebreaker when the world setting asks for it."""
    ability = str(get_path(actor, "system.attributes.init.ability") or "dex")
    mode = _roll_mode(actor)
    first = d20_term(advantage=mode > 0, disadvantage=mode < 0)
    parts: list[Any] = [ability_mod(actor, ability)]
    prof = as_number(get_path(actor, "system.attributes.init.prof"), 0)
    if prof:
        parts.append(int(prof * proficiency_bonus(actor)))
    for path in (
        "system.attributes.init.bonus",
        f"system.abilities.{ability}.bonuses.check",
        "system.bonuses.abilities.check",
    ):
        value = get_path(actor, path)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if value:
                parts.append(int(value))
        elif isinstance(value, str) and value.strip():
            parts.append(resolve_formula(value, actor))
    if dex_tiebreaker:
        dex = as_number(get_path(actor, "system.abilities.dex.value"), 10)
        parts.append(f"{dex / 100:g}")
    return join_formula(first, parts)
