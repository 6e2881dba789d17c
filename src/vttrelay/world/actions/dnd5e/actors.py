"""The `/dnd5e/*` actions that read actors and roll (world-behaviour §3.1-3.10):
get-actor-details, modify-item-charges, skill checks, ability checks and saves, death saves,
experience and concentration (which, like rests and experience, can act on the selected
token's actor). Equipment, currency and spell preparation live in
`dnd5e_inventory.py`, rests in `dnd5e_rest.py`, using items in `dnd5e_use.py`; the shared
parameter and resolution helpers in `dnd5e_common.py`.

Each handler validates in the module's order with its exact error texts, resolves the actor the
way that endpoint does, applies the `userId` gate, calls the pure rules in `world/rules/`, and
puts the changed documents back into the transaction. Details, checks, saves and death saves
read the actor as its active effects' changes make it (`rules.effects.apply_changes`, the one
function that does so everywhere: using items, initiative and scripts' `game.actors` too);
writes go to the stored actor.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.actions.dnd5e.common import (
    actor_direct,
    actor_direct_checked,
    actor_or_selected,
    actor_uuid,
    check_choice,
    flag,
    is_number,
    number,
    require_actor_or_selected,
    resolve_actor,
    roll_message,
    roll_options,
    roll_reply,
    save_actor,
    speaker_for,
    text,
)
from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import abilities as ab
from vttrelay.world.rules import concentration as conc
from vttrelay.world.rules import deaths
from vttrelay.world.rules.details import actor_details
from vttrelay.world.rules.effects import apply_changes
from vttrelay.world.rules.items import modify_charges
from vttrelay.world.rules.paths import as_int, get_path, set_path
from vttrelay.world.rules.permissions import assert_can_view, assert_owner
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

# XP by challenge rating (SRD 5.1): NPCs have experience derived from their CR.
CR_XP: Final[dict[float, int]] = {
    0: 10,
    0.125: 25,
    0.25: 50,
    0.5: 100,
    1: 200,
    2: 450,
    3: 700,
    4: 1100,
    5: 1800,
    6: 2300,
    7: 2900,
    8: 3900,
    9: 5000,
    10: 5900,
}
DEATH_SAVE_TYPES: Final = ("character", "npc")


# get-actor-details ---------------------------------------------------------------------------


@action("get-actor-details")
def get_actor_details(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    uuid = text(frame, "actorUuid")
    if uuid is None:
        raise ActionError("actorUuid is required")
    details = frame.get("details")
    if not isinstance(details, list) or not details:
        raise ActionError("details array is required and cannot be empty")
    actor = actor_direct_checked(ctx, uuid)
    assert_can_view(ctx, actor)
    return {"data": actor_details(apply_changes(actor), uuid, details)}


# modify-item-charges -------------------------------------------------------------------------


@action("modify-item-charges")
def modify_item_charges(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    uuid = text(frame, "actorUuid")
    if uuid is None:
        raise ActionError("actorUuid is required")
    item_uuid, item_name = text(frame, "itemUuid"), text(frame, "itemName")
    if item_uuid is None and item_name is None:
        raise ActionError("itemUuid or itemName is required")
    amount = number(frame, "amount")
    if amount is None:
        raise ActionError("amount must be a number")
    if amount != int(amount):
        raise ActionError("amount must be a whole number of charges")
    actor = actor_direct_checked(ctx, uuid)
    assert_owner(ctx, actor, "modify item charges on")
    items = actor.get("items") or []
    if item_uuid is not None:
        item_id = item_uuid.rsplit(".", 1)[-1]
        item = next((i for i in items if i.get("_id") == item_id), None)
    else:
        item = documents.find_by_name(items, item_name)
    if item is None:
        raise ActionError(f"Item not found on actor {actor.get('name', '')}")
    old, new = modify_charges(item, actor, amount)
    save_actor(ctx, actor, item)
    return {
        "data": {
            "itemUuid": f"{actor_uuid(actor)}.Item.{item['_id']}",
            "oldCharges": old,
            "newCharges": new,
        }
    }


# Skill checks, ability checks and saves ------------------------------------------------------


@action("skill-check")
def skill_check(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    if text(frame, "actorUuid") is None:
        raise ActionError("actorUuid is required")
    skill = text(frame, "skill")
    if skill is None:
        raise ActionError("skill is required")
    check_choice(skill, "skill", ab.SKILLS, "skills")
    actor = actor_direct(ctx, frame)
    assert_can_view(ctx, actor)
    formula = ab.skill_formula(apply_changes(actor), skill, **roll_options(ctx, frame))
    roll = ctx.roll(formula)
    if flag(frame, "createChatMessage", True):
        label = ab.SKILLS[skill][0]
        roll_message(ctx, actor, roll, f"{label} Skill Check", {"type": "skill", "skillId": skill})
    return {"data": {"actorUuid": actor_uuid(actor), "skill": skill, **roll_reply(roll)}}


def _ability_roll(ctx: ActionContext, frame: dict[str, Any], kind: str) -> dict[str, Any]:
    if text(frame, "actorUuid") is None:
        raise ActionError("actorUuid is required")
    ability = text(frame, "ability")
    if ability is None:
        raise ActionError("ability is required")
    check_choice(ability, "ability", ab.ABILITIES, "abilities")
    actor = actor_direct(ctx, frame)
    assert_can_view(ctx, actor)
    build = ab.save_formula if kind == "save" else ab.check_formula
    roll = ctx.roll(build(apply_changes(actor), ability, **roll_options(ctx, frame)))
    if flag(frame, "createChatMessage", True):
        label = ab.ABILITY_LABELS[ability]
        flavor = f"{label} Saving Throw" if kind == "save" else f"{label} Ability Check"
        roll_message(ctx, actor, roll, flavor, {"type": kind, "abilityId": ability})
    return {"data": {"actorUuid": actor_uuid(actor), "ability": ability, **roll_reply(roll)}}


@action("ability-save")
def ability_save(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _ability_roll(ctx, frame, "save")


@action("ability-check")
def ability_check(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _ability_roll(ctx, frame, "check")


# Death saves ---------------------------------------------------------------------------------


@action("death-save")
def death_save(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    actor = actor_direct(ctx, frame)
    assert_owner(ctx, actor, "roll death saves for")
    if actor.get("type") not in DEATH_SAVE_TYPES:
        raise ActionError(f"Actors of the type '{actor.get('type')}' don't support death saves.")
    death = get_path(actor, "system.attributes.death") or {}
    success, failure = as_int(death.get("success"), 0), as_int(death.get("failure"), 0)
    hp = as_int(get_path(actor, "system.attributes.hp.value"), 0)
    data: dict[str, Any] = {"actorUuid": actor_uuid(actor)}
    if not deaths.needs_death_save(hp, success, failure):
        data["deathSaves"] = {"success": success, "failure": failure}
        return {"data": data}
    formula = ab.death_save_formula(apply_changes(actor), advantage=flag(frame, "advantage"))
    roll = ctx.roll(formula)
    outcome = deaths.resolve_death_save(
        str(actor.get("name", "")),
        total=roll.total,
        critical=roll.is_critical,
        fumble=roll.is_fumble,
        success=success,
        failure=failure,
    )
    set_path(actor, "system.attributes.death.success", outcome.success)
    set_path(actor, "system.attributes.death.failure", outcome.failure)
    if outcome.hp is not None:
        set_path(actor, "system.attributes.hp.value", outcome.hp)
    save_actor(ctx, actor)
    if flag(frame, "createChatMessage", True):
        roll_message(ctx, actor, roll, "Death Saving Throw", {"type": "death"})
    if outcome.message:
        ctx.create_chat_message(content=outcome.message, speaker=speaker_for(ctx, actor))
    data.update(roll_reply(roll))
    data["deathSaves"] = {"success": outcome.success, "failure": outcome.failure}
    return {"data": data}


# Experience ----------------------------------------------------------------------------------


def _npc_xp(actor: dict[str, Any]) -> int | None:
    cr = get_path(actor, "system.details.cr")
    if not is_number(cr):
        return None
    if cr in CR_XP:
        return CR_XP[cr]
    return max(v for k, v in CR_XP.items() if k <= cr)


@action("modify-experience")
def modify_experience(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    require_actor_or_selected(frame)
    amount = number(frame, "amount")
    if amount is None:
        raise ActionError("amount must be a number")
    actor = actor_or_selected(ctx, frame)
    assert_owner(ctx, actor, "modify experience on")
    name = actor.get("name", "")
    no_xp = (
        f"Actor '{name}' does not have experience points "
        "(may be an NPC or using milestone leveling)"
    )
    if actor.get("type") == "npc":
        old = _npc_xp(actor)
        if old is None:
            raise ActionError(no_xp)
        # an NPC's experience derives from its challenge rating and is not stored
        return {"data": {"actorUuid": actor_uuid(actor), "oldXp": old, "newXp": old + amount}}
    xp = get_path(actor, "system.details.xp")
    if not isinstance(xp, dict):
        raise ActionError(no_xp)
    old = as_int(xp.get("value"), 0)
    new = old + amount
    if new != int(new):
        raise ActionError("amount must be a whole number of experience points")
    if new < 0:
        raise ActionError(f"Experience cannot go below 0: '{name}' has {old}, amount {amount}")
    xp["value"] = int(new)
    save_actor(ctx, actor)
    return {"data": {"actorUuid": actor_uuid(actor), "oldXp": old, "newXp": int(new)}}


# Concentration -------------------------------------------------------------------------------


@action("get-concentration")
def get_concentration(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    actor = resolve_actor(ctx, frame, allow_selected=True)
    assert_can_view(ctx, actor)
    effect = conc.concentration_effect(actor)
    data: dict[str, Any] = {
        "actorUuid": actor_uuid(actor),
        "isConcentrating": effect is not None,
        "effect": None,
        "spell": None,
    }
    if effect is not None:
        origin = effect.get("origin")
        data["effect"] = {
            "id": effect["_id"],
            "uuid": f"{actor_uuid(actor)}.ActiveEffect.{effect['_id']}",
            "name": effect.get("name", ""),
            "icon": effect.get("img", ""),
            "statuses": list(effect.get("statuses") or []),
            "origin": origin if isinstance(origin, str) else None,
        }
        source = documents.resolve_uuid(ctx.tx, origin) if isinstance(origin, str) else None
        data["spell"] = source.doc.get("name") if source is not None else None
    return {"data": data}


def _concentrating(actor: dict[str, Any]) -> dict[str, Any]:
    effect = conc.concentration_effect(actor)
    if effect is None:
        raise ActionError(f"Actor '{actor.get('name', '')}' is not concentrating")
    return effect


@action("break-concentration")
def break_concentration(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    actor = resolve_actor(ctx, frame, allow_selected=True)
    assert_owner(ctx, actor, "break concentration on")
    effect = _concentrating(actor)
    conc.remove_effect(actor, effect["_id"])
    save_actor(ctx, actor)
    return {
        "data": {"actorUuid": actor_uuid(actor), "broken": True, "removedEffectId": effect["_id"]}
    }


@action("concentration-save")
def concentration_save(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    actor = resolve_actor(ctx, frame, allow_selected=True)
    assert_owner(ctx, actor, "roll concentration saves for")
    effect = _concentrating(actor)
    damage = number(frame, "damage")
    if damage is None:
        raise ActionError("damage must be a number")
    dc = conc.concentration_dc(damage)
    formula = ab.save_formula(apply_changes(actor), "con", **roll_options(ctx, frame))
    roll = ctx.roll(formula)
    maintained = roll.total >= dc
    if not maintained:
        conc.remove_effect(actor, effect["_id"])
        save_actor(ctx, actor)
    if flag(frame, "createChatMessage", True):
        flavor = f"Constitution Saving Throw (Concentration, DC {dc})"
        roll_message(ctx, actor, roll, flavor, {"type": "concentration", "dc": dc})
    return {
        "data": {
            "actorUuid": actor_uuid(actor),
            "dc": dc,
            **roll_reply(roll),
            "maintained": maintained,
        }
    }
