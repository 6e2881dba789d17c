"""The acting tools: attacks, using items, spells and features, and rests; each answers what
happened."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.client import VttRelayError
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import (
    ACTOR,
    Tool,
    ToolInputError,
    actor_details,
    dry,
    plain,
)
from vttrelay.mcp.tools.names import Found, active_tokens, resolve, resolve_actor

USE_ROUTES = {"item": "use-item", "spell": "use-spell", "feature": "use-feature"}
USE_KINDS = {
    "use-item": (),
    "use-spell": ("spell",),
    "use-feature": ("feat", "class", "subclass", "background"),
}


async def _use_call(
    relay: Relay, args: dict[str, Any], name: str
) -> tuple[dict[str, Any], Found, list[Found]]:
    """The use call's parameters, the actor and the targets (resolved on the active scene;
    `target`, or `targets`, each once)."""
    scene = await active_tokens(relay)
    actor = await resolve(relay, args["actor"], scene)
    params: dict[str, Any] = {"actorUuid": actor.uuid, "abilityName": name}
    wanted = list(args.get("targets") or []) or ([args["target"]] if args.get("target") else [])
    targets: dict[str, Found] = {}
    for who in wanted:
        found = await resolve(relay, who, scene)
        targets.setdefault(found.uuid, found)
    if len(targets) == 1:
        params["targetUuid"] = next(iter(targets))
    elif targets:
        params["targetUuids"] = list(targets)
    if targets and args.get("apply_damage", True):
        params["applyDamage"] = True
    return params, actor, list(targets.values())


async def _missing(relay: Relay, actor: Found, name: str, route: str) -> str:
    """A failed look-up's answer: what the actor has that this tool can use."""
    data = await actor_details(relay, actor.uuid, "items", "spells", "features")
    kinds = USE_KINDS[route]
    names = sorted(
        {
            str(i.get("name"))
            for section in ("items", "spells", "features")
            for i in data.get(section) or []
            if not kinds or i.get("type") in kinds
        }
    )
    what = {"use-item": "item", "use-spell": "spell", "use-feature": "feature"}[route]
    return f"{actor.name} has no {what} named {name!r}; it has: " + (", ".join(names) or "none")


async def _used(relay: Relay, args: dict[str, Any], route: str, name: str) -> dict[str, Any]:
    params, actor, targets = await _use_call(relay, args, name)
    try:
        reply = plain(await relay.call(route, **params))
    except VttRelayError as exc:
        if "not found on actor" in str(exc.body):
            raise ToolInputError(await _missing(relay, actor, name, route)) from exc
        raise
    data = plain(reply.get("data") or {})
    if len(targets) > 1:
        return views.outcome_on_targets(actor.name, name, [t.name for t in targets], data)
    return views.outcome_view(actor.name, name, targets[0].name if targets else None, data)


async def use(relay: Relay, args: dict[str, Any]) -> Any:
    return await _used(relay, args, USE_ROUTES[args.get("kind", "item")], args["name"])


async def _preview_use(relay: Relay, args: dict[str, Any], route: str) -> Any:
    params, _, targets = await _use_call(relay, args, args["name"])
    data = await actor_details(relay, params["actorUuid"], "items", "spells", "features")
    item = views.find_item(data, args["name"], USE_KINDS[route])
    if item is None:
        return dry(route, params, change=f"would fail: no {args['name']!r} on this actor")
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
    kinds = {a.get("type") for a in ((item.get("system") or {}).get("activities") or {}).values()}
    if "attack" in kinds and len(targets) > 1:
        return dry(route, params, change="would fail: an attack takes one target")
    if "attack" in kinds:
        effects.append("make an attack roll" + (f" against {targets[0].name}" if targets else ""))
    if "save" in kinds and targets:
        effects.append(f"each of {', '.join(t.name for t in targets)} makes a saving throw")
    return dry(
        route,
        params,
        item=seen,
        change="would use it: " + ("; ".join(effects) if effects else "no resource is spent"),
    )


async def preview_use(relay: Relay, args: dict[str, Any]) -> Any:
    return await _preview_use(relay, args, USE_ROUTES[args.get("kind", "item")])


async def attack(relay: Relay, args: dict[str, Any]) -> Any:
    return await _used(relay, args, "use-item", args["weapon"])


async def preview_attack(relay: Relay, args: dict[str, Any]) -> Any:
    return await _preview_use(relay, {**args, "name": args["weapon"]}, "use-item")


async def rest(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    route = "long-rest" if args["kind"] == "long" else "short-rest"
    if route == "long-rest":
        reply = await relay.dnd5e.long_rest(actor_uuid=uuid)
    else:
        reply = await relay.dnd5e.short_rest(actor_uuid=uuid, auto_hd=args.get("spend_hit_dice"))
    result = plain(reply.get("data") or {}).get("result") or {}
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
    return dry(
        route,
        {"actorUuid": uuid},
        current={k: summary[k] for k in ("hp", "spellSlots", "resources") if k in summary},
        change=change,
    )


TARGET = {**ACTOR, "description": "The target: a token of the active scene ('Goblin 2'), an "
          "actor, or a uuid. Healing without a target heals the actor."}  # fmt: skip
MAX_TARGETS = 50
TARGETS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 200},
    "minItems": 1,
    "maxItems": MAX_TARGETS,
    "description": "Several targets at once (a spell's area: Burning Hands on 'Goblin 1' and "
    "'Goblin 2'): spent and rolled once, each target saves and takes damage on its own.",
}
APPLY = {
    "type": "boolean",
    "default": True,
    "description": "The target takes the damage (false: only roll it).",
}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "attack",
        "Attack with one of an actor's weapons at a target: answers the attack roll against "
        "the target's AC (hit, miss, critical), the damage rolled and taken, and the target's HP "
        "after. One call per attack.",
        {
            "actor": ACTOR,
            "weapon": {"type": "string", "maxLength": 200, "description": "The weapon's name."},
            "target": TARGET,
            "apply_damage": APPLY,
        },
        ("actor", "weapon"),
        scopes=("dnd5e",),
        run=attack,
        preview=preview_attack,
    ),
    Tool(
        "use",
        "Use an item, cast a spell or use a feature (a healing potion, Burning Hands, Second "
        "Wind), spending its uses, slots or quantity as the rules say: answers what happened "
        "(attack against AC, each target's saving throw, damage, healing, HP after, what was "
        "spent). One call for every target of an area spell (`targets`).",
        {
            "actor": ACTOR,
            "kind": {"type": "string", "enum": list(USE_ROUTES), "default": "item"},
            "name": {
                "type": "string",
                "maxLength": 200,
                "description": "The item's, spell's or feature's name.",
            },
            "target": TARGET,
            "targets": TARGETS,
            "apply_damage": APPLY,
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
)
