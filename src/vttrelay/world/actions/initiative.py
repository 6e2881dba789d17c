"""Initiative of a running encounter (vttrelay's own actions, beyond the module): roll-initiative
rolls the dnd5e initiative of the combatants that have none, or of the tokens and actors named,
and set-initiative sets one combatant's. The current combatant keeps its turn as the order
changes, as the tabletop's tracker does; each answers the encounter in its new turn order.
`roll_initiative` is also how start-encounter and add-to-encounter roll."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from vttrelay.world.actions.combatants import (
    MAX_UUIDS,
    Lookup,
    actor_of,
    combatant_views,
    combatants_of,
    save_combat,
    summary,
    target_combat,
    token_of,
)
from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import combat as rules
from vttrelay.world.rules import effects as effect_rules
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

MAX_INITIATIVE: Final = 1_000  # |initiative| a call may set
SETTING_TIEBREAKER: Final = "dnd5e.initiativeDexTiebreaker"


def roll_initiative(
    ctx: ActionContext,
    combat: dict[str, Any],
    which: Callable[[dict[str, Any]], bool],
    *,
    keep_current: bool,
) -> None:
    """Roll dnd5e initiative for the combatants `which` picks, each roll posted to chat as the
    tabletop does (whispered to the GMs for a hidden combatant); the current combatant stays
    current when `keep_current`."""
    current = rules.current_combatant(combat) if keep_current else None
    tiebreaker = bool(ctx.setting(SETTING_TIEBREAKER, False))
    gms = [u["_id"] for u in ctx.tx.all("User") if documents.is_gm(u)]
    lookup = Lookup(ctx)  # rolling writes chat and the combat, no scene
    for combatant in combat.get("combatants") or []:  # the order they joined, as rollAll does
        if not which(combatant):
            continue
        actor = actor_of(ctx, combatant, lookup) or {}
        formula = rules.initiative_formula(
            effect_rules.apply_changes(actor), dex_tiebreaker=tiebreaker
        )
        roll = ctx.roll(formula)
        combatant["initiative"] = roll.total
        found = token_of(ctx, combatant, lookup)
        name = combatant.get("name") or actor.get("name", "")
        ctx.create_chat_message(
            content=str(roll.total),
            speaker={
                "scene": found[0]["_id"] if found else None,
                "actor": actor.get("_id"),
                "token": found[1]["_id"] if found else None,
                "alias": name,
            },
            flavor=f"{name} rolls for Initiative!",
            rolls=[roll.to_chat()],
            whisper=gms if combatant.get("hidden") else (),
            flags={"core": {"initiativeRoll": True}},
        )
    if current is not None:
        combat["turn"] = rules.turn_keeping(combat, current["_id"], combat["combatants"])


def without_initiative(combatant: dict[str, Any]) -> bool:
    return combatant.get("initiative") is None


def _answer(ctx: ActionContext, combat: dict[str, Any], **facts: Any) -> dict[str, Any]:
    return {
        "encounterId": combat["_id"],
        **facts,
        "encounter": {**summary(combat), "combatants": combatant_views(ctx, combat)},
    }


def _named(ctx: ActionContext, combat: dict[str, Any], frame: dict[str, Any]) -> set[str]:
    """Combatant ids the frame names by `uuids` (tokens or actors) and `combatantIds`."""
    uuids, ids = frame.get("uuids") or [], frame.get("combatantIds") or []
    if not isinstance(uuids, list) or not isinstance(ids, list):
        raise ActionError("uuids and combatantIds must be lists")
    if len(uuids) + len(ids) > MAX_UUIDS:
        raise ActionError(f"At most {MAX_UUIDS} uuids can be given in one call")
    known = {str(c["_id"]) for c in combat.get("combatants") or []}
    named: set[str] = set()
    for uuid in uuids:
        named.update(combatants_of(ctx, combat, uuid))
    for cid in ids:
        if str(cid) not in known:
            raise ActionError(f"Combatant {cid} not found in encounter {combat['_id']}")
        named.add(str(cid))
    return named


@action("roll-initiative")
def roll_encounter_initiative(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Roll initiative for the named combatants (rerolled), else for each without one."""
    assert_gm(ctx, "roll initiative")
    combat = target_combat(ctx, frame)
    named = _named(ctx, combat, frame)
    rolled: list[str] = []

    def which(combatant: dict[str, Any]) -> bool:
        chosen = combatant["_id"] in named if named else combatant.get("initiative") is None
        if chosen:
            rolled.append(str(combatant["_id"]))
        return chosen

    roll_initiative(ctx, combat, which, keep_current=True)
    if rolled:
        save_combat(ctx, combat)
    return _answer(ctx, combat, rolled=rolled)


@action("set-initiative")
def set_initiative(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Set the initiative of the combatants of `uuid` (a token or actor) or of `combatantId`."""
    assert_gm(ctx, "set initiative")
    value = frame.get("initiative")
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        raise ActionError("initiative must be a number")
    if abs(value) > MAX_INITIATIVE:
        raise ActionError(f"initiative must be between -{MAX_INITIATIVE} and {MAX_INITIATIVE}")
    combat = target_combat(ctx, frame)
    uuid, cid = frame.get("uuid"), frame.get("combatantId")
    named = _named(
        ctx, combat, {"uuids": [uuid] if uuid else [], "combatantIds": [cid] if cid else []}
    )
    if not named:
        raise ActionError("uuid or combatantId is required")
    current = rules.current_combatant(combat)
    for combatant in combat.get("combatants") or []:
        if combatant["_id"] in named:
            combatant["initiative"] = value
    if current is not None:
        combat["turn"] = rules.turn_keeping(combat, current["_id"], combat["combatants"])
    save_combat(ctx, combat)
    return _answer(ctx, combat, combatantIds=sorted(named), initiative=value)
