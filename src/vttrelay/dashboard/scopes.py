"""The API-key scopes as the key form shows them: grouped, each explained, each with the routes
it opens (taken from the route table, so a new route shows up by itself).

Pure data and functions; every scope of `routes.ALL_SCOPES` appears in exactly one group.
"""

from __future__ import annotations

from dataclasses import dataclass

from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES, ROUTES, SCOPE_PRESETS

# (group title, what it is about, {scope: what holding it allows})
GROUPS: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "Read the world",
        "Look at documents and the world without changing anything.",
        {
            "world:info": "World, system and version information.",
            "clients:read": "List this account's worlds (/clients).",
            "entity:read": "Read actors, items, journals and other documents.",
            "sheet:read": "Render character sheets.",
            "search": "Search documents by name.",
            "structure:read": "Folders and compendium packs.",
            "user:read": "The world's users.",
            "file:read": "Browse and download files.",
            "scene:read": "Scenes and their contents.",
            "canvas:read": "Tokens, walls, lights and other canvas documents.",
            "effects:read": "Active effects and status conditions.",
            "encounter:read": "Combats and their turn order.",
            "roll:read": "Recent dice rolls.",
            "chat:read": "Chat messages.",
            "macro:list": "List macros.",
        },
    ),
    (
        "Change the world",
        "Create, change and delete things in the world.",
        {
            "entity:write": "Create, update and delete documents; give items, change currency.",
            "structure:write": "Create and delete folders.",
            "user:write": "Create and change users.",
            "file:write": "Upload files.",
            "scene:write": "Create, change, switch and delete scenes.",
            "canvas:write": "Place and change tokens, walls, lights on a scene.",
            "effects:write": "Add and remove effects and conditions.",
            "encounter:manage": "Start, run and end combats.",
            "chat:write": "Post, change and delete chat messages.",
            "playlist:control": "Play and stop playlists and sounds.",
            "session:manage": "Manage game sessions.",
        },
    ),
    (
        "Act in the game",
        "Roll dice and use the game system's rules.",
        {
            "roll:execute": "Roll dice formulas.",
            "dnd5e": "D&D 5e actions: checks, saves, attacks, spells, rests.",
            "macro:execute": "Run existing macros.",
        },
    ),
    (
        "Events",
        "Watch what happens, live.",
        {"events:subscribe": "Event streams (chat, rolls, combat, actors, scenes, hooks)."},
    ),
    (
        "Powerful",
        "Grant only to code you trust: these run scripts inside the world.",
        {
            "macro:write": "Create and change macros (code that runs in the world).",
            "execute-js": "Run arbitrary JavaScript in the world.",
        },
    ),
)


@dataclass(frozen=True)
class ScopeInfo:
    name: str
    help: str
    routes: tuple[str, ...]  # "GET /actor" ...
    default: bool  # in the scopes a new key gets by default
    presets: tuple[str, ...]  # the presets (`routes.SCOPE_PRESETS`) that hold it


@dataclass(frozen=True)
class ScopeGroup:
    title: str
    help: str
    scopes: tuple[ScopeInfo, ...]


def routes_by_scope() -> dict[str, tuple[str, ...]]:
    """Scope -> the routes (`METHOD /path`) that need it, from the route table; a scope a
    route's guard asks for (`macro:write` for `POST /create` of a Macro) names that route and
    the guarded value."""
    found: dict[str, list[str]] = {}
    for route in ROUTES:
        if route.scope:
            found.setdefault(route.scope, []).append(f"{route.method} {route.path}")
        for guard in route.guards:
            if guard.scope and guard.scope != route.scope:
                found.setdefault(guard.scope, []).append(
                    f"{route.method} {route.path} ({guard.param} {guard.value})"
                )
    return {scope: tuple(paths) for scope, paths in found.items()}


def _info(scope: str, text: str, by_scope: dict[str, tuple[str, ...]]) -> ScopeInfo:
    presets = tuple(p.name for p in SCOPE_PRESETS if scope in p.scopes)
    return ScopeInfo(scope, text, by_scope.get(scope, ()), scope in DEFAULT_SCOPES, presets)


def scope_groups() -> tuple[ScopeGroup, ...]:
    """The groups the key form shows: every scope of ALL_SCOPES that a route needs, once
    (unknown ones last); a scope with no route behind it is not offered."""
    by_scope = routes_by_scope()
    listed = {s for _, _, scopes in GROUPS for s in scopes}
    groups = [
        ScopeGroup(
            title,
            help_,
            tuple(
                _info(s, text, by_scope)
                for s, text in scopes.items()
                if s in ALL_SCOPES and s in by_scope
            ),
        )
        for title, help_, scopes in GROUPS
    ]
    rest = tuple(_info(s, "", by_scope) for s in ALL_SCOPES if s not in listed and s in by_scope)
    if rest:
        groups.append(ScopeGroup("Other", "", rest))
    return tuple(g for g in groups if g.scopes)
