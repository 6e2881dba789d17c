"""Structure and folder actions (endpoints-beyond-seed §4): `structure` (GET /structure),
`get-folder`, `create-folder`, `delete-folder`, and `contents` (the module's older listing,
reachable only over the client WebSocket; GET /contents/* is answered by the relay itself).

The structure holds the world's folders and documents of the eight folder types and, at the
root, the compendium packs (world/packs.py), whose documents resolve as
`Compendium.<pack>.<Type>.<id>` uuids. With `userId`, documents the user may not see are left
out and LIMITED ones show only `{uuid, name, id, type, img}`; folder writes need a GM.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.rules import structure as rules
from vttrelay.world.rules.permissions import LIMITED, OBSERVER, assert_gm, permission_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action
from vttrelay.world.store import packs

NULL_DATA: Final = {"data": None}


class FolderView:
    """The folders and folder-type documents of one transaction, read once."""

    def __init__(self, ctx: ActionContext) -> None:
        self.ctx = ctx
        self.folders = ctx.tx.all("Folder")
        self._docs: dict[str, list[dict[str, Any]]] = {}

    def docs(self, doc_name: str) -> list[dict[str, Any]]:
        if doc_name not in self._docs:
            self._docs[doc_name] = self.ctx.tx.all(doc_name)
        return self._docs[doc_name]

    def folder(self, folder_id: Any) -> dict[str, Any] | None:
        return next((f for f in self.folders if f["_id"] == folder_id), None)

    def in_folder(self, folder: dict[str, Any]) -> list[dict[str, Any]]:
        """The documents of the folder's type that sit in it."""
        doc_name = folder.get("type")
        if doc_name not in rules.FOLDER_TYPES:
            return []
        return [d for d in self.docs(str(doc_name)) if rules.folder_of(d) == folder["_id"]]

    def visible(self, doc: dict[str, Any]) -> bool:
        return permission_level(self.ctx.user, doc) >= LIMITED


def _ref_fn(ctx: ActionContext, include_data: bool) -> rules.RefFn:
    """The entity reference form of this call (endpoints-beyond-seed §4.1)."""
    user = ctx.user

    def ref(doc_name: str, doc: dict[str, Any]) -> dict[str, Any] | None:
        if user is not None:
            level = permission_level(user, doc)
            if level < LIMITED:
                return None
            if level < OBSERVER:
                return rules.limited_reference(doc_name, doc)
        return doc if include_data else rules.reference(doc_name, doc)

    return ref


def _refs(world: FolderView, ref: rules.RefFn, folder: dict[str, Any]) -> list[dict[str, Any]]:
    doc_name = str(folder.get("type"))
    out = [ref(doc_name, d) for d in world.in_folder(folder)]
    return [r for r in out if r is not None]


def _pack_entry(pack: packs.Pack, entry: dict[str, Any], full: bool, own_type: bool) -> Any:
    if full:
        return entry
    kind = entry.get("type") if own_type and entry.get("type") else pack.document_name
    return {"uuid": entry["uuid"], "name": entry["name"], "id": entry["_id"], "type": kind}


def _compendium(path: str, include_data: bool) -> dict[str, Any]:
    pack = packs.packs().get(path.removeprefix(f"{packs.COMPENDIUM}."))
    if pack is None:
        raise ActionError(f"Compendium not found: {path}")
    entries = [_pack_entry(pack, e, include_data, False) for e in pack.index()]
    return {"compendium": {"name": pack.label, "type": pack.document_name, "entities": entries}}


def _folder_path(
    world: FolderView,
    path: str,
    types: tuple[str, ...],
    ref: rules.RefFn,
    recursive: bool,
    depth: int,
) -> dict[str, Any]:
    parts = path.split(".")
    if len(parts) != 2 or not parts[1]:
        raise ActionError(f"Invalid folder path: {path}")
    folder = world.folder(parts[1])
    if folder is None:
        raise ActionError(f"Folder not found: {path}")
    if folder.get("type") not in types:
        raise ActionError(f"Folder type {folder.get('type')} not included in requested types")

    def contents(f: dict[str, Any]) -> list[dict[str, Any]]:
        return _refs(world, ref, f)

    out: dict[str, Any] = {
        "folders": rules.subtree(world.folders, folder["_id"], contents, depth) if recursive else {}
    }
    entities = contents(folder)
    if entities:
        out["entities"] = entities
    return out


def _root(
    world: FolderView,
    types: tuple[str, ...],
    ref: rules.RefFn,
    recursive: bool,
    depth: int,
    with_packs: bool,
    include_data: bool,
) -> dict[str, Any]:
    folders = [f for f in world.folders if f.get("type") in types]

    def contents(f: dict[str, Any]) -> list[dict[str, Any]]:
        return _refs(world, ref, f)

    tree = rules.subtree(folders, None, contents, depth if recursive else 1)
    out: dict[str, Any] = {"folders": tree}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for doc_name in (t for t in types if t in rules.FOLDER_TYPES):
        loose = [ref(doc_name, d) for d in world.docs(doc_name) if rules.folder_of(d) is None]
        shown = [r for r in loose if r is not None]
        if shown:
            grouped[rules.group_key(doc_name)] = shown
    if grouped:
        out["entities"] = grouped
    if with_packs:
        listed: dict[str, Any] = {}
        for pack in packs.packs().values():
            if pack.document_name not in types:
                continue
            header: dict[str, Any] = {
                "id": pack.id,
                "name": pack.label,
                "type": pack.document_name,
                "uuid": pack.uuid,
            }
            entries = [_pack_entry(pack, e, include_data, True) for e in pack.index()]
            if entries:
                header["entities"] = entries
            listed[pack.label or pack.id] = header
        if listed:
            out["compendiumPacks"] = listed
    return out


def _depth(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0, int(value))
    return rules.DEFAULT_DEPTH


@action("structure", error_tail={"data": {}})
def structure(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Folders, documents and compendium packs, from the root or from `path`."""
    include_data = frame.get("includeEntityData") is True
    recursive = frame.get("recursive") is True
    depth = _depth(frame.get("recursiveDepth"))
    types = rules.parse_types(frame.get("types"))
    path = frame.get("path")
    text = path if isinstance(path, str) else ""
    if text.startswith(f"{packs.COMPENDIUM}."):
        return {"data": _compendium(text, include_data)}
    world = FolderView(ctx)
    ref = _ref_fn(ctx, include_data)
    if text.startswith("Folder."):
        return {"data": _folder_path(world, text, types, ref, recursive, depth)}
    data = _root(world, types, ref, recursive, depth, path is None, include_data)
    return {"data": data}


@action("get-folder", error_tail=NULL_DATA)
def get_folder(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The first folder (any type) named exactly `name`, with what it holds."""
    name = frame.get("name")
    if not isinstance(name, str) or not name:
        raise ActionError("name is required")
    world = FolderView(ctx)
    folder = next((f for f in world.folders if f.get("name") == name), None)
    if folder is None:
        raise ActionError(f"Folder not found with name: {name}")
    doc_name = str(folder.get("type"))
    contents = [
        rules.limited_reference(doc_name, d) for d in world.in_folder(folder) if world.visible(d)
    ]
    return {
        "data": {
            "id": folder["_id"],
            "uuid": rules.folder_uuid(folder["_id"]),
            "name": folder.get("name", ""),
            "type": folder.get("type"),
            "parentFolder": rules.folder_of(folder),
            "contents": contents,
        }
    }


@action("create-folder", error_tail=NULL_DATA)
def create_folder(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """A new folder of `folderType`, at the top or under `parentFolderId` (GM only)."""
    assert_gm(ctx, "create folders")
    name, folder_type = frame.get("name"), frame.get("folderType")
    if not isinstance(name, str) or not name.strip():
        raise ActionError("name is required")
    if not isinstance(folder_type, str) or not folder_type:
        raise ActionError("folderType is required")
    parent_id = frame.get("parentFolderId")
    parent = None
    if parent_id not in (None, ""):
        parent = ctx.tx.get("Folder", str(parent_id))
        if parent is None:
            raise ActionError(f"Parent folder not found with ID: {parent_id}")
    if folder_type not in rules.FOLDER_TYPES:
        raise ActionError(
            f"Folder validation errors: type: {folder_type} is not a valid choice; valid types: "
            + ", ".join(rules.FOLDER_TYPES)
        )
    if parent is not None and parent.get("type") != folder_type:
        raise ActionError(
            f"Folder validation errors: folder: a {folder_type} folder cannot be inside a "
            f"{parent.get('type')} folder"
        )
    folder = rules.new_folder(
        ctx.new_id(), name, folder_type, parent["_id"] if parent else None, ctx.now_ms()
    )
    ctx.tx.put("Folder", folder)
    return {
        "data": {
            "id": folder["_id"],
            "uuid": rules.folder_uuid(folder["_id"]),
            "name": name,
            "type": folder_type,
            "parentFolder": folder["folder"],
        }
    }


@action("delete-folder", error_tail=NULL_DATA)
def delete_folder(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Delete an empty folder, or (`deleteAll`) it, its sub-folders and their documents."""
    assert_gm(ctx, "delete folders")
    folder_id = frame.get("folderId")
    world = FolderView(ctx)
    folder = world.folder(folder_id)
    if folder is None:
        raise ActionError(f"Folder not found with ID: {folder_id}")
    below = rules.descendants(world.folders, folder["_id"])
    if frame.get("deleteAll") is not True:
        held = world.in_folder(folder)
        if held:
            raise ActionError(
                f"Folder contains {len(held)} entities. Use deleteAll=true to delete them or "
                "move them first."
            )
        kids = rules.children(world.folders, folder["_id"])
        if kids:
            raise ActionError(
                f"Folder contains {len(kids)} child folders. Use deleteAll=true to delete them "
                "or move them first."
            )
    entities = 0
    for each in [*below, folder]:
        for doc in world.in_folder(each):
            ctx.tx.delete(str(each.get("type")), doc["_id"])
            entities += 1
        ctx.tx.delete("Folder", each["_id"])
    return {
        "data": {
            "deleted": True,
            "folderId": folder["_id"],
            "entitiesDeleted": entities,
            "foldersDeleted": len(below) + 1,
        }
    }


@action("contents", error_tail={"entities": []})
def contents(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """A compendium's index entries, or a folder's documents `{uuid, id, name, img, type}`."""
    path = frame.get("path")
    text = path if isinstance(path, str) else ""
    if text.startswith(f"{packs.COMPENDIUM}."):
        pack = packs.packs().get(text.removeprefix(f"{packs.COMPENDIUM}."))
        if pack is None:
            raise ActionError(f"Compendium not found: {text}")
        return {"path": text, "entities": pack.index()}
    parts = text.split(".")
    if len(parts) != 2 or parts[0] != "Folder" or not parts[1]:
        raise ActionError(f"Invalid folder path: {text}")
    world = FolderView(ctx)
    folder = world.folder(parts[1])
    if folder is None:
        raise ActionError(f"Folder not found: {text}")
    doc_name = str(folder.get("type"))
    entities = [
        {
            "uuid": f"{doc_name}.{d['_id']}",
            "id": d["_id"],
            "name": d.get("name", ""),
            "img": d.get("img") or None,
            "type": doc_name,
        }
        for d in world.in_folder(folder)
        if world.visible(d)
    ]
    return {"path": text, "entities": entities}
