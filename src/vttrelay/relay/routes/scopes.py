"""The scopes an API key may hold (wire-protocol §7.2), those a new key gets by default, and the
named presets (`vttrelay keys create --preset gm`, the dashboard's key form) built from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ALL_SCOPES: Final = (
    "entity:read",
    "entity:write",
    "roll:read",
    "roll:execute",
    "chat:read",
    "chat:write",
    "encounter:read",
    "encounter:manage",
    "macro:list",
    "macro:execute",
    "macro:write",
    "scene:read",
    "scene:write",
    "canvas:read",
    "canvas:write",
    "effects:read",
    "effects:write",
    "user:read",
    "user:write",
    "file:read",
    "file:write",
    "playlist:control",
    "world:info",
    "clients:read",
    "sheet:read",
    "events:subscribe",
    "session:manage",
    "execute-js",
    "search",
    "structure:read",
    "structure:write",
    "dnd5e",
)
DEFAULT_SCOPES: Final = (
    "entity:read",
    "roll:read",
    "chat:read",
    "encounter:read",
    "macro:list",
    "scene:read",
    "canvas:read",
    "effects:read",
    "user:read",
    "file:read",
    "world:info",
    "clients:read",
    "sheet:read",
    "events:subscribe",
    "search",
    "structure:read",
    "dnd5e",
)

# Scopes for the relay's operator rather than a game master: starting and stopping worlds and
# browser sessions on the relay's host.
OPERATOR_SCOPES: Final = ("session:manage",)
# What a game master's tools need to run every recipe of the README (the Goblin Ambush fight:
# scene:write, encounter:manage, entity:write, canvas:write; scripts, macros, files, users,
# playlists, events): every scope but the operator's.
GM_SCOPES: Final = tuple(s for s in ALL_SCOPES if s not in OPERATOR_SCOPES)


@dataclass(frozen=True)
class ScopePreset:
    """A named set of scopes a key can be created with."""

    name: str
    title: str  # a button's label on the dashboard's key form
    help: str
    scopes: tuple[str, ...]


SCOPE_PRESETS: Final = (
    ScopePreset(
        "default", "Usual", "the reference relay's defaults, read-only and dnd5e", DEFAULT_SCOPES
    ),
    ScopePreset(
        "gm",
        "Game master",
        "what a game master's tools need, every scope but session:manage",
        GM_SCOPES,
    ),
    ScopePreset("all", "All", "every scope", ALL_SCOPES),
)


def scope_preset(name: str) -> ScopePreset | None:
    """The preset named `name`, or None."""
    return next((p for p in SCOPE_PRESETS if p.name == name), None)
