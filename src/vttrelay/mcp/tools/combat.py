"""The encounter tracker for an agent running a fight: start an encounter with the tokens it
names (the heroes, the goblins, the bandit), initiative rolled or set, combatants added, removed
or marked defeated, turns and rounds moved on, the encounter ended. Every action answers the
tracker as it now is: round, whose turn, the order with initiative and who is defeated, named
by the scene's handles ("Goblin 2"), and which defeated combatants a turn passed over."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import READ, Tool, ToolInputError, dry, plain
from vttrelay.mcp.tools.names import SceneTokens, active_tokens, resolve

NAVIGATION = {
    "next_turn": "next-turn",
    "previous_turn": "last-turn",
    "next_round": "next-round",
    "previous_round": "last-round",
}
ACTIONS = (
    "start",
    "add",
    "remove",
    "roll_initiative",
    "set_initiative",
    "defeat",
    *NAVIGATION,
    "end",
)
MAX_COMBATANTS = 50


async def _tracker(relay: Relay) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The encounters (as /encounters lists them) and the handle of each token uuid."""
    listed = plain(await relay.encounters.list()).get("encounters") or []
    return listed, (await active_tokens(relay)).by_uuid()


def _chosen(listed: list[dict[str, Any]], wanted: str | None) -> dict[str, Any] | None:
    """The encounter `wanted` names, else the current one (the first listed, as the world
    lists the active one first), else None."""
    if wanted:
        return next((e for e in listed if e.get("id") == wanted), None)
    return listed[0] if listed else None


async def encounters(relay: Relay, args: dict[str, Any]) -> Any:
    listed, names = await _tracker(relay)
    return {"encounters": [views.encounter_view(e, names) for e in listed]}


async def _now(relay: Relay, encounter_id: str | None, **facts: Any) -> dict[str, Any]:
    """The tracker after an action: the encounter's view and what the action reports."""
    listed, names = await _tracker(relay)
    chosen = _chosen(listed, encounter_id)
    if chosen is None:
        return {"encounter": None, **facts}
    return {**views.encounter_view(chosen, names), **facts}


async def _uuids(relay: Relay, names: list[str], scene: SceneTokens) -> list[str]:
    if len(names) > MAX_COMBATANTS:
        raise ToolInputError(f"At most {MAX_COMBATANTS} combatants a call")
    return [(await resolve(relay, n, scene)).uuid for n in names]


def _combatant(encounter: dict[str, Any], uuid: str, name: str) -> dict[str, Any]:
    """The encounter's combatant of a token (or actor) uuid."""
    for c in encounter.get("combatants") or []:
        if uuid in (c.get("tokenUuid"), c.get("actorUuid")):
            return dict(c)
    raise ToolInputError(f"{name} is not in the encounter")


async def _current(relay: Relay, args: dict[str, Any]) -> dict[str, Any]:
    listed = plain(await relay.encounters.list()).get("encounters") or []
    chosen = _chosen(listed, args.get("encounter_id"))
    if chosen is None:
        raise ToolInputError("No encounter is running; start one with action 'start'")
    return chosen


async def encounter(relay: Relay, args: dict[str, Any]) -> Any:
    action = args["action"]
    scene = await active_tokens(relay)
    if action == "start":
        reply = plain(
            await relay.encounters.start(
                token_uuids=await _uuids(relay, list(args.get("combatants") or []), scene),
                start_with_players=args.get("with_players", True),
                roll_all=args.get("roll_initiative", True),
                name=args.get("name"),
            )
        )
        return await _now(relay, str(reply["encounterId"]), started=True)
    if action in ("add", "remove"):
        wanted = list(args.get("combatants") or [])
        if not wanted:
            raise ToolInputError(f"action {action!r} needs `combatants`")
        uuids = await _uuids(relay, wanted, scene)
        eid = args.get("encounter_id")
        if action == "add":
            reply = plain(
                await relay.encounters.add(
                    uuids=uuids,
                    roll_initiative=args.get("roll_initiative", True),
                    encounter_id=eid,
                )
            )
        else:
            reply = plain(await relay.encounters.remove(uuids=uuids, encounter_id=eid))
        failed = reply.get("failed") or []
        return await _now(
            relay, str(reply["encounterId"]), **({"failed": failed} if failed else {})
        )
    if action == "roll_initiative":
        current = await _current(relay, args)
        wanted = list(args.get("combatants") or [])
        reply = plain(
            await relay.encounters.roll_initiative(
                uuids=await _uuids(relay, wanted, scene) if wanted else None,
                encounter_id=current["id"],
            )
        )
        return await _now(relay, current["id"], rolled=len(reply.get("rolled") or []))
    if action in ("set_initiative", "defeat"):
        if not args.get("combatant"):
            raise ToolInputError(f"action {action!r} needs `combatant`")
        found = await resolve(relay, args["combatant"], scene)
        current = await _current(relay, args)
        combatant = _combatant(current, found.uuid, found.name)
        if action == "defeat":
            await relay.entities.kill(uuid=combatant.get("tokenUuid") or found.uuid)
            return await _now(relay, current["id"], defeated=found.name)
        if not isinstance(args.get("initiative"), int | float):
            raise ToolInputError("action 'set_initiative' needs `initiative` (a number)")
        await relay.encounters.set_initiative(
            args["initiative"], combatant_id=combatant["id"], encounter_id=current["id"]
        )
        return await _now(relay, current["id"])
    if action == "end":
        current = await _current(relay, args)
        await relay.encounters.end(encounter_id=current["id"])
        return {"ended": current["id"], "encounters": (await encounters(relay, {}))["encounters"]}
    before = await _current(relay, args)
    reply = plain(await relay.call(NAVIGATION[action], encounterId=before["id"]))
    after = await _now(relay, str(reply["encounterId"]))
    seen = views.encounter_view(before, scene.by_uuid())
    skipped = views.skipped(seen, after) if action == "next_turn" else []
    return {**after, **({"skipped": skipped} if skipped else {})}


async def preview_encounter(relay: Relay, args: dict[str, Any]) -> Any:
    """What an encounter action would do, read from the tracker as it is."""
    action = args["action"]
    listed, names = await _tracker(relay)
    running = [views.encounter_view(e, names) for e in listed]
    params = {k: v for k, v in args.items() if k != "action"}
    if action == "start":
        who = list(args.get("combatants") or [])
        if args.get("with_players", True):
            who.append("the players' tokens")
        rolls = ", rolling initiative" if args.get("roll_initiative", True) else ""
        return dry(
            "start-encounter",
            params,
            running=running,
            change=f"would start an encounter with {', '.join(who) or 'no one'}{rolls}",
        )
    chosen = _chosen(listed, args.get("encounter_id"))
    if chosen is None:
        return dry(action, params, change="would fail: no encounter is running")
    e = views.encounter_view(chosen, names)
    if action not in NAVIGATION:
        return dry(action, params, current=e, change=f"would {action.replace('_', ' ')}")
    n = len(e["order"])
    turn = e["turn"] if isinstance(e["turn"], int) else 0
    rnd = e["round"] or 0
    if action == "next_turn":
        turn, rnd = (turn + 1, rnd) if turn + 1 < n else (0, rnd + 1)
    elif action == "previous_turn":
        turn, rnd = (turn - 1, rnd) if turn > 0 else (max(n - 1, 0), max(rnd - 1, 0))
    elif action == "next_round":
        turn, rnd = 0, rnd + 1
    else:
        turn, rnd = 0, max(rnd - 1, 0)
    then = e["order"][turn]["name"] if 0 <= turn < n else None
    return dry(
        NAVIGATION[action],
        params,
        current=e,
        change=f"round {e['round']} turn {e['turn']} ({e['current']}) -> round {rnd} turn "
        f"{turn} ({then})",
    )


NAMES = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 200},
    "maxItems": MAX_COMBATANTS,
    "description": "Tokens of the active scene by name or handle ('Goblin 1'), or uuids.",
}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "encounters",
        "The running encounters: round, whose turn it is, the initiative order and who is "
        "defeated.",
        {},
        scopes=("encounter:read",),
        run=encounters,
        annotations=READ,
    ),
    Tool(
        "encounter",
        "Run the fight's tracker: start (with the players' tokens and the `combatants` named, "
        "initiative rolled), add or remove combatants, roll_initiative (those without one, or "
        "the `combatants` named), set_initiative of a `combatant`, defeat a `combatant` (0 HP, "
        "skipped from then on), next or previous turn or round, end. Answers the tracker as it "
        "now is, and which defeated combatants a turn passed over.",
        {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "combatants": NAMES,
            "combatant": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "set_initiative, defeat: the combatant's name or handle.",
            },
            "initiative": {"type": "number", "minimum": -1000, "maximum": 1000},
            "with_players": {"type": "boolean", "default": True, "description": "start only"},
            "roll_initiative": {
                "type": "boolean",
                "default": True,
                "description": "start, add: roll initiative for who joins.",
            },
            "name": {"type": "string", "maxLength": 200, "description": "start: its name."},
            "encounter_id": {"type": "string", "description": "Default: the current one."},
        },
        ("action",),
        scopes=("encounter:manage", "encounter:read", "entity:write"),
        run=encounter,
        preview=preview_encounter,
    ),
)
