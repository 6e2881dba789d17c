"""The structure routes: folders, documents and compendium packs of the world."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, B, P, Q, forward, local
from vttrelay.relay.routes.model import Group, NoSdk, Param, Route, Sdk

NAME: Final = "Structure"

ROUTES: Final = (
    forward(
        "GET",
        "/structure",
        "structure",
        "Folders, documents and compendium packs of the world.",
        NAME,
        Param("includeEntityData", "boolean", Q, description="Whole documents, not references."),
        Param(
            "path",
            None,
            Q,
            description="`Folder.<id>` or `Compendium.<pack id>`; the root when absent.",
            sdk_type="str",
        ),
        Param("recursive", "boolean", Q, description="Nest sub-folders."),
        Param("recursiveDepth", "integer", Q, description="How deep to nest (default 5)."),
        Param(
            "types",
            None,
            Q,
            description="Comma-separated document types, e.g. `Actor,Item` (default all).",
            sdk_type="str",
        ),
        scope="structure:read",
        sdk=Sdk("get", "Envelope[Structure]"),
    ),
    forward(
        "GET",
        "/get-folder",
        "get-folder",
        "A folder by exact name, with its contents.",
        NAME,
        Param("name", "string", BQ, required=True, description="Folder name (exact)."),
        scope="structure:read",
        sdk=Sdk("get_folder", "Envelope[Folder]"),
    ),
    forward(
        "POST",
        "/create-folder",
        "create-folder",
        "Create a folder (GM only).",
        NAME,
        Param("name", "string", BQ, required=True, description="Folder name."),
        Param(
            "folderType",
            "string",
            BQ,
            required=True,
            description="Scene, Actor, Item, JournalEntry, RollTable, Cards, Macro, Playlist.",
        ),
        Param("parentFolderId", None, BQ, description="Id of the parent folder.", sdk_type="str"),
        scope="structure:write",
        sdk=Sdk("create_folder", "Envelope[Folder]"),
    ),
    forward(
        "DELETE",
        "/delete-folder",
        "delete-folder",
        "Delete a folder; with deleteAll, its sub-folders and documents too (GM only).",
        NAME,
        Param("folderId", "string", BQ, required=True, description="Folder id."),
        Param("deleteAll", "boolean", BQ, description="Also delete what it holds."),
        scope="structure:write",
        sdk=Sdk("delete_folder", "Envelope[FolderDeleted]"),
    ),
    local(
        "GET",
        "/contents/{path:.*}",
        "contents_deprecated",
        "Deprecated: use GET /structure?path=...",
        NAME,
        scope="structure:read",
        params=(Param("path", "string", P, description="Anything: the answer is always 400."),),
        sdk=NoSdk("deprecated: always answers 400, use structure.get(path=...)"),
    ),
)

# World actions reachable only over the client WebSocket /ws/api (no REST path): the module's
# older folder and compendium listing, whose REST route is answered by the relay as deprecated
# (endpoints-beyond-seed §4.5).
WS_ONLY_ROUTES: Final[tuple[Route, ...]] = (
    forward(
        "GET",
        "",
        "contents",
        "A folder's documents or a compendium's index entries (WebSocket only).",
        NAME,
        Param(
            "path", None, B, description="`Folder.<id>` or `Compendium.<pack id>`.", sdk_type="str"
        ),
        scope="structure:read",
        sdk=NoSdk("WebSocket only (/ws/api)"),
    ),
)

GROUP: Final = Group(NAME, "structure", ROUTES)
