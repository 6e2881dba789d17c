"""The world tools, for a key over several worlds: list the key's worlds and choose the one the
rest of the session plays in (`mcp.worlds` keeps the choice)."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp.tools.base import READ, Tool, ToolInputError
from vttrelay.mcp.worlds import describe, list_worlds


async def worlds(relay: Relay, args: dict[str, Any]) -> Any:
    return {"worlds": await list_worlds(relay), "chosen": relay.client_id}


async def choose_world(relay: Relay, args: dict[str, Any]) -> Any:
    wanted = str(args["world"]).strip()
    listed = await list_worlds(relay)
    match = [w for w in listed if w["id"] == wanted]
    if not match:
        match = [w for w in listed if str(w["name"]).casefold() == wanted.casefold()]
    if not match:
        raise ToolInputError(f"No world {wanted!r} for this key; its worlds: {describe(listed)}")
    if len(match) > 1:
        raise ToolInputError(
            f"{len(match)} worlds are named {wanted!r}; give the id of one: {describe(match)}"
        )
    chosen = match[0]
    note = "" if chosen["online"] else "; it is offline now: calls fail until it connects"
    return {
        "chosen": chosen,
        "summary": f"This session now plays in {chosen['name']!r} (id {chosen['id']}){note}.",
    }


TOOLS: tuple[Tool, ...] = (
    Tool(
        "worlds",
        "The worlds this key reaches (id, name, game system, online) and the one this session "
        "plays in (`chosen`; null: the relay's default, the key's only world).",
        {},
        scopes=("clients:read",),
        run=worlds,
        annotations=READ,
    ),
    Tool(
        "choose_world",
        "Play the rest of this session in one of the key's worlds (by id or name): every "
        "other tool then acts there. Needed when the key reaches several worlds.",
        {
            "world": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "Id or name.",
            }
        },
        ("world",),
        scopes=("clients:read",),
        run=choose_world,
        picks_world=True,
    ),
)
