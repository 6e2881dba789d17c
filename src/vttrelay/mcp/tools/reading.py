"""The reading tools: the world at a glance, finding documents, an actor's compact sheet and
its picture, the tokens of a scene."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import (
    ACTOR,
    READ,
    Tool,
    ToolImage,
    actor_details,
    plain,
)
from vttrelay.mcp.tools.names import resolve_actor


async def world_overview(relay: Relay, args: dict[str, Any]) -> Any:
    info = await relay.utility.world_info()
    structure = await relay.structure.get(types="Actor,Scene")  # as the module reads it
    tree = structure.get("data")
    return views.world_overview(plain(info.get("data") or {}), plain(tree) if tree else None)


async def find(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.search.find(
        query=args["name"],
        filter=args.get("type"),
        limit=args.get("limit", 20),
        exclude_compendiums=not args.get("compendium", False),
    )
    return views.search_results(plain(reply))


async def actor_summary(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    return views.actor_summary(await actor_details(relay, uuid, *views.SUMMARY_SECTIONS))


async def sheet_picture(relay: Relay, args: dict[str, Any]) -> Any:
    uuid = await resolve_actor(relay, args["actor"])
    jpeg = args.get("format") == "jpeg"
    data = await relay.sheets.image(uuid=uuid, format="jpeg" if jpeg else "png", scale=0.8)
    return ToolImage(data, "image/jpeg" if jpeg else "image/png")


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
            "name": {"type": "string", "maxLength": 200, "description": "All or part of it."},
            "type": {
                "type": "string",
                "maxLength": 100,
                "description": "Only this document type: Actor, Item, Scene, JournalEntry, ...",
            },
            "compendium": {
                "type": "boolean",
                "default": False,
                "description": "Also the compendiums (the SRD monsters, spells, items).",
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
)
