"""The tools that change an actor directly: coins, items, hit points and conditions."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import (
    ACTOR,
    Tool,
    actor_details,
    dry,
    flags,
    plain,
)
from vttrelay.mcp.tools.names import resolve, resolve_actor


async def change_currency(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    reply = await relay.dnd5e.modify_currency(uuid, args["denomination"], args["amount"])
    return reply.get("data")


async def preview_change_currency(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    stats = (await actor_details(relay, uuid, "stats")).get("stats") or {}
    denom = args["denomination"]
    have = int((stats.get("currency") or {}).get(denom) or 0)
    after = max(0, have + int(args["amount"]))
    note = " (the world stops at 0)" if have + int(args["amount"]) < 0 else ""
    return dry(
        "modify-currency",
        {"actorUuid": uuid, "currency": denom, "amount": args["amount"]},
        change=f"{denom}: {have} -> {after}{note}",
    )


async def transfer_currency(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.dnd5e.transfer_currency(
        args["currency"],
        source_actor_uuid=await resolve_actor(relay, args["from_actor"]),
        target_actor_uuid=await resolve_actor(relay, args["to_actor"]),
    )
    return reply.get("data")


async def preview_transfer_currency(relay: Relay, args: dict[str, Any]) -> Any:
    source = await resolve_actor(relay, args["from_actor"])
    target = await resolve_actor(relay, args["to_actor"])
    have = ((await actor_details(relay, source, "stats")).get("stats") or {}).get("currency") or {}
    gets = ((await actor_details(relay, target, "stats")).get("stats") or {}).get("currency") or {}
    moves = {
        d: v for d, v in (args["currency"] or {}).items() if isinstance(v, int | float) and v > 0
    }
    short = [f"{d} (has {have.get(d, 0)}, needs {v})" for d, v in moves.items()
             if (have.get(d) or 0) < v]  # fmt: skip
    params = {"sourceActorUuid": source, "targetActorUuid": target, "currency": args["currency"]}
    if short:
        lacking = "would fail: not enough " + ", ".join(short)
        return dry("transfer-currency", params, change=lacking)
    return dry(
        "transfer-currency",
        params,
        change="; ".join(
            f"{d}: source {have.get(d, 0)} -> {have.get(d, 0) - v}, target {gets.get(d, 0)} -> "
            f"{gets.get(d, 0) + v}"
            for d, v in moves.items()
        )
        or "nothing to move",
    )


async def _held(relay: Relay, uuid: str, name: str) -> dict[str, Any] | None:
    item = views.find_item(await actor_details(relay, uuid, "items"), name)
    return views.item_view(item) if item else None


async def give_item(relay: Relay, args: dict[str, Any]) -> Any:
    return await relay.entities.give(
        from_uuid=await resolve_actor(relay, args["from_actor"]),
        to_uuid=await resolve_actor(relay, args["to_actor"]),
        item_name=args["item"],
        quantity=args.get("quantity", 1),
    )


async def preview_give_item(relay: Relay, args: dict[str, Any]) -> Any:
    source = await resolve_actor(relay, args["from_actor"])
    target = await resolve_actor(relay, args["to_actor"])
    qty = args.get("quantity", 1)
    params = {"fromUuid": source, "toUuid": target, "itemName": args["item"], "quantity": qty}
    held = await _held(relay, source, args["item"])
    if held is None:
        return dry("give", params, change=f"would fail: the source has no {args['item']!r}")
    return dry(
        "give",
        params,
        change=f"{args['item']}: source {held.get('quantity', 1)} -> "
        f"{held.get('quantity', 1) - qty}; the target gets {qty}",
    )


async def remove_item(relay: Relay, args: dict[str, Any]) -> Any:
    return await relay.entities.remove(
        actor_uuid=await resolve_actor(relay, args["actor"]),
        item_name=args["item"],
        quantity=args.get("quantity"),
    )


async def preview_remove_item(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    params = {"actorUuid": uuid, "itemName": args["item"], **flags(args, "quantity")}
    held = await _held(relay, uuid, args["item"])
    if held is None:
        return dry("remove", params, change=f"would fail: no {args['item']!r} on this actor")
    have = held.get("quantity", 1)
    qty = args.get("quantity")
    gone = qty is None or qty >= have
    return dry(
        "remove",
        params,
        change=f"{args['item']}: removed entirely ({have} held)"
        if gone
        else f"{args['item']}: {have} -> {have - qty}",
    )


async def equip_item(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.dnd5e.equip_item(
        args.get("equipped", True),
        actor_uuid=await resolve_actor(relay, args["actor"]),
        item_name=args["item"],
    )
    return reply.get("data")


async def preview_equip_item(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    want = args.get("equipped", True)
    params = {"actorUuid": uuid, "itemName": args["item"], "equipped": want}
    held = await _held(relay, uuid, args["item"])
    if held is None:
        return dry("equip-item", params, change=f"would fail: no {args['item']!r} on this actor")
    now = held.get("equipped", False)
    return dry(
        "equip-item",
        params,
        change=f"{args['item']}: equipped {now} -> {want}" if now != want else "no change",
    )


HP = "system.attributes.hp.value"


async def _hp_step(relay: Relay, args: dict[str, Any]) -> tuple[str, int, int, int]:
    """(uuid, current, maximum, the signed change that keeps HP within 0..max)."""
    uuid = await resolve_actor(relay, args["actor"])
    hp = ((await actor_details(relay, uuid, "stats")).get("stats") or {}).get("hp") or {}
    current, most = int(hp.get("value") or 0), int(hp.get("max") or 0)
    return uuid, current, most, max(0, min(most, current + int(args["amount"]))) - current


async def change_hp(relay: Relay, args: dict[str, Any]) -> Any:
    uuid, current, most, step = await _hp_step(relay, args)
    if step == 0:
        return {"uuid": uuid, "hp": f"{current}/{most}", "changed": False}
    change = relay.entities.increase if step > 0 else relay.entities.decrease
    reply = plain(await change(HP, abs(step), uuid=uuid))
    new = (reply.get("results") or [{}])[0].get("newValue")
    return {"uuid": uuid, "hp": f"{new}/{most}", "changed": True}


async def preview_change_hp(relay: Relay, args: dict[str, Any]) -> Any:
    uuid, current, most, step = await _hp_step(relay, args)
    route = "increase" if step >= 0 else "decrease"
    return dry(
        route,
        {"uuid": uuid, "attribute": HP, "amount": abs(step)},
        change=f"HP {current}/{most} -> {current + step}/{most}",
    )


async def set_condition(relay: Relay, args: dict[str, Any]) -> Any:
    found = await resolve(relay, args["actor"])
    status = args["condition"].lower()
    on = args.get("active", True)
    if on:
        await relay.effects.add(found.uuid, status_id=status)
    else:
        await relay.effects.remove(found.uuid, status_id=status)
    return {"summary": f"{found.name} is {'now' if on else 'no longer'} {status}"}


async def preview_set_condition(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    data = await actor_details(relay, uuid, "conditions")
    has = {str(c.get("id")) for c in data.get("conditions") or [] if isinstance(c, dict)}
    want = args.get("active", True)
    cond = args["condition"].lower()
    route = "add-effect" if want else "remove-effect"
    if (cond in has) == want:
        change = f"no change: {cond} is already {'on' if want else 'off'}"
    else:
        change = f"{cond}: {'added' if want else 'removed'}"
    return dry(route, {"uuid": uuid, "statusId": cond}, current=sorted(has), change=change)


TOOLS: tuple[Tool, ...] = (
    Tool(
        "change_hp",
        "Damage (negative amount) or heal (positive) an actor; HP stays between 0 and max.",
        {"actor": ACTOR, "amount": {"type": "integer"}},
        ("actor", "amount"),
        scopes=("dnd5e", "entity:write"),
        run=change_hp,
        preview=preview_change_hp,
    ),
    Tool(
        "set_condition",
        "Add or remove a condition (prone, poisoned, frightened, ...) on an actor.",
        {
            "actor": ACTOR,
            "condition": {"type": "string", "description": "Status id, e.g. 'prone'."},
            "active": {"type": "boolean", "default": True, "description": "False removes it."},
        },
        ("actor", "condition"),
        scopes=("dnd5e", "effects:write"),
        run=set_condition,
        preview=preview_set_condition,
    ),
    Tool(
        "change_currency",
        "Add (positive) or spend (negative) coins of one denomination on an actor.",
        {
            "actor": ACTOR,
            "denomination": {"type": "string", "enum": list(views.DENOMINATIONS)},
            "amount": {"type": "integer"},
        },
        ("actor", "denomination", "amount"),
        scopes=("dnd5e",),
        run=change_currency,
        preview=preview_change_currency,
    ),
    Tool(
        "transfer_currency",
        "Move coins from one actor to another (no conversion between denominations).",
        {
            "from_actor": ACTOR,
            "to_actor": ACTOR,
            "currency": {
                "type": "object",
                "description": 'Coins to move, e.g. {"gp": 5, "sp": 3}.',
                "properties": {d: {"type": "integer", "minimum": 0} for d in views.DENOMINATIONS},
                "additionalProperties": False,
            },
        },
        ("from_actor", "to_actor", "currency"),
        scopes=("dnd5e",),
        run=transfer_currency,
        preview=preview_transfer_currency,
    ),
    Tool(
        "give_item",
        "Move an item (or some of a stack) from one actor's inventory to another's.",
        {
            "from_actor": ACTOR,
            "to_actor": ACTOR,
            "item": {"type": "string", "description": "The item's name on the giver."},
            "quantity": {"type": "integer", "minimum": 1, "default": 1},
        },
        ("from_actor", "to_actor", "item"),
        scopes=("dnd5e", "entity:write"),
        run=give_item,
        preview=preview_give_item,
    ),
    Tool(
        "remove_item",
        "Remove an item (or some of a stack) from an actor's inventory.",
        {
            "actor": ACTOR,
            "item": {"type": "string", "description": "The item's name."},
            "quantity": {"type": "integer", "minimum": 1, "description": "Default: all."},
        },
        ("actor", "item"),
        scopes=("dnd5e", "entity:write"),
        run=remove_item,
        preview=preview_remove_item,
    ),
    Tool(
        "equip_item",
        "Equip or unequip an item of an actor (armor, shield, weapon).",
        {
            "actor": ACTOR,
            "item": {"type": "string", "description": "The item's name."},
            "equipped": {"type": "boolean", "default": True},
        },
        ("actor", "item"),
        scopes=("dnd5e",),
        run=equip_item,
        preview=preview_equip_item,
    ),
)
