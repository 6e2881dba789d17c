"""Utility actions (world-behaviour §5.1-5.4): select, selected, players, world-info.

Deliberate difference (DESIGN §6 item 2): `/select` matches only what the caller names; an empty
or missing `data` filter matches nothing rather than every token.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}
_MISSING: Final = object()


def _path_value(doc: Any, path: str) -> Any:
    """The value at a dotted path, or _MISSING."""
    for part in path.split("."):
        if isinstance(doc, dict) and part in doc:
            doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return _MISSING
    return doc


def _same(a: Any, b: Any) -> bool:
    """Strict equality: no 1 == True, no 1 == "1"."""
    if type(a) is type(b):
        return bool(a == b)
    return (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def _matches_data(token: dict[str, Any], criteria: dict[str, Any], actors: dict[str, Any]) -> bool:
    for key, expected in criteria.items():
        if key.startswith("actor."):
            actor = actors.get(token.get("actorId", ""))
            value = _path_value(actor, key[len("actor.") :]) if actor else _MISSING
        else:
            value = _path_value(token, key)
        if value is _MISSING or not _same(value, expected):
            return False
    return True


def _active_scene(ctx: ActionContext) -> dict[str, Any]:
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        raise ActionError("No active scene found")
    return scene


@action("select", error_extra=FAILED)
def select(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add the named tokens of the active scene to the GM's selection."""
    assert_gm(ctx, "select tokens")
    scene = _active_scene(ctx)
    tokens = list(scene.get("tokens") or ())
    uuids = params.get("uuids")
    wanted_uuids = {u for u in uuids if isinstance(u, str)} if isinstance(uuids, list) else set()
    name = params.get("name")
    wanted_name = name.casefold() if isinstance(name, str) and name else None
    data = params.get("data")
    criteria = data if isinstance(data, dict) and data else None
    actors = {a["_id"]: a for a in ctx.tx.all("Actor")} if criteria else {}
    targets: list[str] = []
    for token in tokens:
        uuid = documents.token_uuid(scene["_id"], token["_id"])
        if (
            params.get("all") is True
            or uuid in wanted_uuids
            or (wanted_name is not None and str(token.get("name", "")).casefold() == wanted_name)
            or (criteria is not None and _matches_data(token, criteria, actors))
        ):
            targets.append(uuid)
    if not targets:
        raise ActionError("No matching entities found")
    current = [] if params.get("overwrite") is True else ctx.current_selection()
    ctx.select(current + targets)
    return {
        "success": True,
        "count": len(targets),
        "message": f"{len(targets)} entities selected",
        "selected": targets,
    }


@action("selected", error_extra=FAILED)
def selected(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """The GM's selected tokens and their actors."""
    assert_gm(ctx, "get selected tokens")
    scene = _active_scene(ctx)
    out = []
    for token in ctx.selected_tokens():
        tok_uuid = documents.token_uuid(scene["_id"], token["_id"])
        actor_id = token.get("actorId")
        actor = ctx.tx.get("Actor", actor_id) if isinstance(actor_id, str) else None
        actor_uuid = documents.token_actor_uuid_of(scene["_id"], token) if actor else None
        out.append({"tokenUuid": tok_uuid, "actorUuid": actor_uuid})
    return {"success": True, "selected": out}


def _users(ctx: ActionContext) -> list[dict[str, Any]]:
    return [documents.user_summary(u, ctx.is_online(u["_id"])) for u in ctx.tx.all("User")]


@action("players", error_extra={"users": []})
def players(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every user (the valid userId values); a non-GM userId sees an empty list."""
    if not documents.is_gm(ctx.user):
        return {"users": []}
    return {"users": _users(ctx)}


@action("world-info")
def world_info(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """World, system, tabletop version, modules, users and the active scene."""
    meta = documents.world_meta(ctx.tx)
    scene = documents.active_scene(ctx.tx)
    return {
        "data": {
            **documents.world_and_system(meta),
            "foundryVersion": meta.get("foundryVersion", ""),
            "modules": [
                {
                    "id": m.get("id", ""),
                    "title": m.get("title", ""),
                    "version": m.get("version", ""),
                    "active": bool(m.get("active")),
                }
                for m in meta.get("modules") or ()
            ],
            "users": _users(ctx),
            "activeScene": {"id": scene["_id"], "name": scene.get("name", "")} if scene else None,
        }
    }
