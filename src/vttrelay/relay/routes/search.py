"""The search route (endpoints-beyond-seed §2): the world's documents by name and filters."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import Q, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Search"

ROUTES: Final = (
    forward(
        "GET",
        "/search",
        "search",
        "Search the world's documents by name and filters.",
        NAME,
        Param("query", "string", Q, description="Text to find in names."),
        Param(
            "filter",
            None,
            Q,
            description="`Actor`, or `key:value` pairs: `documentType:Item,subType:weapon`.",
            sdk_type="str",
        ),
        Param("excludeCompendiums", "boolean", Q, description="World documents only."),
        Param("limit", "integer", Q, description="At most this many (default 200, max 500)."),
        Param("minified", "boolean", Q, description="Only uuid, id, name, img, documentType."),
        Param(
            "ownedByUserId", None, Q, description="Only documents this user owns.", sdk_type="str"
        ),
        scope="search",
        require_any=("query", "filter"),
        require_any_error="'query' or 'filter' is required",
        sdk=Sdk("find", "SearchReply"),
    ),
)

GROUP: Final = Group(NAME, "search", ROUTES)
