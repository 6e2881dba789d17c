"""The `/dnd5e/*` actions on inventory and spells (world-behaviour §3.11-3.13): equip-item,
attune-item, transfer-currency (validated per denomination, all or nothing), modify-currency and
prepare-spell."""

from __future__ import annotations

from typing import Any

from vttrelay.world.actions.dnd5e.common import (
    actor_from_uuid,
    actor_uuid,
    check_choice,
    is_number,
    resolve_actor,
    resolve_item,
    save_actor,
    text,
)
from vttrelay.world.errors import ActionError, CurrencyError
from vttrelay.world.model import documents
from vttrelay.world.rules import currency as coins
from vttrelay.world.rules.items import set_attuned, set_equipped
from vttrelay.world.rules.permissions import assert_owner
from vttrelay.world.rules.spells import prepares_spells, set_prepared
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

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
            "itemUuid": f"{actor_uuid(actor)}.Item.{item['_id']}",
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
    except CurrencyError as exc:
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
    actor = actor_from_uuid(ctx, uuid)
    if actor is None:
        raise ActionError(f"Actor not found: {uuid}")
    check_choice(denom, "currency", coins.DENOMINATIONS, "currencies")
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
    actor = actor_from_uuid(ctx, uuid)
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
            "uuid": f"{actor_uuid(actor)}.Item.{spell['_id']}",
        }
    }
