"""Turn actions (endpoints-beyond-seed §8): next-turn, next-round, last-turn, last-round of the
current encounter (or `encounterId`'s), each move computed by `rules.combat`, skipping the
defeated when the tracker is set to.

Effects with a duration in rounds or turns count down as the combat advances: next-turn and
next-round delete the combatants' effects whose duration ran out (`rules.effects.is_expired`);
going back restores nothing, as in the tabletop.

A failed last-round answers `last-round-result` (the module's `encounter-navigation` reply leaves
the caller waiting until the relay times out; endpoints-beyond-seed §15 X19).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vttrelay.world.actions.combatants import (
    actor_of,
    combatant_view,
    defeated_ids,
    save_combat,
    skip_defeated,
    summary,
    target_combat,
)
from vttrelay.world.model import documents
from vttrelay.world.rules import combat as rules
from vttrelay.world.rules import effects as effect_rules
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

Move = Callable[[dict[str, Any], set[str], bool], rules.TurnUpdate | None]


def _expire_effects(ctx: ActionContext, combat: dict[str, Any]) -> None:
    """Delete the combatants' effects whose round/turn duration ran out now that the combat
    moved on (each actor once; an unlinked token's own actor through its delta)."""
    seen: set[str] = set()
    for combatant in combat.get("combatants") or ():
        actor = actor_of(ctx, combatant)
        if actor is None or documents.actor_uuid_of(actor) in seen:
            continue
        seen.add(documents.actor_uuid_of(actor))
        if effect_rules.remove_expired(actor, combat):
            documents.touch_stats(actor, ctx.now_ms(), ctx.acting_user_id)
            documents.put_actor(ctx.tx, actor)


def _navigate(
    ctx: ActionContext,
    frame: dict[str, Any],
    operation: str,
    name: str,
    move: Move,
    *,
    advances: bool = False,
) -> dict[str, Any]:
    assert_gm(ctx, operation)
    combat = target_combat(ctx, frame)
    update = move(combat, defeated_ids(ctx, combat), skip_defeated(ctx))
    if update is not None:
        combat.update(update)
        save_combat(ctx, combat)
        if advances:
            _expire_effects(ctx, combat)
    reply: dict[str, Any] = {
        "encounterId": combat["_id"],
        "action": name,
        "currentTurn": combat.get("turn"),
        "currentRound": combat.get("round", 0),
    }
    current = rules.current_combatant(combat)
    if current is not None:
        view = combatant_view(ctx, current)
        reply["actorTurn"] = view["actorUuid"]
        reply["tokenTurn"] = view["tokenUuid"]
    reply["encounter"] = summary(combat)
    return reply


@action("next-turn")
def next_turn(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "advance encounter turns", "nextTurn", rules.next_turn, advances=True
    )


@action("next-round")
def next_round(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "advance encounter rounds", "nextRound", rules.next_round, advances=True
    )


@action("last-turn")
def last_turn(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "revert encounter turns", "previousTurn", lambda c, *_: rules.previous_turn(c)
    )


@action("last-round")
def last_round(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx,
        frame,
        "revert encounter rounds",
        "previousRound",
        lambda c, *_: rules.previous_round(c),
    )
