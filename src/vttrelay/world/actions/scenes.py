"""Scene actions (endpoints-beyond-seed §9): get-scene, create-scene, update-scene, delete-scene,
switch-scene, and the pictures: scene-screenshot (drawn by `world.render.scene`) and
scene-raw-image.

A scene is picked as the module's `resolveScene` does, first rule that applies: `sceneId`, then
the exact (case-sensitive) `name`, then `active`, then `viewed` (the GM views the active scene).
New scenes are made and updated as every new or updated document is (`rules.entities`: the
tabletop's defaults with the caller's data over them; updates merge as the tabletop's do). At
most one scene is active: activating one (switch-scene, or `active: true` in create or update
data) deactivates the others, and the scene stream's `scene-activate` event follows.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any, Final

from vttrelay.world.actions.canvas import check_written
from vttrelay.world.errors import ActionError
from vttrelay.world.files.store import StoreError
from vttrelay.world.model import documents
from vttrelay.world.render import scene as scene_image
from vttrelay.world.rules import entities as entity_rules
from vttrelay.world.rules.permissions import assert_can_write, assert_gm, filter_views, view
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}
NOT_FOUND: Final = "Scene not found"


def _truthy(value: Any) -> bool:
    return value is not None and value is not False and value != "" and value != 0


def select_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any] | None:
    """The scene the request names (`resolveScene`), or None."""
    scenes = ctx.tx.all("Scene")
    scene_id, name = frame.get("sceneId"), frame.get("name")
    if _truthy(scene_id):
        return next((s for s in scenes if s["_id"] == scene_id), None)
    if _truthy(name):
        return next((s for s in scenes if s.get("name") == name), None)
    if _truthy(frame.get("active")) or _truthy(frame.get("viewed")):
        return documents.active_scene(ctx.tx)
    return None


def _found(ctx: ActionContext, frame: dict[str, Any]) -> documents.Resolved:
    scene = select_scene(ctx, frame)
    res = documents.resolve_uuid(ctx.tx, f"Scene.{scene['_id']}") if scene else None
    if res is None:
        raise ActionError(NOT_FOUND)
    return res


def _user_name(ctx: ActionContext) -> str:
    assert ctx.user is not None
    return str(ctx.user.get("name", ctx.user["_id"]))


@action("get-scene", error_tail={"data": None})
def get_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """One scene, or every scene with `all`; a `userId` sees what its permission shows."""
    if _truthy(frame.get("all")):
        found = [documents.resolve_uuid(ctx.tx, f"Scene.{s['_id']}") for s in ctx.tx.all("Scene")]
        return {"data": filter_views(ctx.user, [r for r in found if r is not None])}
    res = _found(ctx, frame)
    seen = view(ctx.user, res)
    if seen is None:
        raise ActionError(f"User '{_user_name(ctx)}' does not have permission to view this scene")
    return {"data": seen}


def _activate(ctx: ActionContext, scene: dict[str, Any]) -> None:
    """`scene` becomes the active scene; any other active one stops being so."""
    for other in ctx.tx.all("Scene"):
        if other.get("active") and other["_id"] != scene["_id"]:
            other["active"] = False
            _save(ctx, other)
    scene["active"] = True


def _save(ctx: ActionContext, scene: dict[str, Any]) -> None:
    documents.touch_stats(scene, ctx.now_ms(), ctx.acting_user_id)
    ctx.tx.put("Scene", scene)


@action("create-scene")
def create_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Create a scene from `data` (the GM, or a user who may create scenes: only GMs)."""
    if not documents.is_gm(ctx.user):
        raise ActionError(f"User '{_user_name(ctx)}' does not have permission to create scenes")
    data = frame.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    invalid = entity_rules.validate_new("Scene", data)
    if invalid:
        raise ActionError(invalid)
    scene = entity_rules.new_document(
        "Scene",
        data,
        doc_id=ctx.new_id(),
        now_ms=ctx.now_ms(),
        user_id=ctx.acting_user_id,
        new_id=ctx.new_id,
    )
    check_written("Scene", scene)
    if scene.get("active"):
        _activate(ctx, scene)
    ctx.tx.put("Scene", scene)
    return {"data": scene}


def _as_src(value: Any) -> Any:
    return {"src": value} if isinstance(value, str) or value is None else value


@action("update-scene")
def update_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Merge `data` into the selected scene (its owner or a GM)."""
    data = frame.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    res = _found(ctx, frame)
    assert_can_write(ctx, res, "update")
    changes = dict(data)
    for key in ("background", "foreground"):
        if key in changes:
            changes[key] = _as_src(changes[key])
    if "name" in changes:
        invalid = entity_rules.validate_new("Scene", changes)
        if invalid:
            raise ActionError(invalid)
    scene = res.doc
    entity_rules.apply_document_update(scene, changes, "Scene", ctx.new_id)
    check_written("Scene", scene)
    if changes.get("active") is True:
        _activate(ctx, scene)
    _save(ctx, scene)
    return {"data": scene}


@action("delete-scene", error_extra=FAILED)
def delete_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Delete the selected scene (its owner or a GM)."""
    res = _found(ctx, frame)
    assert_can_write(ctx, res, "delete")
    ctx.tx.delete("Scene", res.doc["_id"])
    return {"success": True}


@action("switch-scene", error_extra=FAILED)
def switch_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Activate the selected scene (GM only): everyone now sees it."""
    assert_gm(ctx, "switch scenes")
    res = _found(ctx, frame)
    scene = res.doc
    _activate(ctx, scene)
    _save(ctx, scene)
    return {"success": True, "data": scene}


# Scene pictures (endpoints-beyond-seed §9.6) --------------------------------------------------


def _pictured(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The scene a picture is asked of: `sceneId`, else the viewed (active) one; the user must
    be able to see it."""
    if _truthy(frame.get("sceneId")):
        res = _found(ctx, {"sceneId": frame["sceneId"]})
    else:
        res = _found(ctx, {"viewed": True})
    if view(ctx.user, res) is None:
        raise ActionError(f"User '{_user_name(ctx)}' does not have permission to view this scene")
    return res.doc


def _screenshot_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    scene = _pictured(ctx, frame)
    viewed = documents.active_scene(ctx.tx)
    if viewed is None or viewed["_id"] != scene["_id"]:
        raise ActionError(
            f"Scene '{scene.get('name', '')}' is not the currently viewed scene. "
            "Switch to it first."
        )
    return scene


def _image_file(ctx: ActionContext, src: Any) -> Path | None:
    """The store's file an image `src` names, or None (no store, a URL, no such file)."""
    store = ctx.files
    return store.image_path(src) if store is not None and isinstance(src, str) else None


def background_src(scene: dict[str, Any]) -> str | None:
    background = scene.get("background")
    src = background.get("src") if isinstance(background, dict) else background
    src = src or scene.get("img")
    return src if isinstance(src, str) and src else None


@action("scene-screenshot")
async def scene_screenshot(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """A picture of the viewed scene (`world.render.scene`), drawn in the world's heavy-work
    process (`runtime.heavy`: off its loop, which answers other requests meanwhile) with the
    background and token images of the file store, as a data URL; the relay answers
    GET /scene/image with its bytes."""
    scene = ctx.transact(lambda c: _screenshot_scene(c, frame))
    fmt = str(frame.get("format") or "png").lower()
    fmt = "jpeg" if fmt == "jpg" else fmt
    if fmt not in scene_image.FORMATS:
        raise ActionError(f"Invalid format '{frame.get('format')}': use png or jpeg")
    images = {
        src: path
        for src in [background_src(scene), *scene_image.token_sources(scene)]
        if src and (path := _image_file(ctx, src)) is not None
    }
    picture = await ctx.heavy(
        scene_image.render,
        scene,
        fmt=fmt,
        quality=frame.get("quality"),
        width=frame.get("width"),
        height=frame.get("height"),
        show_grid=frame.get("showGrid") is not False,
        hide_overlays=frame.get("hideOverlays") is True,
        background=images.get(background_src(scene) or ""),
        images=images,
    )
    return {
        "data": {
            "sceneId": scene["_id"],
            "sceneName": scene.get("name"),
            "imageData": picture.data_url(),
            "mimeType": picture.mime_type,
            "width": picture.width,
            "height": picture.height,
        }
    }


@action("scene-raw-image")
async def scene_raw_image(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The scene's background image: with the file (`imageData`, `mimeType`) when it is in the
    world's file store, else named by its `src` only (what the module answers when it cannot
    fetch the file)."""
    scene = ctx.transact(lambda c: _pictured(c, frame))
    src = background_src(scene)
    if src is None:
        raise ActionError(f"Scene '{scene.get('name', '')}' has no background image")
    data: dict[str, Any] = {"sceneId": scene["_id"], "sceneName": scene.get("name"), "src": src}
    path = _image_file(ctx, src)
    if path is not None and ctx.files is not None:
        try:
            raw, mime = await asyncio.to_thread(ctx.files.read, src)
        except StoreError:
            return {"data": data}
        encoded = await asyncio.to_thread(base64.b64encode, raw)
        data["imageData"] = f"data:{mime};base64,{encoded.decode()}"
        data["mimeType"] = mime
    return {"data": data}
