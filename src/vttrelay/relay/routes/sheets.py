"""The sheet route (files-sheet-sessions §2): a picture of an actor's character sheet."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import CLIENT_ID, USER_ID, Q
from vttrelay.relay.routes.model import Group, Param, Route, Sdk

NAME: Final = "Sheet"
SHEET_TIMEOUT: Final = 20.0

ROUTES: Final = (
    Route(
        "GET",
        "/sheet",
        "local",
        "A picture of an actor's character sheet: PNG or JPEG bytes (X-Image-Width, "
        "X-Image-Height). A user with LIMITED permission sees the name and portrait only.",
        NAME,
        scope="sheet:read",
        action="sheet-screenshot",
        handler="sheet",
        timeout=SHEET_TIMEOUT,
        params=(
            CLIENT_ID,
            USER_ID,
            Param("uuid", "string", Q, description="The actor's (or its token's) uuid."),
            Param("selected", None, Q, description="`true`: the GM's first selected token."),
            Param("actor", None, Q, description="`true`: with selected, the token's actor."),
            Param("format", None, Q, description="`jpeg`, else PNG."),
            Param("quality", None, Q, description="JPEG quality, 0-1 (default 0.9)."),
            Param("scale", None, Q, description="Size factor, 0.25-3 (default 1: 1000 px wide)."),
        ),
        require_any=("uuid", "selected"),
        require_any_error="Either 'uuid' or 'selected' is required",
        extra={
            "content_type": "image/png",
            "responses": {"200": "The picture (image/png or image/jpeg)."},
        },
        sdk=Sdk("image", "bytes"),
    ),
)

GROUP: Final = Group(NAME, "sheets", ROUTES)
