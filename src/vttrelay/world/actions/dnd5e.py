"""The `/dnd5e/*` actions (world-behaviour §3, §7, §8): reading actor details, rolls (skills,
checks, saves, death saves, concentration), experience, charges, equipment, attunement,
currency and spell preparation. Rests live in `dnd5e_rest.py`, using items in `dnd5e_use.py`.

Each handler validates in the module's order with its exact error texts, resolves the actor the
way that endpoint does (§2.2: the not-found texts differ), applies the `userId` gate, calls the
pure rules in `world/rules/`, and puts the changed documents back into the transaction.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world import documents
from vttrelay.world.actions import ActionError, action
from vttrelay.world.context import ActionContext
from vttrelay.world.dice import DiceError, Roll
from vttrelay.world.permissions import assert_can_view, assert_owner
from vttrelay.world.rules import abilities as ab
from vttrelay.world.rules import concentration as conc
from vttrelay.world.rules import currency as coins
from vttrelay.world.rules import deaths
from vttrelay.world.rules.details import actor_details
from vttrelay.world.rules.items import modify_charges, set_attuned, set_equipped
from vttrelay.world.rules.paths import as_int, get_path, set_path
from vttrelay.world.rules.spells import prepares_spells, set_prepared

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


# Parameters ---------------------------------------------------------------------------------


def text(frame: dict[str, Any], key: str) -> str | None:
    """A non-empty string parameter, else None."""
    value = frame.get(key)
    return value if isinstance(value, str) and value != "" else None


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def number(frame: dict[str, Any], key: str) -> float | None:
    """A numeric parameter (not a bool), else None."""
    value = frame.get(key)
    return value if is_number(value) else None


def flag(frame: dict[str, Any], key: str, default: bool = False) -> bool:
    value = frame.get(key)
    return value if isinstance(value, bool) else default


# Resolution (world-behaviour §2.2, §2.3) ------------------------------------------------------


def actor_uuid(actor: dict[str, Any]) -> str:
    return documents.actor_uuid(actor["_id"])


def _actor_from_uuid(ctx: ActionContext, uuid: str) -> dict[str, Any] | None:
    resolved = documents.resolve_uuid(ctx.tx, uuid)
    if resolved is None:
        return None
    if resolved.kind == "Actor":
        return resolved.doc
    if resolved.kind == "Token":
        return resolved.actor
    return None


def actor_direct(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """`fromUuid(actorUuid)`: `actorUuid is required` / `Actor not found with UUID: <uuid>`."""
    uuid = text(frame, "actorUuid")
    if uuid is None:
        raise ActionError("actorUuid is required")
    return actor_direct_checked(ctx, uuid)


def actor_direct_checked(ctx: ActionContext, uuid: str) -> dict[str, Any]:
    actor = _actor_from_uuid(ctx, uuid)
    if actor is None:
        raise ActionError(f"Actor not found with UUID: {uuid}")
    return actor


def require_actor_or_selected(frame: dict[str, Any]) -> None:
    if text(frame, "actorUuid") is None and frame.get("selected") is not True:
        raise ActionError("Either actorUuid or selected must be provided")


def actor_or_selected(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """`actorUuid`, else the first selected token's actor (rests, experience)."""
    uuid = text(frame, "actorUuid")
    if uuid is not None:
        actor = _actor_from_uuid(ctx, uuid)
        if actor is None:
            raise ActionError("Actor not found")
        return actor
    tokens = ctx.selected_tokens()
    if not tokens:
        raise ActionError("No token selected")
    actor_id = tokens[0].get("actorId")
    actor = ctx.tx.get("Actor", actor_id) if isinstance(actor_id, str) else None
    if actor is None:
        raise ActionError("Actor not found")
    return actor


def resolve_actor(
    ctx: ActionContext,
    frame: dict[str, Any],
    uuid_key: str = "actorUuid",
    name_key: str = "actorName",
) -> dict[str, Any]:
    """`resolveActor`: uuid (an Actor, or a Token's actor) else a world actor by name."""
    uuid, name = text(frame, uuid_key), text(frame, name_key)
    if uuid is None and name is None:
        raise ActionError(f"{uuid_key} or {name_key} is required")
    actor = (
        _actor_from_uuid(ctx, uuid)
        if uuid is not None
        else documents.find_by_name(ctx.tx.all("Actor"), name)
    )
    if actor is None:
        raise ActionError(f"Actor not found: {uuid if uuid is not None else name}")
    return actor


def resolve_item(
    ctx: ActionContext, actor: dict[str, Any], frame: dict[str, Any]
) -> dict[str, Any]:
    """`resolveItem` (equip/attune): uuid's last segment, or the full uuid, else the name."""
    uuid, name = text(frame, "itemUuid"), text(frame, "itemName")
    if uuid is None and name is None:
        raise ActionError("itemUuid or itemName is required")
    items = actor.get("items") or []
    item: dict[str, Any] | None = None
    if uuid is not None:
        item_id = uuid.rsplit(".", 1)[-1]
        item = next((i for i in items if i.get("_id") == item_id), None)
        if item is None:
            item = next(
                (i for i in items if documents.item_uuid(actor["_id"], i["_id"]) == uuid), None
            )
    else:
        item = documents.find_by_name(items, name)
    if item is None:
        raise ActionError(
            f"Item not found on actor {actor.get('name', '')}: {uuid if uuid is not None else name}"
        )
    return item


def save_actor(ctx: ActionContext, actor: dict[str, Any], *items: dict[str, Any]) -> None:
    now = ctx.now_ms()
    user_id = ctx.acting_user_id
    for item in items:
        documents.touch_stats(item, now, user_id)
    documents.touch_stats(actor, now, user_id)
    ctx.tx.put("Actor", actor)


def speaker_for(ctx: ActionContext, actor: dict[str, Any]) -> dict[str, Any]:
    """The chat speaker of an actor: its token on the active scene, if it has one."""
    scene = documents.active_scene(ctx.tx)
    token = None
    if scene is not None:
        token = next(
            (t for t in scene.get("tokens") or [] if t.get("actorId") == actor["_id"]), None
        )
    return {
        "scene": scene["_id"] if scene is not None and token is not None else None,
        "actor": actor["_id"],
        "token": token["_id"] if token is not None else None,
        "alias": token.get("name") if token is not None else actor.get("name", ""),
    }


def roll_message(
    ctx: ActionContext, actor: dict[str, Any], roll: Roll, flavor: str, roll_flags: dict[str, Any]
) -> dict[str, Any]:
    return ctx.create_chat_message(
        content=str(roll.total),
        speaker=speaker_for(ctx, actor),
        flavor=flavor,
        rolls=[roll.to_chat()],
        flags={"dnd5e": {"roll": roll_flags}},
    )


def roll_formula(ctx: ActionContext, formula: str) -> Roll:
    try:
        return ctx.dice.roll(formula)
    except DiceError as exc:
        raise ActionError(str(exc)) from exc


def roll_reply(roll: Roll) -> dict[str, Any]:
    return {"total": roll.total, "formula": roll.formula, "result": roll.result}


def roll_options(frame: dict[str, Any]) -> dict[str, Any]:
    bonus = frame.get("bonus")
    if bonus is not None and not isinstance(bonus, str | int | float):
        raise ActionError("bonus must be a string")
    return {
        "advantage": flag(frame, "advantage"),
        "disadvantage": flag(frame, "disadvantage"),
        "bonus": str(bonus) if bonus not in (None, "") else None,
    }


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
    return {"data": actor_details(actor, uuid, details)}


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
            "itemUuid": documents.item_uuid(actor["_id"], item["_id"]),
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
    if skill not in ab.SKILLS:
        raise ActionError(f"Invalid skill '{skill}'. Valid skills: {', '.join(ab.SKILLS)}")
    actor = actor_direct(ctx, frame)
    assert_can_view(ctx, actor)
    roll = roll_formula(ctx, ab.skill_formula(actor, skill, **roll_options(frame)))
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
    if ability not in ab.ABILITIES:
        raise ActionError(
            f"Invalid ability '{ability}'. Valid abilities: {', '.join(ab.ABILITIES)}"
        )
    actor = actor_direct(ctx, frame)
    assert_can_view(ctx, actor)
    build = ab.save_formula if kind == "save" else ab.check_formula
    roll = roll_formula(ctx, build(actor, ability, **roll_options(frame)))
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
    roll = roll_formula(ctx, ab.death_save_formula(actor, advantage=flag(frame, "advantage")))
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
    actor = resolve_actor(ctx, frame)
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
            "uuid": documents.effect_uuid(actor["_id"], effect["_id"]),
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
    actor = resolve_actor(ctx, frame)
    assert_owner(ctx, actor, "break concentration on")
    effect = _concentrating(actor)
    conc.remove_effect(actor, effect["_id"])
    save_actor(ctx, actor)
    return {
        "data": {"actorUuid": actor_uuid(actor), "broken": True, "removedEffectId": effect["_id"]}
    }


@action("concentration-save")
def concentration_save(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    actor = resolve_actor(ctx, frame)
    assert_owner(ctx, actor, "roll concentration saves for")
    effect = _concentrating(actor)
    damage = number(frame, "damage")
    if damage is None:
        raise ActionError("damage must be a number")
    dc = conc.concentration_dc(damage)
    roll = roll_formula(ctx, ab.save_formula(actor, "con", **roll_options(frame)))
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


# Equipment and attunement --------------------------------------------------------------------


def _item_toggle(ctx: ActionContext, frame: dict[str, Any], key: str) -> dict[str, Any]:
    actor = resolve_actor(ctx, frame)
    assert_owner(ctx, actor, "modify items on")
    item = resolve_item(ctx, actor, frame)
    value = frame.get(key)
    if not isinstance(value, bool):
        raise ActionError(f"{key} must be a boolean")
    (set_equipped if key == "equipped" else set_attuned)(item, value)
    save_actor(ctx, actor, item)
    return {
        "data": {
            "actorUuid": actor_uuid(actor),
            "itemUuid": documents.item_uuid(actor["_id"], item["_id"]),
            "itemName": item.get("name", ""),
            key: value,
        }
    }


@action("equip-item")
def equip_item(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _item_toggle(ctx, frame, "equipped")


@action("attune-item")
def attune_item(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _item_toggle(ctx, frame, "attuned")


# Currency ------------------------------------------------------------------------------------


@action("transfer-currency")
def transfer_currency(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    if text(frame, "sourceActorUuid") is None and text(frame, "sourceActorName") is None:
        raise ActionError("sourceActorUuid or sourceActorName is required")
    if text(frame, "targetActorUuid") is None and text(frame, "targetActorName") is None:
        raise ActionError("targetActorUuid or targetActorName is required")
    request = frame.get("currency")
    if not isinstance(request, dict):
        raise ActionError("currency object is required")
    source = resolve_actor(ctx, frame, "sourceActorUuid", "sourceActorName")
    target = resolve_actor(ctx, frame, "targetActorUuid", "targetActorName")
    assert_owner(ctx, source, "transfer currency from")
    assert_owner(ctx, target, "transfer currency to")
    try:
        amounts = coins.transfer_amounts(request)
        new_source, new_target = coins.plan_transfer(
            coins.balance(source), coins.balance(target), amounts, str(source.get("name", ""))
        )
    except coins.CurrencyError as exc:
        raise ActionError(str(exc)) from exc
    if source["_id"] == target["_id"]:
        # paying yourself moves nothing (the funds were still checked above)
        new_source = new_target = coins.balance(source)
        save_actor(ctx, source)
    elif amounts:
        coins.set_balance(source, new_source)
        coins.set_balance(target, new_target)
        save_actor(ctx, source)
        save_actor(ctx, target)
    return {
        "data": {
            "sourceActorUuid": actor_uuid(source),
            "targetActorUuid": actor_uuid(target),
            "transferred": request,
            "sourceBalance": new_source,
            "targetBalance": new_target,
        }
    }


@action("modify-currency")
def modify_currency(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    uuid = text(frame, "uuid") or text(frame, "actorUuid")
    denom = text(frame, "currency")
    amount = frame.get("amount")
    if uuid is None or denom is None or amount is None:
        raise ActionError("Missing required params: uuid, currency, amount")
    if not is_number(amount):
        raise ActionError("amount must be a number")
    if amount != int(amount):
        raise ActionError("amount must be a whole number of coins")
    actor = _actor_from_uuid(ctx, uuid)
    if actor is None:
        raise ActionError(f"Actor not found: {uuid}")
    if denom not in coins.DENOMINATIONS:
        raise ActionError(
            f"Invalid currency '{denom}'. Valid currencies: {', '.join(coins.DENOMINATIONS)}"
        )
    balance = coins.balance(actor)
    previous = balance[denom]
    current = coins.modify(previous, int(amount))
    coins.set_balance(actor, {denom: current})
    save_actor(ctx, actor)
    return {"data": {"currency": denom, "previous": previous, "current": current, "delta": amount}}


# Spell preparation ---------------------------------------------------------------------------


@action("prepare-spell")
def prepare_spell(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    uuid = text(frame, "uuid") or text(frame, "actorUuid")
    spell_name = text(frame, "spellName") or text(frame, "name")
    prepared = frame.get("prepared")
    if uuid is None or spell_name is None or prepared is None:
        raise ActionError("Missing required params: uuid, spellName, prepared")
    if not isinstance(prepared, bool):
        raise ActionError("prepared must be a boolean")
    actor = _actor_from_uuid(ctx, uuid)
    if actor is None:
        raise ActionError(f"Actor not found: {uuid}")
    spells = [i for i in actor.get("items") or [] if i.get("type") == "spell"]
    spell = documents.find_by_name(spells, spell_name)
    if spell is None:
        raise ActionError(f"Spell not found: {spell_name}")
    if not prepares_spells(actor):  # spec §4.1: only for classes that prepare spells
        raise ActionError(f"Actor '{actor.get('name', '')}' does not prepare spells")
    set_prepared(spell, prepared)
    save_actor(ctx, actor, spell)
    return {
        "data": {
            "spellName": spell.get("name", ""),
            "prepared": prepared,
            "uuid": documents.item_uuid(actor["_id"], spell["_id"]),
        }
    }
