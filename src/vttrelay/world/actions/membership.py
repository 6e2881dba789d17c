"""Who fights (endpoints-beyond-seed §8): add-to-encounter and remove-from-encounter, by Token
or Actor uuids (an actor: its token on the viewed scene to add, all its combatants to remove)
and the selected tokens. The current combatant keeps its turn as others join; when it leaves,
the turn passes on. Each call names at most `combatants.MAX_UUIDS` uuids, each resolved on its
own; those that fail are listed with the reason, the others applied.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vttrelay.world.actions.combatants import (
    NO_COMBATANT,
    Token,
    combatants_of,
    defeated_ids,
    member_keys,
    new_combatant,
    save_combat,
    skip_defeated,
    target_combat,
    token_for_uuid,
    uuid_list,
)
from vttrelay.world.actions.initiative import roll_initiative, without_initiative
from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import combat as rules
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action


def _selected(ctx: ActionContext) -> Iterable[tuple[str, Token]]:
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        return ()
    return [
        (documents.token_uuid(scene["_id"], t["_id"]), (scene, t)) for t in ctx.selected_tokens()
    ]


def _failure(uuid: Any, reason: str) -> dict[str, Any]:
    return {"uuid": uuid, "reason": reason}


@action("add-to-encounter")
def add_to_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Add tokens (an actor: its token on the viewed scene) and, with `selected`, the selected
    tokens not yet in the encounter; the current combatant stays current."""
    combat = target_combat(ctx, frame)
    current = rules.current_combatant(combat)
    added: list[Any] = []
    failed: list[dict[str, Any]] = []
    for uuid in uuid_list(frame):
        try:
            scene, token = token_for_uuid(ctx, uuid, "add to encounter")
        except ActionError as exc:
            failed.append(_failure(uuid, exc.message))
            continue
        combat["combatants"].append(new_combatant(ctx, scene, token))
        added.append(uuid)
    if frame.get("selected") is True:
        members = member_keys(combat)
        for uuid, (scene, token) in _selected(ctx):
            if (scene["_id"], token["_id"]) in members:
                continue
            members.add((scene["_id"], token["_id"]))
            try:
                token_for_uuid(ctx, uuid, "add to encounter")
            except ActionError as exc:
                failed.append(_failure(uuid, exc.message))
                continue
            combat["combatants"].append(new_combatant(ctx, scene, token))
            added.append(uuid)
    if not added:
        return {"encounterId": combat["_id"], "added": added, "failed": failed}
    combat["turn"] = rules.turn_keeping(
        combat, current["_id"] if current else None, combat["combatants"]
    )
    if frame.get("rollInitiative") is True:
        roll_initiative(ctx, combat, without_initiative, keep_current=True)
    save_combat(ctx, combat)
    return {"encounterId": combat["_id"], "added": added, "failed": failed}


@action("remove-from-encounter")
def remove_from_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Remove tokens' combatants, every combatant of an actor, and with `selected` the selected
    tokens' combatants; the turn passes on if the current combatant leaves."""
    combat = target_combat(ctx, frame)
    doomed: dict[str, None] = {}  # combatant ids, in order, each once
    removed: list[Any] = []
    failed: list[dict[str, Any]] = []
    wanted = [(uuid, False) for uuid in uuid_list(frame)]
    if frame.get("selected") is True:
        wanted += [(uuid, True) for uuid, _ in _selected(ctx)]
    for uuid, from_selection in wanted:
        try:
            ids = combatants_of(ctx, combat, uuid)
        except ActionError as exc:
            if not (from_selection and exc.message == NO_COMBATANT):
                failed.append(_failure(uuid, exc.message))
            continue
        doomed.update(dict.fromkeys(ids))
        removed.append(uuid)
    if doomed:
        turn = rules.turn_after_removal(
            combat, set(doomed), defeated_ids(ctx, combat), skip_defeated(ctx)
        )
        combat["combatants"] = [c for c in combat["combatants"] if c["_id"] not in doomed]
        combat["turn"] = turn
        save_combat(ctx, combat)
    return {"encounterId": combat["_id"], "removed": removed, "failed": failed}
