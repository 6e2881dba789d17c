"""How the entity actions find what they act on: a document by `uuid` (world or compendium), or
the GM's controlled tokens (`selected`) and their actors."""

from __future__ import annotations

from typing import Any

from vttrelay.world.model import documents
from vttrelay.world.model.documents import Resolved
from vttrelay.world.runtime.context import ActionContext


def resolve(ctx: ActionContext, uuid: str) -> Resolved | None:
    return documents.resolve_uuid(ctx.tx, uuid)


def controlled_tokens(ctx: ActionContext) -> list[str]:
    """Uuids of the GM's controlled tokens."""
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        return []
    return [documents.token_uuid(scene["_id"], t["_id"]) for t in ctx.selected_tokens()]


def token_actor_uuid(ctx: ActionContext, token_uuid: str) -> str | None:
    """The uuid of a token's actor (an unlinked token's own synthetic actor)."""
    res = resolve(ctx, token_uuid)
    if res is None or res.actor is None:
        return None
    return documents.actor_uuid_of(res.actor)


def selected_targets(ctx: ActionContext, actors: bool) -> list[str]:
    """The controlled tokens' uuids, or their actors' (tokens without an actor skipped)."""
    tokens = controlled_tokens(ctx)
    if not actors:
        return tokens
    return [u for u in (token_actor_uuid(ctx, t) for t in tokens) if u is not None]


def flag(params: dict[str, Any], name: str) -> bool:
    return params.get(name) is True
