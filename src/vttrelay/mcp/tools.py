"""The MCP tool table: a curated set of tools, each a few relay calls and a compact view.

Agents choose worse past ~30-40 tools, so this is not one tool per route: ~20 tools cover what a
game master's or player's agent does (look at the world, find things, read an actor, roll, use
items and spells, rest, move money and items, chat, run an encounter, move tokens). Each entry
has its JSON schema, a description that says when to use it, the API-key scopes it needs (the
server hides tools the key can't use), `run` (the call) and, for tools that change the world,
`preview`: what `dry_run: true` answers. A preview only reads: it fetches the current state and
describes the change the call would make, computed from that state; it never does and undoes.

Every call goes through the relay client (`vttrelay.client`), so the relay enforces the key's
scopes, allowed worlds and forced `userId` exactly as for any other client; a refusal comes back
as a `VttRelayError` and the server turns it into a tool error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from vttrelay.client import AsyncClient as Relay
from vttrelay.client.types import DetailSection
from vttrelay.mcp import views


class ToolInputError(ValueError):
    """The tool's arguments can't be used (an unknown actor name, an ambiguous one, ...)."""


Run = Callable[[Relay, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class ToolImage:
    """A tool result that is a picture (the server answers it as MCP image content)."""

    data: bytes
    mime_type: str


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()  # the key needs all of them for the tool to be listed
    run: Run | None = None
    preview: Run | None = None  # set for tools that change the world: answers dry_run
    annotations: dict[str, Any] = field(default_factory=dict)

    @property
    def changes(self) -> bool:
        return self.preview is not None

    def input_schema(self) -> dict[str, Any]:
        props = dict(self.properties)
        if self.changes:
            props["dry_run"] = {
                "type": "boolean",
                "default": False,
                "description": "Only say what would change (reads the current state, changes "
                "nothing).",
            }
        return {
            "type": "object",
            "properties": props,
            "required": list(self.required),
            "additionalProperties": False,
        }


# Argument helpers ---------------------------------------------------------------------------------

ACTOR = {
    "type": "string",
    "description": "The actor's name (as in the world, case-insensitive) or its uuid "
    "(`Actor.<id>`).",
}
ADV = {"type": "boolean", "description": "Roll with advantage."}
DIS = {"type": "boolean", "description": "Roll with disadvantage."}
BONUS = {"type": "string", "description": "An extra bonus formula, e.g. `1d4`."}


async def resolve_actor(relay: Relay, actor: str) -> str:
    """An actor's uuid from a uuid or a name (exact, case-insensitive, via /search)."""
    actor = actor.strip()
    if actor.startswith("Actor.") or ".Actor." in actor:
        return actor
    reply = _plain(await relay.search.find(query=actor, filter="Actor", limit=20))
    hits = [r for r in views.search_results(reply) if str(r["name"]).casefold() == actor.casefold()]
    if len(hits) == 1:
        return str(hits[0]["uuid"])
    if not hits:
        near = [r["name"] for r in views.search_results(reply)][:5]
        raise ToolInputError(
            f"No actor named {actor!r}" + (f"; similar: {', '.join(near)}" if near else "")
        )
    raise ToolInputError(
        f"{len(hits)} actors are named {actor!r}; give a uuid: "
        + ", ".join(str(h["uuid"]) for h in hits)
    )


async def actor_details(relay: Relay, uuid: str, *sections: DetailSection) -> dict[str, Any]:
    reply = await relay.dnd5e.get_actor_details(uuid, list(sections))
    return dict(reply.get("data") or {})


def _plain(reply: Any) -> dict[str, Any]:
    """A typed reply read as the plain dict it is (for keys its TypedDict doesn't name)."""
    return cast(dict[str, Any], reply)


def _dry(call: str, params: dict[str, Any], **facts: Any) -> dict[str, Any]:
    return {"dryRun": True, "wouldCall": call, "params": params, **facts}


def _flags(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {n: args[n] for n in names if args.get(n) is not None}


# Reading ------------------------------------------------------------------------------------------


async def world_overview(relay: Relay, args: dict[str, Any]) -> Any:
    info = await relay.utility.world_info()
    structure = await relay.structure.get(types="Actor,Scene")  # as the module reads it
    tree = structure.get("data")
    return views.world_overview(_plain(info.get("data") or {}), _plain(tree) if tree else None)


async def find(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.search.find(
        query=args["name"], filter=args.get("type"), limit=args.get("limit", 20)
    )
    return views.search_results(_plain(reply))


async def actor_summary(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    return views.actor_summary(await actor_details(relay, uuid, *views.SUMMARY_SECTIONS))


async def sheet_picture(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    jpeg = args.get("format") == "jpeg"
    data = await relay.sheets.image(uuid=uuid, format="jpeg" if jpeg else "png", scale=0.8)
    return ToolImage(data, "image/jpeg" if jpeg else "image/png")


async def read_chat(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.chat.messages(limit=args.get("limit", 10))
    data = _plain(reply.get("data") or {})
    return {"total": data.get("total"), "messages": views.chat_view(data.get("messages") or [])}


async def encounters(relay: Relay, args: dict[str, Any]) -> Any:
    reply = _plain(await relay.encounters.list())
    return [views.encounter_view(e) for e in reply.get("encounters") or []]


async def scene_tokens(relay: Relay, args: dict[str, Any]) -> Any:
    reply = _plain(await relay.canvas.get("tokens", scene_id=args.get("sceneId")))
    return {
        "sceneId": reply.get("sceneId"),
        "tokens": [views.token_view(t) for t in reply.get("data") or []],
    }


# Rolls --------------------------------------------------------------------------------------------

CHECK_ROUTES = {
    "skill": "skill-check",
    "ability": "ability-check",
    "save": "ability-save",
    "death": "death-save",
}


async def _check_call(relay: Relay, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = args["kind"]
    params: dict[str, Any] = {"actorUuid": await resolve_actor(relay, args["actor"])}
    if kind == "skill":
        if not args.get("skill"):
            raise ToolInputError("kind 'skill' needs `skill` (e.g. 'ste' or 'Stealth')")
        params["skill"] = _skill_id(args["skill"])
    elif kind in ("ability", "save"):
        if not args.get("ability"):
            raise ToolInputError(f"kind {kind!r} needs `ability` (str, dex, con, int, wis, cha)")
        params["ability"] = str(args["ability"]).lower()[:3]
    params.update(_flags(args, "advantage", "disadvantage", "bonus"))
    if kind == "death":
        params.pop("disadvantage", None)
        params.pop("bonus", None)
    return CHECK_ROUTES[kind], params


def _skill_id(skill: str) -> str:
    by_name = {v.casefold(): k for k, v in views.SKILL_NAMES.items()}
    return by_name.get(skill.casefold(), skill.lower())


async def roll_check(relay: Relay, args: dict[str, Any]) -> Any:
    route, params = await _check_call(relay, args)
    return _plain(await relay.call(route, **params)).get("data")


async def preview_check(relay: Relay, args: dict[str, Any]) -> Any:
    route, params = await _check_call(relay, args)
    data = await actor_details(relay, params["actorUuid"], "abilities", "skills", "stats")
    if route == "skill-check":
        modifier = (data.get("skills") or {}).get(params["skill"], {}).get("total")
        what = views.SKILL_NAMES.get(params["skill"], params["skill"]) + " check"
    elif route == "ability-check":
        modifier = (data.get("abilities") or {}).get(params["ability"], {}).get("mod")
        what = f"{params['ability']} check"
    elif route == "ability-save":
        modifier = (data.get("abilities") or {}).get(params["ability"], {}).get("save")
        what = f"{params['ability']} saving throw"
    else:
        modifier, what = 0, "death saving throw"
        deaths = (data.get("stats") or {}).get("deathSaves")
        params["currentDeathSaves"] = deaths
    dice = "2d20kh" if args.get("advantage") else "2d20kl" if args.get("disadvantage") else "1d20"
    return _dry(
        route,
        params,
        change=f"would roll {dice}{views.signed(modifier)}"
        + (f" + {args['bonus']}" if args.get("bonus") else "")
        + f" ({what}) and post it to chat",
    )


async def roll_dice(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.rolls.roll(args["formula"], flavor=args.get("flavor"))
    return reply.get("data")


async def preview_roll(relay: Relay, args: dict[str, Any]) -> Any:
    params = _flags(args, "formula", "flavor")
    return _dry("roll", params, change=f"would roll {args['formula']} and post it to chat")


# Using items, spells, features; attacks -----------------------------------------------------------

USE_ROUTES = {"item": "use-item", "spell": "use-spell", "feature": "use-feature"}
USE_KINDS = {
    "use-item": (),
    "use-spell": ("spell",),
    "use-feature": ("feat", "class", "subclass", "background"),
}


async def _use_call(relay: Relay, args: dict[str, Any], route: str) -> dict[str, Any]:
    params = {"actorUuid": await resolve_actor(relay, args["actor"]), "abilityName": args["name"]}
    if args.get("target"):
        params["targetName"] = args["target"]
    return params


async def use(relay: Relay, args: dict[str, Any]) -> Any:
    route = USE_ROUTES[args.get("kind", "item")]
    return _plain(await relay.call(route, **await _use_call(relay, args, route))).get("data")


async def _preview_use(relay: Relay, args: dict[str, Any], route: str) -> Any:
    params = await _use_call(relay, args, route)
    data = await actor_details(relay, params["actorUuid"], "items", "spells", "features")
    item = views.find_item(data, args["name"], USE_KINDS[route])
    if item is None:
        return _dry(route, params, change=f"would fail: no {args['name']!r} on this actor")
    seen = views.item_view(item)
    effects = []
    if seen.get("type") == "spell" and seen.get("level"):
        slots = await actor_details(relay, params["actorUuid"], "spells")
        slot = (slots.get("spellSlots") or {}).get(f"spell{seen['level']}") or {}
        effects.append(
            f"spend a level-{seen['level']} spell slot ({slot.get('value', 0)}/"
            f"{slot.get('max', 0)} left)"
        )
    if seen.get("uses"):
        effects.append(f"spend one use ({seen['uses']} left)")
    elif seen.get("type") == "consumable" and "quantity" in seen:
        effects.append(f"use up one ({seen['quantity']} held)")
    if any(
        a.get("type") == "attack"
        for a in ((item.get("system") or {}).get("activities") or {}).values()
    ):
        effects.append(
            "make an attack roll" + (f" against {args['target']}" if "target" in args else "")
        )
    return _dry(
        route,
        params,
        item=seen,
        change="would use it: " + ("; ".join(effects) if effects else "no resource is spent"),
    )


async def preview_use(relay: Relay, args: dict[str, Any]) -> Any:
    return await _preview_use(relay, args, USE_ROUTES[args.get("kind", "item")])


async def attack(relay: Relay, args: dict[str, Any]) -> Any:
    params = await _use_call(relay, {**args, "name": args["weapon"]}, "use-item")
    reply = await relay.dnd5e.use_item(
        params["actorUuid"],
        ability_name=params["abilityName"],
        target_name=params.get("targetName"),
    )
    return reply.get("data")


async def preview_attack(relay: Relay, args: dict[str, Any]) -> Any:
    return await _preview_use(relay, {**args, "name": args["weapon"]}, "use-item")


# Rests --------------------------------------------------------------------------------------------


async def rest(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    route = "long-rest" if args["kind"] == "long" else "short-rest"
    if route == "long-rest":
        reply = await relay.dnd5e.long_rest(actor_uuid=uuid)
    else:
        reply = await relay.dnd5e.short_rest(actor_uuid=uuid, auto_hd=args.get("spend_hit_dice"))
    result = _plain(reply.get("data") or {}).get("result") or {}
    return {
        "rest": result.get("type"),
        "hitPointsRecovered": result.get("dhp"),
        "hitDiceChange": result.get("dhd"),
        "changed": sorted(k for k in (result.get("updateData") or {}) if k != "_id"),
    }


async def preview_rest(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    data = await actor_details(relay, uuid, "stats", "spells", "resources")
    summary = views.actor_summary(data)
    hp = (data.get("stats") or {}).get("hp") or {}
    route = "long-rest" if args["kind"] == "long" else "short-rest"
    if route == "long-rest":
        change = (
            f"would restore HP {hp.get('value')}/{hp.get('max')} to {hp.get('max')}, every spell "
            "slot, resources and uses that recover on a long rest, and hit dice"
        )
    else:
        change = "would restore pact slots and short-rest resources and uses" + (
            f"; would spend hit dice to heal (HP {hp.get('value')}/{hp.get('max')})"
            if args.get("spend_hit_dice")
            else "; no hit dice spent (spend_hit_dice is off)"
        )
    return _dry(
        route,
        {"actorUuid": uuid},
        current={k: summary[k] for k in ("hp", "spellSlots", "resources") if k in summary},
        change=change,
    )


# Money, items, hit points, conditions -------------------------------------------------------------


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
    return _dry(
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
        return _dry("transfer-currency", params, change=lacking)
    return _dry(
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
        return _dry("give", params, change=f"would fail: the source has no {args['item']!r}")
    return _dry(
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
    params = {"actorUuid": uuid, "itemName": args["item"], **_flags(args, "quantity")}
    held = await _held(relay, uuid, args["item"])
    if held is None:
        return _dry("remove", params, change=f"would fail: no {args['item']!r} on this actor")
    have = held.get("quantity", 1)
    qty = args.get("quantity")
    gone = qty is None or qty >= have
    return _dry(
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
        return _dry("equip-item", params, change=f"would fail: no {args['item']!r} on this actor")
    now = held.get("equipped", False)
    return _dry(
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
    reply = _plain(await change(HP, abs(step), uuid=uuid))
    new = (reply.get("results") or [{}])[0].get("newValue")
    return {"uuid": uuid, "hp": f"{new}/{most}", "changed": True}


async def preview_change_hp(relay: Relay, args: dict[str, Any]) -> Any:
    uuid, current, most, step = await _hp_step(relay, args)
    route = "increase" if step >= 0 else "decrease"
    return _dry(
        route,
        {"uuid": uuid, "attribute": HP, "amount": abs(step)},
        change=f"HP {current}/{most} -> {current + step}/{most}",
    )


async def set_condition(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    status = args["condition"].lower()
    if args.get("active", True):
        return (await relay.effects.add(uuid, status_id=status)).get("data")
    return (await relay.effects.remove(uuid, status_id=status)).get("data")


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
    return _dry(route, {"uuid": uuid, "statusId": cond}, current=sorted(has), change=change)


# Chat ---------------------------------------------------------------------------------------------


async def send_chat(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.chat.send(
        args["content"], alias=args.get("alias"), flavor=args.get("flavor")
    )
    return views.chat_view([_plain(reply.get("data") or {})])[0]


async def preview_send_chat(relay: Relay, args: dict[str, Any]) -> Any:
    params = _flags(args, "content", "alias", "flavor")
    who = f" as {args['alias']}" if args.get("alias") else ""
    text = views.plain_text(args["content"])
    return _dry("chat-send", params, change=f"would post {text!r}{who}")


# Encounters and tokens ----------------------------------------------------------------------------

ENCOUNTER_ROUTES = {
    "start": "start-encounter",
    "next_turn": "next-turn",
    "previous_turn": "last-turn",
    "next_round": "next-round",
    "previous_round": "last-round",
    "end": "end-encounter",
}


def _encounter_params(args: dict[str, Any]) -> dict[str, Any]:
    if args["action"] == "start":
        return {"startWithPlayers": args.get("with_players", True), **_flags(args, "name")}
    return _flags(args, "encounterId")


async def encounter(relay: Relay, args: dict[str, Any]) -> Any:
    route = ENCOUNTER_ROUTES[args["action"]]
    reply = _plain(await relay.call(route, **_encounter_params(args)))
    if isinstance(reply.get("encounter"), dict):
        return views.encounter_view(reply["encounter"])
    return {k: v for k, v in reply.items() if k not in ("type", "requestId")}


async def preview_encounter(relay: Relay, args: dict[str, Any]) -> Any:
    route = ENCOUNTER_ROUTES[args["action"]]
    params = _encounter_params(args)
    listed = _plain(await relay.encounters.list()).get("encounters") or []
    running = [views.encounter_view(e) for e in listed]
    if args["action"] == "start":
        return _dry(
            route,
            params,
            running=running,
            change="would start a new encounter"
            + (" with the players' tokens" if params["startWithPlayers"] else ""),
        )
    chosen = [e for e in running if e["id"] == params.get("encounterId")] or running[:1]
    if not chosen:
        return _dry(route, params, change="would fail: no encounter is running")
    e = chosen[0]
    n = len(e["order"])
    turn = e["turn"] if isinstance(e["turn"], int) else 0
    rnd = e["round"] or 0
    if args["action"] == "next_turn":
        turn, rnd = (turn + 1, rnd) if turn + 1 < n else (0, rnd + 1)
    elif args["action"] == "previous_turn":
        turn, rnd = (turn - 1, rnd) if turn > 0 else (max(n - 1, 0), max(rnd - 1, 0))
    elif args["action"] == "next_round":
        turn, rnd = 0, rnd + 1
    elif args["action"] == "previous_round":
        turn, rnd = 0, max(rnd - 1, 0)
    else:
        return _dry(route, params, current=e, change=f"would end encounter {e['id']}")
    who = e["order"][turn]["name"] if 0 <= turn < n else None
    return _dry(
        route,
        params,
        current=e,
        change=f"round {e['round']} turn {e['turn']} ({e['current']}) -> round {rnd} turn "
        f"{turn} ({who})",
    )


async def move_token(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.canvas.move_token(
        args["x"], args["y"], name=args["name"], scene_id=args.get("sceneId")
    )
    return reply.get("data")


async def preview_move_token(relay: Relay, args: dict[str, Any]) -> Any:
    params = _flags(args, "name", "x", "y", "sceneId")
    tokens = _plain(await relay.canvas.get("tokens", scene_id=args.get("sceneId")))
    wanted = str(args["name"]).casefold()
    found = [t for t in tokens.get("data") or [] if str(t.get("name", "")).casefold() == wanted]
    if not found:
        return _dry("move-token", params, change=f"would fail: no token named {args['name']!r}")
    token = found[0]
    measured = await relay.canvas.measure_distance(
        origin_x=token.get("x"),
        origin_y=token.get("y"),
        target_x=args["x"],
        target_y=args["y"],
        scene_id=args.get("sceneId"),
    )
    dist = _plain(measured.get("data") or {})
    return _dry(
        "move-token",
        params,
        change=f"{token.get('name')}: ({token.get('x')}, {token.get('y')}) -> ({args['x']}, "
        f"{args['y']}), {dist.get('distance')} {dist.get('units', '')}".rstrip(),
    )


# The table ----------------------------------------------------------------------------------------

READ = {"readOnlyHint": True}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "world_overview",
        "Start here: the world's title and game system, its users, the active scene, and every "
        "actor and scene by name with its uuid.",
        {},
        scopes=("world:info", "structure:read"),
        run=world_overview,
        annotations=READ,
    ),
    Tool(
        "find",
        "Find documents (actors, items, scenes, journal entries, ...) by name, when you need a "
        "uuid or don't know the exact name.",
        {
            "name": {"type": "string", "description": "All or part of the name."},
            "type": {
                "type": "string",
                "description": "Only this document type: Actor, Item, Scene, JournalEntry, ...",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        },
        ("name",),
        scopes=("search",),
        run=find,
        annotations=READ,
    ),
    Tool(
        "actor_summary",
        "A compact sheet of one actor: abilities, HP, AC, speed, conditions, proficient "
        "skills, spell slots and prepared spells, weapons, consumables, features with uses, "
        "money. Use it before acting for a character.",
        {"actor": ACTOR},
        ("actor",),
        scopes=("dnd5e",),
        run=actor_summary,
        annotations=READ,
    ),
    Tool(
        "sheet_picture",
        "A picture of an actor's character sheet (abilities, HP, AC, skills, attacks, spells, "
        "features, inventory): to show a player, or to post. For reading numbers use "
        "actor_summary.",
        {
            "actor": ACTOR,
            "format": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
        },
        ("actor",),
        scopes=("sheet:read", "search"),
        run=sheet_picture,
        annotations=READ,
    ),
    Tool(
        "roll_check",
        "Roll a skill check, ability check, saving throw or death save for an actor (D&D 5e); "
        "the roll is posted to chat.",
        {
            "actor": ACTOR,
            "kind": {"type": "string", "enum": list(CHECK_ROUTES)},
            "skill": {"type": "string", "description": "For kind 'skill': 'ste' or 'Stealth'."},
            "ability": {"type": "string", "enum": list(views.ABILITIES)},
            "advantage": ADV,
            "disadvantage": DIS,
            "bonus": BONUS,
        },
        ("actor", "kind"),
        scopes=("dnd5e",),
        run=roll_check,
        preview=preview_check,
    ),
    Tool(
        "roll_dice",
        "Roll any dice formula (`2d6+3`, `4d6kh3`) that is not a check of an actor.",
        {
            "formula": {"type": "string", "description": "Dice formula."},
            "flavor": {"type": "string", "description": "What the roll is for."},
        },
        ("formula",),
        scopes=("roll:execute",),
        run=roll_dice,
        preview=preview_roll,
    ),
    Tool(
        "attack",
        "Attack with one of an actor's weapons, optionally at a target token: returns the "
        "attack roll.",
        {
            "actor": ACTOR,
            "weapon": {"type": "string", "description": "The weapon's name on the actor."},
            "target": {"type": "string", "description": "Target token or actor name."},
        },
        ("actor", "weapon"),
        scopes=("dnd5e",),
        run=attack,
        preview=preview_attack,
    ),
    Tool(
        "use",
        "Use an item, cast a spell or use a feature of an actor, spending its uses, slots or "
        "quantity as the rules say.",
        {
            "actor": ACTOR,
            "kind": {"type": "string", "enum": list(USE_ROUTES), "default": "item"},
            "name": {"type": "string", "description": "The item's, spell's or feature's name."},
            "target": {"type": "string", "description": "Target token or actor name."},
        },
        ("actor", "name"),
        scopes=("dnd5e",),
        run=use,
        preview=preview_use,
    ),
    Tool(
        "rest",
        "A short or long rest for an actor (recovers HP, slots, hit dice and uses per the rules).",
        {
            "actor": ACTOR,
            "kind": {"type": "string", "enum": ["short", "long"]},
            "spend_hit_dice": {
                "type": "boolean",
                "description": "Short rest: spend hit dice automatically to heal.",
            },
        },
        ("actor", "kind"),
        scopes=("dnd5e",),
        run=rest,
        preview=preview_rest,
    ),
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
    Tool(
        "read_chat",
        "The latest chat messages (newest first) as speaker and plain text, with roll totals.",
        {"limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}},
        scopes=("chat:read",),
        run=read_chat,
        annotations=READ,
    ),
    Tool(
        "send_chat",
        "Post a chat message to the table, optionally under another speaker name.",
        {
            "content": {"type": "string", "description": "The message (HTML allowed)."},
            "alias": {"type": "string", "description": "Speaker name to show."},
            "flavor": {"type": "string", "description": "A short heading."},
        },
        ("content",),
        scopes=("chat:write",),
        run=send_chat,
        preview=preview_send_chat,
    ),
    Tool(
        "encounters",
        "The running encounters: round, turn, whose turn it is and the initiative order.",
        {},
        scopes=("encounter:read",),
        run=encounters,
        annotations=READ,
    ),
    Tool(
        "encounter",
        "Run combat: start an encounter (with the players' tokens), advance or go back a turn "
        "or round, or end it.",
        {
            "action": {"type": "string", "enum": list(ENCOUNTER_ROUTES)},
            "encounterId": {"type": "string", "description": "Default: the current encounter."},
            "with_players": {"type": "boolean", "default": True, "description": "start only"},
            "name": {"type": "string", "description": "start only: the encounter's name."},
        },
        ("action",),
        scopes=("encounter:manage", "encounter:read"),
        run=encounter,
        preview=preview_encounter,
    ),
    Tool(
        "scene_tokens",
        "The tokens on a scene (the active one by default) with their positions, before moving "
        "one.",
        {"sceneId": {"type": "string"}},
        scopes=("canvas:read",),
        run=scene_tokens,
        annotations=READ,
    ),
    Tool(
        "move_token",
        "Move a token (by name) to a position on its scene, in pixels.",
        {
            "name": {"type": "string", "description": "The token's name."},
            "x": {"type": "number"},
            "y": {"type": "number"},
            "sceneId": {"type": "string", "description": "Default: the active scene."},
        },
        ("name", "x", "y"),
        scopes=("canvas:write", "canvas:read"),
        run=move_token,
        preview=preview_move_token,
    ),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def usable(scopes: tuple[str, ...] | list[str] | None) -> list[Tool]:
    """The tools a key with these scopes can use (all of them when the scopes are unknown)."""
    if scopes is None:
        return list(TOOLS)
    held = set(scopes)
    return [t for t in TOOLS if set(t.scopes) <= held]
