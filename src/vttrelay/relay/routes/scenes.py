"""The scene routes: read, create, update, delete and activate scenes, and their pictures."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, CLIENT_ID, USER_ID, B, Q, forward
from vttrelay.relay.routes.model import (
    DEFAULT_TIMEOUT,
    USE_TIMEOUT,
    Group,
    Param,
    Route,
    Sdk,
)

NAME: Final = "Scenes"

SCENE_SELECTORS = ("sceneId", "name", "active", "viewed", "all")


def _scene(
    method: str,
    path: str,
    action: str,
    summary: str,
    *params: Param,
    sdk: Sdk,
    scope: str = "scene:write",
    timeout: float = DEFAULT_TIMEOUT,
    require_any: tuple[str, ...] = (),
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
        require_any=require_any,
        sdk=sdk,
    )


ROUTES: Final = (
    _scene(
        "GET",
        "/scene",
        "get-scene",
        "One scene (by id, exact name, active or viewed) or all of them.",
        Param("sceneId", None, Q, description="Scene id.", sdk_type="str"),
        Param("name", None, Q, description="Exact scene name (case-sensitive).", sdk_type="str"),
        Param("active", "boolean", Q, description="The active scene."),
        Param("viewed", "boolean", Q, description="The scene the GM is viewing."),
        Param("all", "boolean", Q, description="Every scene."),
        scope="scene:read",
        require_any=SCENE_SELECTORS,
        sdk=Sdk("get", "Envelope[Document]"),
    ),
    _scene(
        "POST",
        "/scene",
        "create-scene",
        "Create a scene.",
        Param("data", "object", B, required=True, description="The new scene's data."),
        timeout=USE_TIMEOUT,
        sdk=Sdk("create", "Envelope[Document]"),
    ),
    _scene(
        "PUT",
        "/scene",
        "update-scene",
        "Update a scene (selected by id, exact name or active).",
        Param("data", "object", B, required=True, description="Fields to change."),
        Param("sceneId", None, BQ, description="Scene id.", sdk_type="str"),
        Param("name", None, BQ, description="Exact name of the scene to update.", sdk_type="str"),
        Param("active", "boolean", BQ, description="Update the active scene."),
        timeout=USE_TIMEOUT,
        require_any=("sceneId", "name", "active"),
        sdk=Sdk("update", "Envelope[Document]"),
    ),
    _scene(
        "DELETE",
        "/scene",
        "delete-scene",
        "Delete a scene (by id or exact name).",
        Param("sceneId", None, Q, description="Scene id.", sdk_type="str"),
        Param("name", None, Q, description="Exact scene name.", sdk_type="str"),
        require_any=("sceneId", "name"),
        sdk=Sdk("delete", "Done"),
    ),
    Route(
        "GET",
        "/scene/image",
        "local",
        "A picture of the viewed scene: PNG or JPEG bytes (X-Image-Width, X-Image-Height).",
        NAME,
        scope="scene:read",
        action="scene-screenshot",
        handler="scene_image",
        timeout=USE_TIMEOUT,
        params=(
            CLIENT_ID,
            USER_ID,
            Param(
                "sceneId",
                None,
                Q,
                description="Scene id (default: the viewed scene).",
                sdk_type="str",
            ),
            Param("active", "boolean", Q, description="The active (viewed) scene."),
            Param("format", "string", Q, description="png (default) or jpeg."),
            Param("quality", "number", Q, description="JPEG quality, 0-1."),
            Param("viewport", None, Q, description="Accepted; the whole scene is drawn."),
            Param("width", "number", Q, description="Width in pixels (keeps the aspect ratio)."),
            Param("height", "number", Q, description="Height in pixels (keeps the aspect)."),
            Param("showGrid", "boolean", Q, description="Draw the grid (default true)."),
            Param("hideOverlays", "boolean", Q, description="Leave out walls and lights."),
        ),
        extra={
            "content_type": "image/png",
            "responses": {"200": "The picture (image/png or image/jpeg)."},
        },
        sdk=Sdk("image", "bytes"),
    ),
    _scene(
        "GET",
        "/scene/image/raw",
        "scene-raw-image",
        "The scene's background image: its src, and the file (a data URL) when the world has it.",
        Param(
            "sceneId", None, BQ, description="Scene id (default: the viewed scene).", sdk_type="str"
        ),
        Param("active", "boolean", BQ, description="The active (viewed) scene."),
        scope="scene:read",
        timeout=USE_TIMEOUT,
        sdk=Sdk("raw_image", "Envelope[SceneBackground]"),
    ),
    _scene(
        "POST",
        "/switch-scene",
        "switch-scene",
        "Activate a scene (GM only): it becomes the scene everyone sees.",
        Param("sceneId", None, BQ, description="Scene id.", sdk_type="str"),
        Param("name", None, BQ, description="Exact scene name.", sdk_type="str"),
        timeout=USE_TIMEOUT,
        require_any=("sceneId", "name"),
        sdk=Sdk("switch", "Envelope[Document]"),
    ),
)

GROUP: Final = Group(NAME, "scenes", ROUTES)
