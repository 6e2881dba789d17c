"""The utility routes: token selection, players, world info and execute-js."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import FORBIDDEN_SCRIPT_PATTERNS, B, forward
from vttrelay.relay.routes.model import SCRIPT_TIMEOUT, Group, Param, Sdk

NAME: Final = "Utility"

SCRIPT_MAX: Final = 1_000_000  # characters of an execute-js script

ROUTES: Final = (
    forward(
        "POST",
        "/select",
        "select",
        "Select tokens on the active scene (GM only).",
        NAME,
        Param("uuids", "array", B, description="Token uuids to select.", sdk_type="Sequence[str]"),
        Param("name", None, B, description="Token name to select.", sdk_type="str"),
        Param("data", "object", B, description="Attribute path -> value pairs to match."),
        Param("overwrite", "boolean", B, description="Replace the current selection."),
        Param("all", "boolean", B, description="Select every token on the scene."),
        scope="entity:read",
        require_any=("uuids", "name", "data", "all"),
        sdk=Sdk("select", "SelectReply"),
    ),
    forward(
        "GET",
        "/selected",
        "selected",
        "The selected tokens and their actors (GM only).",
        NAME,
        scope="entity:read",
        sdk=Sdk("selected", "SelectedReply"),
    ),
    forward(
        "GET",
        "/players",
        "players",
        "The world's users: the valid userId values.",
        NAME,
        scope="entity:read",
        sdk=Sdk("players", "PlayersReply"),
    ),
    forward(
        "GET",
        "/world-info",
        "world-info",
        "World, system, modules, users and active scene.",
        NAME,
        scope="world:info",
        sdk=Sdk("world_info", "Envelope[WorldInfo]"),
    ),
    forward(
        "POST",
        "/execute-js",
        "execute-js",
        "Run a script in the world (off unless the world enables it).",
        NAME,
        Param(
            "script",
            None,
            B,
            max_length=SCRIPT_MAX,
            description="JavaScript: the body of an async function.",
            sdk_type="str",
        ),
        scope="execute-js",
        timeout=SCRIPT_TIMEOUT,
        forbidden_patterns=FORBIDDEN_SCRIPT_PATTERNS,
        sdk=Sdk("execute_js", "ScriptReply"),
    ),
)

GROUP: Final = Group(NAME, "utility", ROUTES)
