"""The world's folder structure as GET /structure and the folder routes show it
(endpoints-beyond-seed §4): which documents a folder holds, entity references in their three
forms, folder trees, and new Folder documents. Pure functions over plain documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from vttrelay.world.model.documents import new_stats

# The document types folders hold, in the module's default order for `types`.
FOLDER_TYPES: Final = (
    "Scene",
    "Actor",
    "Item",
    "JournalEntry",
    "RollTable",
    "Cards",
    "Macro",
    "Playlist",
)
DEFAULT_DEPTH: Final = 5

# ref(document name, document) -> the reference to show, or None to leave the document out
RefFn = Callable[[str, dict[str, Any]], dict[str, Any] | None]


def parse_types(value: Any) -> tuple[str, ...]:
    """`types` as the module reads it: a comma-separated string (a JSON-array string matches
    nothing), a real list over /ws/api; absent or empty -> all eight."""
    if isinstance(value, list):
        names = [str(v).strip() for v in value]
    elif isinstance(value, str) and value.strip():
        names = [v.strip() for v in value.split(",")]
    else:
        return FOLDER_TYPES
    return tuple(n for n in names if n)


def folder_uuid(folder_id: str) -> str:
    return f"Folder.{folder_id}"


def folder_of(doc: dict[str, Any]) -> str | None:
    """The id of the folder a document sits in (its `folder` field holds an id, or a
    `Folder.<id>` uuid when a client wrote one), else None."""
    value = doc.get("folder")
    if not isinstance(value, str) or not value:
        return None
    return value.removeprefix("Folder.")


def reference(doc_name: str, doc: dict[str, Any]) -> dict[str, Any]:
    """`{uuid, name, id, type}` with `type` the document name."""
    return {
        "uuid": f"{doc_name}.{doc['_id']}",
        "name": doc.get("name", ""),
        "id": doc["_id"],
        "type": doc_name,
    }


def limited_reference(doc_name: str, doc: dict[str, Any]) -> dict[str, Any]:
    """What a user with LIMITED permission sees: the reference and `img`."""
    return {**reference(doc_name, doc), "img": doc.get("img") or None}


def group_key(doc_name: str) -> str:
    """The root `entities` key of a type, spelled as the module produces it (`cardss`)."""
    return doc_name.lower() + "s"


def children(folders: Iterable[dict[str, Any]], parent_id: str | None) -> list[dict[str, Any]]:
    """The folders whose parent is `parent_id` (None: the top-level ones)."""
    return [f for f in folders if folder_of(f) == parent_id]


def folder_node(
    folder: dict[str, Any],
    folders: list[dict[str, Any]],
    contents: Callable[[dict[str, Any]], list[dict[str, Any]]],
    depth: int,
) -> dict[str, Any]:
    """`{id, uuid, type, <child name>: {...}, ..., entities?}`: child folders (down to `depth`
    more levels) are keys of the same object, keyed by name (same-named siblings overwrite each
    other, as in the module); `entities` only when the folder holds any."""
    node: dict[str, Any] = {
        "id": folder["_id"],
        "uuid": folder_uuid(folder["_id"]),
        "type": folder.get("type"),
    }
    if depth > 1:
        node.update(subtree(folders, folder["_id"], contents, depth - 1))
    entities = contents(folder)
    if entities:
        node["entities"] = entities
    return node


def subtree(
    folders: list[dict[str, Any]],
    parent_id: str | None,
    contents: Callable[[dict[str, Any]], list[dict[str, Any]]],
    depth: int,
) -> dict[str, Any]:
    """The child folders of `parent_id` as nodes keyed by name (or id), `depth` levels deep."""
    out: dict[str, Any] = {}
    if depth < 1:
        return out
    for folder in children(folders, parent_id):
        out[folder.get("name") or folder["_id"]] = folder_node(folder, folders, contents, depth)
    return out


def descendants(folders: list[dict[str, Any]], folder_id: str) -> list[dict[str, Any]]:
    """Every folder below `folder_id`, deepest first (the order to delete them in)."""
    out: list[dict[str, Any]] = []
    for child in children(folders, folder_id):
        out.extend(descendants(folders, child["_id"]))
        out.append(child)
    return out


def new_folder(
    folder_id: str, name: str, folder_type: str, parent_id: str | None, now_ms: int
) -> dict[str, Any]:
    """A Folder document with the tabletop's defaults."""
    return {
        "_id": folder_id,
        "name": name,
        "type": folder_type,
        "description": "",
        "folder": parent_id,
        "sorting": "a",
        "sort": 0,
        "color": None,
        "flags": {},
        "_stats": new_stats(now_ms),
    }
