"""The canvas routes (endpoints-beyond-seed §10): a scene's embedded documents, token moves and
distances."""

from __future__ import annotations

from typing import Any, Final

from vttrelay.relay.routes.common import BQ, B, P, Q, bq, forward
from vttrelay.relay.routes.model import DEFAULT_TIMEOUT, USE_TIMEOUT, Group, Param, Route, Sdk

NAME: Final = "Canvas"

# documentType -> the embedded document class the relay sends as `className` (§10.1).
CANVAS_DOCUMENT_TYPES: Final = {
    "tokens": "Token",
    "tiles": "Tile",
    "drawings": "Drawing",
    "lights": "AmbientLight",
    "sounds": "AmbientSound",
    "notes": "Note",
    "templates": "MeasuredTemplate",
    "walls": "Wall",
    "regions": "Region",
}
DOCUMENT_TYPE = Param(
    "documentType",
    "string",
    P,
    required=True,
    description="tokens, tiles, drawings, lights, sounds, notes, templates, walls or regions.",
)
SCENE_ID_Q = Param("sceneId", "string", Q, description="Scene id (default: the active scene).")
SCENE_ID_BQ = Param("sceneId", "string", BQ, description="Scene id (default: the active scene).")


def _canvas(
    method: str,
    path: str,
    action: str,
    summary: str,
    scope: str,
    *params: Param,
    sdk: Sdk,
    timeout: float = DEFAULT_TIMEOUT,
    document_types: dict[str, str] | None = None,
    **fields: Any,
) -> Route:
    return forward(
        method,
        path,
        action,
        summary,
        NAME,
        *params,
        scope=scope,
        timeout=timeout,
        document_types=document_types,
        sdk=sdk,
        **fields,
    )


ROUTES: Final = (
    _canvas(
        "GET",
        "/canvas/{documentType}",
        "get-canvas-documents",
        "List a scene's embedded documents of one type, or one by id.",
        "canvas:read",
        DOCUMENT_TYPE,
        SCENE_ID_Q,
        Param("documentId", "string", Q, description="Only this document."),
        document_types=CANVAS_DOCUMENT_TYPES,
        sdk=Sdk("get", "CanvasDocumentsReply"),
    ),
    _canvas(
        "POST",
        "/canvas/{documentType}",
        "create-canvas-document",
        "Create a document (token, tile, wall, light...) on a scene.",
        "canvas:write",
        DOCUMENT_TYPE,
        # Untyped: an object, or an array of objects to create several at once. The reference
        # relay refuses arrays although its docs and the module accept them (§15 X6); the
        # world checks the value.
        Param(
            "data",
            None,
            B,
            required=True,
            description="The new document's data, or an array of them.",
            sdk_type="Mapping[str, Json] | Sequence[Mapping[str, Json]]",
        ),
        SCENE_ID_BQ,
        timeout=USE_TIMEOUT,
        document_types=CANVAS_DOCUMENT_TYPES,
        sdk=Sdk("create", "CanvasDocumentsReply"),
    ),
    _canvas(
        "PUT",
        "/canvas/{documentType}",
        "update-canvas-document",
        "Update a document on a scene (nested data merges).",
        "canvas:write",
        DOCUMENT_TYPE,
        Param("documentId", "string", BQ, required=True, description="Id of the document."),
        Param("data", "object", B, required=True, description="The changes."),
        SCENE_ID_BQ,
        timeout=USE_TIMEOUT,
        document_types=CANVAS_DOCUMENT_TYPES,
        sdk=Sdk("update", "CanvasDocumentsReply"),
    ),
    _canvas(
        "DELETE",
        "/canvas/{documentType}",
        "delete-canvas-document",
        "Delete a document from a scene, or several at once.",
        "canvas:write",
        DOCUMENT_TYPE,
        Param("documentId", "string", Q, description="Id of the document."),
        Param(
            "documentIds",
            "array",
            BQ,
            description="Ids of several documents (at most 10000), all deleted or none.",
            sdk_type="Sequence[str]",
        ),
        SCENE_ID_Q,
        document_types=CANVAS_DOCUMENT_TYPES,
        sdk=Sdk("delete", "CanvasDocumentsReply"),
        require_any=("documentId", "documentIds"),
        require_any_error="'documentId' is required",
    ),
    _canvas(
        "POST",
        "/move-token",
        "move-token",
        "Move a token to (x, y) as given (no snap, no bound to the scene), through optional "
        "waypoints.",
        "canvas:write",
        bq("x", "number", True, description="Target x of the token's top-left corner (pixels)."),
        bq("y", "number", True, description="Target y of the token's top-left corner (pixels)."),
        bq("uuid", "string", description="Token uuid, or an actor uuid (its token)."),
        bq("name", "string", description="Token name (case-insensitive)."),
        bq(
            "waypoints",
            "array",
            description="[{x, y}, ...] visited first.",
            sdk_type="Sequence[Mapping[str, float]]",
        ),
        bq("animate", "boolean", description="Animate the move (default true)."),
        SCENE_ID_BQ,
        sdk=Sdk("move_token", "Envelope[TokenMoved]"),
    ),
    _canvas(
        "GET",
        "/measure-distance",
        "measure-distance",
        "Distance between two points or tokens, with the grid's diagonal rule and units.",
        "canvas:read",
        bq("originX", "number", description="Origin x (pixels)."),
        bq("originY", "number", description="Origin y (pixels)."),
        bq("originUuid", "string", description="Origin token uuid."),
        bq("originName", "string", description="Origin token name."),
        bq("targetX", "number", description="Target x (pixels)."),
        bq("targetY", "number", description="Target y (pixels)."),
        bq("targetUuid", "string", description="Target token uuid."),
        bq("targetName", "string", description="Target token name."),
        SCENE_ID_BQ,
        sdk=Sdk("measure_distance", "Envelope[Distance]"),
    ),
)

GROUP: Final = Group(NAME, "canvas", ROUTES)
