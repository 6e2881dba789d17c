"""`sheet-screenshot` (GET /sheet, files-sheet-sessions §2): a picture of an actor's sheet,
drawn by the world itself (`render.sheet`) in its heavy-work process (`runtime.heavy`), never on
the world's loop.

The module's checks and texts, in its order: an unknown `userId` (the dispatcher), the target
(`uuid`, else with `selected` the first controlled token: its actor; a token's sheet is its
actor's here, the embedded world has no token configuration window), `Entity not found`, then the
user's level on it: OBSERVER or better sees the whole sheet, LIMITED the name and portrait only,
NONE gets `User '<name>' does not have permission to view this sheet`. A document that is not an
actor (or a token of one) has no sheet: `Actor has no sheet`. JPEG only for `format` exactly
`jpeg` (`quality`, 0-1), else PNG; `scale` multiplies the size (0.25 to 3). The reply is the
module's: `{success, imageData, mimeType, width, height}`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.render import sheet as sheet_render
from vttrelay.world.render.sheet_data import SheetData, sheet_data
from vttrelay.world.rules.permissions import LIMITED, OBSERVER, permission_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}


def _truthy(value: Any) -> bool:
    return value is not None and value is not False and value != "" and value != 0


def _target(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any] | None:
    """The actor whose sheet is asked for, or None (`Entity not found`)."""
    uuid = frame.get("uuid")
    if _truthy(uuid):
        res = documents.resolve_uuid(ctx.tx, uuid)
        if res is None:
            return None
        if res.kind == "Actor":
            return res.doc
        if res.kind == "Token" and res.actor is not None:
            return res.actor
        raise ActionError("Actor has no sheet")
    if _truthy(frame.get("selected")):
        scene = documents.active_scene(ctx.tx)
        for token in ctx.selected_tokens():
            actor = documents.token_actor(ctx.tx, scene, token) if scene else None
            if actor is not None:
                return actor
            raise ActionError("Actor has no sheet")
    return None


def _sheet(ctx: ActionContext, frame: dict[str, Any]) -> tuple[SheetData, Any]:
    actor = _target(ctx, frame)
    if actor is None:
        raise ActionError("Entity not found")
    level = permission_level(ctx.user, actor)
    if level < LIMITED:
        name = (ctx.user or {}).get("name", "")
        raise ActionError(f"User '{name}' does not have permission to view this sheet")
    return sheet_data(actor, limited=level < OBSERVER), actor.get("img")


def _portrait(ctx: ActionContext, src: Any) -> Path | None:
    store = ctx.files
    return store.image_path(src) if store is not None and isinstance(src, str) else None


@action("sheet-screenshot", error_extra=FAILED)
async def sheet_screenshot(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    sheet, img = ctx.transact(lambda c: _sheet(c, frame))
    fmt = "jpeg" if frame.get("format") == "jpeg" else "png"
    portrait = await asyncio.to_thread(_portrait, ctx, img)
    picture = await ctx.heavy(
        sheet_render.render,
        sheet,
        fmt=fmt,
        quality=frame.get("quality"),
        scale=frame.get("scale"),
        portrait=portrait,
    )
    return {
        "success": True,
        "imageData": picture.data_url(),
        "mimeType": picture.mime_type,
        "width": picture.width,
        "height": picture.height,
    }
