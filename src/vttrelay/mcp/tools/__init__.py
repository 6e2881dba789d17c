"""The MCP tool table: a curated set of tools, each a few relay calls and a compact view.

Agents choose worse past ~30-40 tools, so this is not one tool per route: ~25 tools cover what a
game master's or player's agent does (look at the world, find things, read an actor, roll, use
items and spells, rest, move money and items, chat, run a fight, move tokens). Each entry
has its JSON schema, a description that says when to use it, the API-key scopes it needs (the
server hides tools the key can't use), `run` (the call) and, for tools that change the world,
`preview`: what `dry_run: true` answers. A preview only reads: it fetches the current state and
describes the change the call would make, computed from that state; it never does and undoes.

One module per area (worlds, reading, scene, combat, acting, rolls, changes, chat); `names` resolves
what an agent calls things. Every call goes through the relay client (`vttrelay.client`), so the
relay enforces the key's scopes, allowed worlds and forced `userId` exactly as for any other client;
a refusal comes back as a `VttRelayError` and the server turns it into a tool error.
"""

from __future__ import annotations

from vttrelay.mcp.tools import acting, changes, chat, combat, reading, rolls, scene, worlds
from vttrelay.mcp.tools.base import Tool, ToolImage, ToolInputError
from vttrelay.mcp.tools.chat import read_chat
from vttrelay.mcp.tools.reading import actor_summary, world_overview

TOOLS: tuple[Tool, ...] = (
    worlds.TOOLS
    + reading.TOOLS
    + scene.TOOLS
    + combat.TOOLS
    + acting.TOOLS
    + rolls.TOOLS
    + changes.TOOLS
    + chat.TOOLS
)
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def usable(scopes: tuple[str, ...] | list[str] | None) -> list[Tool]:
    """The tools a key with these scopes can use (all of them when the scopes are unknown)."""
    if scopes is None:
        return list(TOOLS)
    held = set(scopes)
    return [t for t in TOOLS if set(t.scopes) <= held]


__all__ = [
    "BY_NAME",
    "TOOLS",
    "Tool",
    "ToolImage",
    "ToolInputError",
    "actor_summary",
    "read_chat",
    "usable",
    "world_overview",
]
