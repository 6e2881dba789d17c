"""Scene actions (endpoints-beyond-seed §9): get-scene, create-scene, update-scene, delete-scene,
switch-scene.

A scene is picked as the module's `resolveScene` does, first rule that applies: `sceneId`, then
the exact (case-sensitive) `name`, then `active`, then `viewed` (the GM views the active scene).
New scenes are the tabletop's defaults (`content/document-defaults.json`) with the caller's
data over them; updates merge as the tabletop's update does. At most one scene is active:
activating one (switch-scene, or `active: true` in create or update data) deactivates the
others, and the scene stream's `scene-activate` event follows from that change.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world import defaults, documents
from vttrelay.world.actions import ActionError, action
from vttrelay.world.actions.scripts import expand_update, merge_into
from vttrelay.world.context import ActionContext
from vttrelay.world.permissions import OWNER, assert_can_write, assert_gm, filter_views, view
from vttrelay.world.scripts import HostError

FAILED: Final = {"success": False}
NOT_FOUND: Final = "Scene not found"
NAME_REQUIRED: Final = "Scene validation errors:\n  name: may not be undefined"


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


def _with_embedded_defaults(ctx: ActionContext, scene: dict[str, Any]) -> None:
    """Complete the documents a new scene holds (tokens, walls, lights, ...) from the
    tabletop's defaults, each with an id."""
    for child_name, key in documents.EMBEDDED["Scene"].items():
        entries = scene.get(key)
        if isinstance(entries, list):
            scene[key] = [
                defaults.with_defaults(child_name, e, ctx.new_id)
                for e in entries
                if isinstance(e, dict)
            ]


@action("create-scene")
def create_scene(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Create a scene from `data` (the GM, or a user who may create scenes: only GMs)."""
    if not documents.is_gm(ctx.user):
        raise ActionError(f"User '{_user_name(ctx)}' does not have permission to create scenes")
    data = frame.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    if not (isinstance(data.get("name"), str) and data["name"]):
        raise ActionError(NAME_REQUIRED)
    scene = defaults.with_defaults("Scene", _expanded(data), ctx.new_id)
    if ctx.tx.get("Scene", scene["_id"]) is not None:
        scene["_id"] = ctx.new_id()  # the tabletop gives a new scene a new id
    _with_embedded_defaults(ctx, scene)
    creator = ctx.acting_user_id
    if creator is not None:
        scene["ownership"] = {**scene.get("ownership", {}), creator: OWNER}
    scene["_stats"] = documents.new_stats(ctx.now_ms(), creator)
    if scene.get("active"):
        _activate(ctx, scene)
    ctx.tx.put("Scene", scene)
    return {"data": scene}


def _expanded(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with dotted keys expanded (`{"grid.size": 50}` -> `{"grid": {"size": 50}}`)."""
    try:
        return expand_update(data)
    except HostError as exc:
        raise ActionError(exc.message) from None


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
    changes = _expanded(data)
    changes.pop("_id", None)
    for key in ("background", "foreground"):
        if key in changes:
            changes[key] = _as_src(changes[key])
    if "name" in changes and not (isinstance(changes["name"], str) and changes["name"]):
        raise ActionError(NAME_REQUIRED)
    scene = res.doc
    merge_into(scene, changes)
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
