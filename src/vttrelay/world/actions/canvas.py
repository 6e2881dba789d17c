"""Canvas actions (endpoints-beyond-seed §10): the documents a scene holds, token moves and
distances.

- get-/create-/update-/delete-canvas-document: one collection of a scene (`documentType`:
  tokens, tiles, drawings, lights, sounds, notes, templates, walls, regions; the relay adds the
  document class as `className`). The scene is `sceneId`, else the active scene. Reading needs
  LIMITED on the scene, writing OWNER (GMs always pass). Create takes one document or an array,
  delete one `documentId` or an array `documentIds`, at most `rules.canvas.MAX_BATCH` per call,
  each in time linear in the scene's and the call's documents; a scene holds at most
  `rules.bounds.MAX_EMBEDDED` documents of each type (one holding more, from before that bound,
  can still be cut down).
- move-token: a token found by uuid (a token, or an actor's token on the scene) or name, moved
  through its waypoints to (x, y) as the module moves it: no snap to the grid, no bound to the
  scene, x and y echoed as given; only each number is bounded (`rules.canvas.MAX_NUMBER`) like
  every scene number. Walls block nothing (the module does not check them either).
  A player may move a token whose actor it owns, as on the tabletop (the module asks for a GM).
- measure-distance: between points or tokens, on the scene's grid with the world's diagonal
  rule (`core.gridDiagonals`, dnd5e: each diagonal one square) and the scene's units.

Each call is one transaction: a refused waypoint leaves the token where it was (the module
has applied the earlier waypoints by then).
"""

from __future__ import annotations

from typing import Any, Final, TypeGuard

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.model.defaults import with_defaults
from vttrelay.world.model.documents import Resolved
from vttrelay.world.rules import canvas as rules
from vttrelay.world.rules import grid
from vttrelay.world.rules.bounds import MAX_EMBEDDED
from vttrelay.world.rules.entities import apply_document_update
from vttrelay.world.rules.permissions import (
    LIMITED,
    assert_can_write,
    assert_owner,
    permission_level,
)
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

DATA_NULL: Final = {"data": None}
FAILED: Final = {"success": False}
SCENE_CLASSES: Final = documents.EMBEDDED["Scene"]  # class name -> the scene's key
SETTING_DIAGONALS: Final = "core.gridDiagonals"


# Scenes and collections ------------------------------------------------------------------------


def find_scene(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """`sceneId`'s scene, else the active one."""
    scene_id = params.get("sceneId")
    if scene_id:
        scene = ctx.tx.get("Scene", str(scene_id))
        if scene is None:
            raise ActionError(f"Scene not found: {scene_id}")
        return scene
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        raise ActionError("No active scene")
    return scene


def collection(params: dict[str, Any]) -> tuple[str, str]:
    """(class name, scene key) of the call's document type."""
    doc_type = params.get("documentType")
    class_name = params.get("className")
    if not isinstance(class_name, str):  # a relay that does not add it: the key names it
        class_name = next((c for c, key in SCENE_CLASSES.items() if key == doc_type), "")
    key = SCENE_CLASSES.get(class_name)
    if key is None:
        raise ActionError(f"Collection '{class_name or doc_type}' not found on scene")
    return class_name, key


def _docs(scene: dict[str, Any], key: str) -> list[dict[str, Any]]:
    docs = scene.get(key)
    if not isinstance(docs, list):
        docs = scene[key] = []
    return docs


def _find(docs: list[dict[str, Any]], doc_id: Any) -> dict[str, Any]:
    for doc in docs:
        if isinstance(doc, dict) and doc.get("_id") == doc_id:
            return doc
    raise ActionError(f"Document not found: {doc_id}")


def _head(scene: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    return {"sceneId": scene["_id"], "documentType": params.get("documentType")}


def _check(class_name: str, doc: dict[str, Any]) -> None:
    problem = rules.validation_error(class_name, doc)
    if problem is not None:
        raise ActionError(problem)


def check_written(kind: str, doc: dict[str, Any]) -> None:
    """ActionError unless a document written by another route is valid as the canvas routes
    require: a whole Scene (each document it holds), or one document of a scene."""
    if kind == "Scene":
        problem = rules.scene_error(doc, SCENE_CLASSES)
        if problem is not None:
            raise ActionError(problem)
    elif kind in SCENE_CLASSES:
        _check(kind, doc)


# CRUD ------------------------------------------------------------------------------------------


@action("get-canvas-documents", error_tail=DATA_NULL)
def get_documents(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """A scene's documents of one type, or the one with `documentId`."""
    scene = find_scene(ctx, params)
    if ctx.user is not None and permission_level(ctx.user, scene) < LIMITED:
        raise ActionError(
            f"User '{ctx.user.get('name', '')}' does not have permission to view this "
            "scene's documents"
        )
    _, key = collection(params)
    docs = [d for d in _docs(scene, key) if isinstance(d, dict)]
    if params.get("documentId"):
        docs = [_find(docs, params["documentId"])]
    return {**_head(scene, params), "data": docs}


@action("create-canvas-document")
def create_documents(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create one document on a scene, or several (`data` an array): the tabletop's defaults
    under the caller's data; a token of an actor takes the actor's prototype token."""
    scene = find_scene(ctx, params)
    assert_owner(ctx, scene, "create embedded documents on")
    class_name, key = collection(params)
    data = params.get("data")
    given = data if isinstance(data, list) else [data]
    batch = [d for d in given if isinstance(d, dict)]
    if len(batch) != len(given):
        raise ActionError("data must be an object or an array of objects")
    docs = _docs(scene, key)
    if len(batch) > rules.MAX_BATCH:
        raise ActionError(f"At most {rules.MAX_BATCH} documents can be created in one call")
    if len(docs) + len(batch) > MAX_EMBEDDED:
        raise ActionError(
            f"Scene {scene['_id']} holds {len(docs)} {key}: it can hold at most "
            f"{MAX_EMBEDDED}, so {len(batch)} more can't be created"
        )
    ids = {d.get("_id") for d in docs if isinstance(d, dict)}
    created = []
    for data in batch:
        ctx.checkpoint()
        doc = _new_document(ctx, class_name, data)
        if doc["_id"] in ids:
            raise ActionError(f"{class_name} {doc['_id']} already exists in Scene {scene['_id']}")
        ids.add(doc["_id"])
        docs.append(doc)
        created.append(doc)
    ctx.tx.put("Scene", scene)
    return {**_head(scene, params), "data": created}


def _new_document(ctx: ActionContext, class_name: str, data: dict[str, Any]) -> dict[str, Any]:
    if class_name == "Token" and data.get("actorId") is not None:
        actor = ctx.tx.get("Actor", str(data["actorId"]))
        if actor is None:
            raise ActionError(f"Actor not found: {data['actorId']}")
        data = rules.token_data_from_actor(actor, data)
    if class_name in ("Drawing", "MeasuredTemplate") and data.get("author") is None:
        data = {**data, "author": ctx.acting_user_id}
    doc = with_defaults(class_name, data, ctx.new_id)
    _check(class_name, doc)
    return doc


@action("update-canvas-document")
def update_document(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Update one document of a scene as the tabletop's update does (nested objects merge,
    dotted keys address fields, `-=key` deletes)."""
    scene = find_scene(ctx, params)
    assert_owner(ctx, scene, "update embedded documents on")
    class_name, key = collection(params)
    doc = _find(_docs(scene, key), params.get("documentId"))
    data = params.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    apply_document_update(doc, data, class_name, ctx.new_id)
    _check(class_name, doc)
    ctx.tx.put("Scene", scene)
    return {**_head(scene, params), "data": [doc]}


def _ids_to_delete(params: dict[str, Any]) -> list[Any]:
    """`documentIds` (an array), else `[documentId]`; each id once."""
    many = params.get("documentIds")
    if many is None:
        return [params.get("documentId")]
    if not (isinstance(many, list) and many and all(isinstance(d, str) for d in many)):
        raise ActionError("documentIds must be a non-empty array of document ids")
    if len(many) > rules.MAX_BATCH:
        raise ActionError(f"At most {rules.MAX_BATCH} documents can be deleted in one call")
    return list(dict.fromkeys(many))


@action("delete-canvas-document", error_extra=FAILED)
def delete_document(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one document from a scene (`documentId`), or several (`documentIds`): all or
    none (an unknown id deletes nothing)."""
    scene = find_scene(ctx, params)
    assert_owner(ctx, scene, "delete embedded documents from")
    _, key = collection(params)
    docs = _docs(scene, key)
    wanted = _ids_to_delete(params)
    present = {d.get("_id") for d in docs if isinstance(d, dict)}
    missing = [i for i in wanted if i not in present]
    if missing:
        raise ActionError(f"Document not found: {missing[0]}")
    doomed = set(wanted)
    scene[key] = [d for d in docs if not (isinstance(d, dict) and d.get("_id") in doomed)]
    ctx.tx.put("Scene", scene)
    return {**_head(scene, params), "success": True}


# Tokens ----------------------------------------------------------------------------------------


def find_token(ctx: ActionContext, scene: dict[str, Any], uuid: Any, name: Any) -> Resolved | None:
    """A token by uuid (a token anywhere, or the first token of an actor on `scene`), else by
    name on `scene` (case-insensitive)."""
    tokens = [t for t in scene.get("tokens") or () if isinstance(t, dict)]
    token: dict[str, Any] | None = None
    if uuid:
        res = documents.resolve_uuid(ctx.tx, uuid)
        if res is None or res.kind == "Token":
            return res
        if res.kind != "Actor":
            return None
        token = next((t for t in tokens if t.get("actorId") == res.doc.get("_id")), None)
    elif name:
        token = documents.find_by_name(tokens, name)
    if token is None:
        return None
    return documents.resolve_uuid(ctx.tx, documents.token_uuid(scene["_id"], token["_id"]))


def _position(point: dict[str, Any], label: str) -> tuple[int | float, int | float]:
    """A point's (x, y) as given (the module neither snaps nor bounds a move); ActionError
    when a coordinate is missing, not a number, or past `rules.MAX_NUMBER` in size."""
    x, y = point.get("x"), point.get("y")
    if not _number(x) or not _number(y):
        raise ActionError(label)
    for name, value in (("x", x), ("y", y)):
        if not rules.bounded(value):
            raise ActionError(
                f"{name}: must be a finite number between -{rules.MAX_NUMBER} and "
                f"{rules.MAX_NUMBER} (got {value})"
            )
    return x, y


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


@action("move-token")
def move_token(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Move a token through its waypoints to (x, y), as given (no snap, no scene bound)."""
    scene = find_scene(ctx, params)
    x, y = _position(params, "x and y coordinates are required")
    uuid, name = params.get("uuid"), params.get("name")
    if not uuid and not name:
        raise ActionError("uuid or name is required")
    res = find_token(ctx, scene, uuid, name)
    if res is None or res.scene is None:
        raise ActionError(f"Token not found: {uuid or name}")
    assert_can_write(ctx, res, "move")
    token, home = res.doc, res.scene
    waypoints = params.get("waypoints")
    for point in waypoints if isinstance(waypoints, list) else ():
        if not isinstance(point, dict):
            raise ActionError("Each waypoint must have x and y coordinates")
        _position(point, "Each waypoint must have x and y coordinates")
    token["x"], token["y"] = x, y
    documents.save(ctx.tx, res)
    return {
        "data": {
            "tokenUuid": documents.token_uuid(home["_id"], token["_id"]),
            "name": token.get("name", ""),
            "x": token["x"],
            "y": token["y"],
            "sceneId": home["_id"],
        }
    }


def _end(
    ctx: ActionContext, scene: dict[str, Any], params: dict[str, Any], which: str, label: str
) -> dict[str, Any]:
    """A measured point: `<which>X`/`<which>Y`, else a token's top-left corner."""
    px, py = params.get(f"{which}X"), params.get(f"{which}Y")
    if _number(px) and _number(py):
        return {"x": px, "y": py}
    uuid, name = params.get(f"{which}Uuid"), params.get(f"{which}Name")
    if uuid or name:
        res = find_token(ctx, scene, uuid, name)
        if res is None:
            raise ActionError(f"{label} token not found: {uuid or name}")
        return {"x": res.doc.get("x", 0), "y": res.doc.get("y", 0)}
    raise ActionError(f"{label} must be specified as {which}X/{which}Y or {which}Uuid/{which}Name")


@action("measure-distance")
def measure_distance(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """The distance between two points or tokens on the scene's grid, in its units."""
    scene = find_scene(ctx, params)
    origin = _end(ctx, scene, params, "origin", "Origin")
    target = _end(ctx, scene, params, "target", "Target")
    g = grid.grid_of(scene)
    rule = ctx.setting(SETTING_DIAGONALS, grid.EQUIDISTANT)
    rule = rule if rule in grid.DIAGONAL_RULES else grid.EQUIDISTANT
    distance = grid.measure(g, (origin["x"], origin["y"]), (target["x"], target["y"]), rule)
    return {
        "data": {
            "distance": distance,
            "units": g.units,
            "origin": origin,
            "target": target,
            "sceneId": scene["_id"],
        }
    }
