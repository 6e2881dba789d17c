"""What every MCP tool module shares: the `Tool` value, the input error, argument schemas used by
several tools, and small helpers over relay replies (a dry run's answer, optional flags)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from vttrelay.client import AsyncClient as Relay
from vttrelay.client.types import DetailSection


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
    """One tool: its name, when to use it, its arguments (JSON schema properties, snake_case),
    the key's scopes it needs (the server lists it only to keys that have them), the call, and
    for tools that change the world the preview `dry_run: true` answers. A tool that
    `picks_world` answers `chosen: {id, ...}`: the world the session plays in from then on."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()  # the key needs all of them for the tool to be listed
    run: Run | None = None
    preview: Run | None = None  # set for tools that change the world: answers dry_run
    annotations: dict[str, Any] = field(default_factory=dict)
    picks_world: bool = False

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


READ = {"readOnlyHint": True}
ACTOR = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "A token of the active scene by name or handle ('Goblin 2'), else a world "
    "actor by name, or a uuid as the tools hand out.",
}
ADV = {"type": "boolean", "description": "Roll with advantage."}
DIS = {"type": "boolean", "description": "Roll with disadvantage."}
BONUS = {"type": "string", "maxLength": 100, "description": "An extra bonus formula, e.g. `1d4`."}


async def actor_details(relay: Relay, uuid: str, *sections: DetailSection) -> dict[str, Any]:
    reply = await relay.dnd5e.get_actor_details(uuid, list(sections))
    return dict(reply.get("data") or {})


def plain(reply: Any) -> dict[str, Any]:
    """A typed reply read as the plain dict it is (for keys its TypedDict doesn't name)."""
    return cast(dict[str, Any], reply)


def dry(call: str, params: dict[str, Any], **facts: Any) -> dict[str, Any]:
    """A dry run's answer: the call it would make, its parameters and what would change."""
    return {"dryRun": True, "wouldCall": call, "params": params, **facts}


def flags(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {n: args[n] for n in names if args.get(n) is not None}
