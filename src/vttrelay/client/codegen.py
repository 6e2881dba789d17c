"""Generate the SDK's methods from the relay's route table: `python -m vttrelay.client.codegen`.

Writes two committed modules next to this one:

- `_routes.py`: the route table as the client needs it (`spec.RouteSpec` per endpoint: method,
  path, wire and Python parameter names, JSON types, sources), so the installed client never
  imports the relay;
- `_methods.py`: one class per API group (`Dnd5e`, `Chat`, `Entities`, ... and `Async*`
  twins), one typed method per route, and the `SyncGroups` / `AsyncGroups` mixins that hang the
  groups on `Client` / `AsyncClient` (`relay.dnd5e.skill_check(...)`).

Run it after adding or changing a route; `tests/unit/client/test_codegen.py` fails while the
committed files differ from what this writes, and names every route without a method. This
module is the only part of `vttrelay.client` that imports the server (its route table): it is a
development tool, not needed by an installed client.

The data below is ours (naming and typing choices); everything else comes from the table.
"""

from __future__ import annotations

import keyword
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from vttrelay.relay.routes import ROUTES, Param, Route

HERE: Final = Path(__file__).parent
ROUTES_FILE: Final = HERE / "_routes.py"
METHODS_FILE: Final = HERE / "_methods.py"

# Routes without an SDK method, each with the reason. Everything else in the table gets one.
EXCLUDED: Final[dict[str, str]] = {
    "GET /health": "the same handler as GET /api/health (status.health)",
    "GET /docs": "an HTML page for people (the API reference)",
    "GET /pair/{code}": "an HTML page for people (the pairing approval page)",
    "GET /approve/{code}": "an HTML page for people (the key approval page)",
    "GET /contents/{path:.*}": "deprecated: always answers 400, use structure.get(path=...)",
    "GET /metrics": "Prometheus text for a metrics scraper, not JSON",
}

# API group (routes.Route.group) -> attribute on the client.
GROUPS: Final[dict[str, str]] = {
    "DnD5e": "dnd5e",
    "Events": "streams",
}

# Method names where the default (the world action, or the handler, in snake_case) reads badly
# under its group: `relay.chat.send` rather than `relay.chat.chat_send`.
NAMES: Final[dict[str, str]] = {
    "GET /chat": "messages",
    "POST /chat": "send",
    "DELETE /chat/{messageId}": "delete",
    "DELETE /chat": "flush",
    "GET /rolls": "list",
    "GET /lastroll": "last",
    "GET /effects/list": "status_effects",
    "GET /effects": "get",
    "POST /effects": "add",
    "DELETE /effects": "remove",
    "GET /structure": "get",
    "GET /macros": "list",
    "POST /macro/{uuid}/execute": "execute",
    "GET /canvas/{documentType}": "get",
    "POST /canvas/{documentType}": "create",
    "PUT /canvas/{documentType}": "update",
    "DELETE /canvas/{documentType}": "delete",
    "GET /playlists": "list",
    "POST /playlist/play": "play",
    "POST /playlist/stop": "stop",
    "POST /playlist/next": "next",
    "POST /playlist/volume": "volume",
    "GET /users": "list",
    "GET /user": "get",
    "POST /user": "create",
    "PUT /user": "update",
    "DELETE /user": "delete",
    "GET /encounters": "list",
    "POST /start-encounter": "start",
    "POST /end-encounter": "end",
    "POST /add-to-encounter": "add",
    "POST /remove-from-encounter": "remove",
    "GET /scene": "get",
    "POST /scene": "create",
    "PUT /scene": "update",
    "DELETE /scene": "delete",
    "GET /scene/image": "image",
    "GET /scene/image/raw": "raw_image",
    "POST /switch-scene": "switch",
    "GET /get": "get",
    "GET /search": "find",
    "GET /chat/subscribe": "chat",
    "GET /rolls/subscribe": "rolls",
    "GET /hooks/subscribe": "hooks",
    "GET /encounters/subscribe": "encounters",
    "GET /actor/subscribe": "actor",
    "GET /scene/subscribe": "scene",
    "GET /clients": "list",
    "GET /api/key": "key",
    "GET /api/health": "health",
    "GET /api/status": "status",
    "GET /api/clients/{clientId}/active": "client_active",
}

# Routes whose reply is not JSON.
BINARY: Final = frozenset({"GET /scene/image"})

# Reply shapes (names in `types.py`) of every route; a route added to the table without one gets
# `Envelope[Json]` (a world reply) or `dict[str, Json]` (the relay's own) until it is described.
REPLIES: Final[dict[str, str]] = {
    "GET /dnd5e/get-actor-details": "Envelope[ActorDetails]",
    "POST /dnd5e/modify-item-charges": "Envelope[ItemCharges]",
    "POST /dnd5e/use-ability": "Envelope[UseResult]",
    "POST /dnd5e/use-feature": "Envelope[UseResult]",
    "POST /dnd5e/use-spell": "Envelope[UseResult]",
    "POST /dnd5e/use-item": "Envelope[UseResult]",
    "POST /dnd5e/short-rest": "Envelope[RestResult]",
    "POST /dnd5e/long-rest": "Envelope[RestResult]",
    "POST /dnd5e/skill-check": "Envelope[CheckResult]",
    "POST /dnd5e/ability-save": "Envelope[CheckResult]",
    "POST /dnd5e/ability-check": "Envelope[CheckResult]",
    "POST /dnd5e/death-save": "Envelope[DeathSaveResult]",
    "POST /dnd5e/modify-experience": "Envelope[ExperienceChange]",
    "GET /dnd5e/concentration": "Envelope[Concentration]",
    "POST /dnd5e/break-concentration": "Envelope[ConcentrationBroken]",
    "POST /dnd5e/concentration-save": "Envelope[ConcentrationSave]",
    "POST /dnd5e/equip-item": "Envelope[ItemEquipped]",
    "POST /dnd5e/attune-item": "Envelope[ItemAttuned]",
    "POST /dnd5e/transfer-currency": "Envelope[CurrencyTransfer]",
    "POST /dnd5e/modify-currency": "Envelope[CurrencyChange]",
    "POST /dnd5e/prepare-spell": "Envelope[SpellPrepared]",
    "GET /chat": "Envelope[ChatPage]",
    "POST /chat": "Envelope[ChatMessage]",
    "DELETE /chat/{messageId}": "Envelope[ChatDeleted]",
    "DELETE /chat": "Envelope[Message]",
    "POST /select": "SelectReply",
    "GET /selected": "SelectedReply",
    "GET /players": "PlayersReply",
    "GET /world-info": "Envelope[WorldInfo]",
    "POST /execute-js": "ScriptReply",
    "POST /roll": "Envelope[RollData]",
    "GET /rolls": "Envelope[RollList]",
    "GET /lastroll": "Envelope[LastRoll]",
    "GET /effects/list": "Envelope[StatusEffects]",
    "GET /effects": "Envelope[EffectsData]",
    "POST /effects": "Envelope[EffectAdded]",
    "DELETE /effects": "Envelope[EffectRemoved]",
    "GET /structure": "Envelope[Structure]",
    "GET /get-folder": "Envelope[Folder]",
    "POST /create-folder": "Envelope[Folder]",
    "DELETE /delete-folder": "Envelope[FolderDeleted]",
    "GET /macros": "MacrosReply",
    "POST /macro/{uuid}/execute": "MacroExecuted",
    "GET /canvas/{documentType}": "CanvasDocumentsReply",
    "POST /canvas/{documentType}": "CanvasDocumentsReply",
    "PUT /canvas/{documentType}": "CanvasDocumentsReply",
    "DELETE /canvas/{documentType}": "CanvasDocumentsReply",
    "POST /move-token": "Envelope[TokenMoved]",
    "GET /measure-distance": "Envelope[Distance]",
    "GET /playlists": "Envelope[Playlists]",
    "POST /playlist/play": "Envelope[PlaylistState]",
    "POST /playlist/stop": "Envelope[PlaylistState]",
    "POST /playlist/next": "Envelope[PlaylistState]",
    "POST /playlist/volume": "Envelope[PlaylistState]",
    "POST /play-sound": "Envelope[SoundPlayed]",
    "POST /stop-sound": "Envelope[SoundStopped]",
    "GET /users": "Envelope[UserList]",
    "GET /user": "Envelope[User]",
    "POST /user": "Envelope[User]",
    "PUT /user": "Envelope[User]",
    "DELETE /user": "Done",
    "GET /encounters": "EncountersReply",
    "POST /start-encounter": "EncounterStarted",
    "POST /next-turn": "TurnReply",
    "POST /next-round": "TurnReply",
    "POST /last-turn": "TurnReply",
    "POST /last-round": "TurnReply",
    "POST /end-encounter": "EncounterEnded",
    "POST /add-to-encounter": "CombatantsAdded",
    "POST /remove-from-encounter": "CombatantsRemoved",
    "GET /scene": "Envelope[Document]",
    "POST /scene": "Envelope[Document]",
    "PUT /scene": "Envelope[Document]",
    "DELETE /scene": "Done",
    "GET /scene/image/raw": "Envelope[SceneBackground]",
    "POST /switch-scene": "Envelope[Document]",
    "GET /get": "EntityReply",
    "POST /create": "EntityCreated",
    "PUT /update": "EntityUpdated",
    "DELETE /delete": "Done",
    "POST /give": "ItemGiven",
    "POST /remove": "ItemRemoved",
    "POST /increase": "AttributeChanged",
    "POST /decrease": "AttributeChanged",
    "POST /kill": "KillReply",
    "GET /search": "SearchReply",
    "GET /clients": "ClientsReply",
    "GET /api/key": "KeyInfo",
    "GET /api/health": "HealthReply",
    "GET /api/status": "StatusReply",
    "GET /openapi.json": "OpenApiDocument",
    "POST /auth/pair": "Paired",
    "GET /api/clients/{clientId}/active": "Active",
    "POST /api/self-unpair": "Unpaired",
    "POST /auth/pair-request": "PairRequested",
    "GET /auth/pair-request/{code}/status": "PairStatus",
    "POST /auth/key-request": "KeyRequested",
    "GET /auth/key-request/{code}/status": "KeyStatus",
    "POST /auth/key-request/exchange": "KeyExchanged",
}

# Event data per stream (types.py); streams not named here carry `DocumentEventData`.
EVENTS: Final[dict[str, str]] = {
    "GET /chat/subscribe": "ChatEventData",
    "GET /rolls/subscribe": "RollEventData",
}

# Parameter types narrower than their JSON type: by `METHOD /path name`, then by name.
PARAM_TYPES: Final[dict[str, str]] = {
    "POST /dnd5e/skill-check skill": "shapes.Skill",
    "POST /dnd5e/ability-save ability": "shapes.Ability",
    "POST /dnd5e/ability-check ability": "shapes.Ability",
    "GET /dnd5e/get-actor-details details": "Sequence[shapes.DetailSection]",
    "POST /dnd5e/modify-currency currency": "shapes.Denomination",
    "POST /dnd5e/transfer-currency currency": "Mapping[shapes.Denomination, int]",
    "uuids": "Sequence[str]",
    "tokenUuids": "Sequence[str]",
    "whisper": "Sequence[str]",
    "scopes": "Sequence[str]",
    "clientIds": "Sequence[str]",
    "requestedRemoteScopes": "Sequence[str]",
    "waypoints": "Sequence[Mapping[str, float]]",
}

PY_TYPES: Final[dict[str | None, str]] = {
    "string": "str",
    "number": "float",
    "boolean": "bool",
    "array": "Sequence[shapes.Json]",
    "object": "Mapping[str, shapes.Json]",
    None: "shapes.Json",
}


def route_key(route: Route) -> str:
    return f"{route.method} {route.path}"


def snake(name: str) -> str:
    """`actorUuid` -> `actor_uuid`, `autoHDThreshold` -> `auto_hd_threshold`, `rollNPC` ->
    `roll_npc`, `skill-check` -> `skill_check`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = name.replace("-", "_").lower()
    return f"{name}_" if keyword.iskeyword(name) else name


def plain_path(path: str) -> str:
    """aiohttp's `{name:regex}` placeholders written `{name}`."""
    return re.sub(r"\{(\w+):[^}]*\}", r"{\1}", path)


def group_attr(route: Route) -> str:
    return GROUPS.get(route.group, snake(route.group))


def method_name(route: Route) -> str:
    return NAMES.get(route_key(route)) or snake(route.action or route.handler or route.path)


def class_name(attr: str) -> str:
    return "".join(part.capitalize() for part in attr.split("_"))


def sdk_routes() -> list[Route]:
    """The routes that get a method (all but `EXCLUDED`), in table order."""
    return [r for r in ROUTES if route_key(r) not in EXCLUDED]


def reply_kind(route: Route) -> str:
    if route.mode == "stream":
        return "stream"
    return "bytes" if route_key(route) in BINARY else "json"


def _spec(route: Route) -> str:
    params = "".join(
        f"            ParamSpec({p.name!r}, {snake(p.name)!r}, {p.type!r}, {p.sources!r}"
        + (", required=True" if p.required else "")
        + "),\n"
        for p in route.params
    )
    return (
        f"    RouteSpec(\n"
        f"        {route.method!r},\n"
        f"        {plain_path(route.path)!r},\n"
        f"        {group_attr(route)!r},\n"
        f"        {method_name(route)!r},\n"
        f"        {route.action!r},\n"
        f"        (\n{params}        ),\n"
        f"        {reply_kind(route)!r},\n"
        f"    ),\n"
    )


HEADER: Final = (
    '"""{doc}\n\nGenerated by `python -m vttrelay.client.codegen` from the relay\'s route table: '
    'do not edit.\n"""\n\n'
)


def render_routes(routes: Iterable[Route]) -> str:
    body = "".join(_spec(r) for r in routes)
    return (
        HEADER.format(doc="Every endpoint the SDK calls, as `spec.RouteSpec` data.")
        + "from vttrelay.client.spec import ParamSpec, RouteSpec\n\n"
        + f"ROUTES: tuple[RouteSpec, ...] = (\n{body})\n\n"
        + "BY_KEY: dict[str, RouteSpec] = {route.key: route for route in ROUTES}\n"
    )


def _is_client_id(p: Param) -> bool:
    return p.name == "clientId" and "path" not in p.sources


def _param_type(route: Route, param: Param) -> str:
    named = PARAM_TYPES.get(f"{route_key(route)} {param.name}") or PARAM_TYPES.get(param.name)
    return named or PY_TYPES[param.type]


def _signature(route: Route) -> tuple[list[str], list[str]]:
    """The parameters of a method (positional: required ones in table order; keyword-only: the
    rest, None meaning 'not sent') and the `wire: python` pairs of its call."""
    required = [p for p in route.params if p.required and not _is_client_id(p)]
    optional = [p for p in route.params if not p.required and not _is_client_id(p)]
    optional.sort(key=lambda p: p.name == "userId")  # user_id last, then client_id
    has_client_id = any(_is_client_id(p) for p in route.params)
    args = [f"{snake(p.name)}: {_param_type(route, p)}" for p in required]
    keywords = [f"{snake(p.name)}: {_param_type(route, p)} | None = None" for p in optional]
    if has_client_id:
        keywords.append("client_id: str | None = None")
    signature = args + (["*", *keywords] if keywords else [])
    pairs = [f"{p.name!r}: {snake(p.name)}" for p in route.params]
    return signature, pairs


def _wrap(text: str, indent: str, first: str = "", more: str = "") -> list[str]:
    width = 100 - len(indent)
    wrapped = textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=more, break_on_hyphens=False
    )
    return wrapped or [""]


def _docstring(route: Route, indent: str) -> str:
    where = f"`{route.method} {plain_path(route.path)}`"
    where += f", scope `{route.scope}`" if route.scope else ""
    lines = _wrap(f"{route.summary.rstrip('.')} ({where}).", indent + '"""')
    described = sorted(
        (p for p in route.params if p.description),
        key=lambda p: _is_client_id(p) or p.name == "userId",
    )
    if described:
        lines += ["", "Args:"]
        for p in described:
            lines += _wrap(f"{snake(p.name)}: {p.description}", indent, "    ", "        ")
    text = f"\n{indent}".join(line.rstrip() for line in lines).replace("\\", "\\\\")
    text = text.replace('"""', "'''")
    return f'{indent}"""{text}\n{indent}"""\n' if len(lines) > 1 else f'{indent}"""{text}"""\n'


def _returns(route: Route, asynchronous: bool) -> str:
    key = route_key(route)
    if route.mode == "stream":
        event = EVENTS.get(key, "DocumentEventData")
        if asynchronous:
            return f"AsyncGenerator[StreamEvent[{event}], None]"
        return f"Generator[StreamEvent[{event}], None, None]"
    if key in BINARY:
        return "bytes"
    return REPLIES.get(key, "Envelope[Json]" if route.mode == "forward" else "dict[str, Json]")


def _method(route: Route, asynchronous: bool) -> str:
    signature, pairs = _signature(route)
    name = method_name(route)
    key = route_key(route)
    if route.mode == "stream":
        signature = [*signature, "last_event_id: str = ''", "reconnects: int = 5"]
        if "*" not in signature:
            signature.insert(0, "*")
    params = ", ".join(["self", *signature])
    call_args = "{" + ", ".join(pairs) + "}"
    indent = " " * 8
    head = f"    {'async ' if asynchronous and route.mode != 'stream' else ''}def {name}(\n"
    head += f"        {params},\n    ) -> {_qualified(_returns(route, asynchronous))}:\n"
    if route.mode == "stream":
        body = (
            f"{indent}return self._client.stream(\n"
            f"{indent}    BY_KEY[{key!r}], {call_args},\n"
            f"{indent}    last_event_id=last_event_id, reconnects=reconnects,\n"
            f"{indent})\n"
        )
    else:
        await_ = "await " if asynchronous else ""
        body = f"{indent}return {await_}self._client.request(BY_KEY[{key!r}], {call_args})\n"
    return head + _docstring(route, indent) + body


NOT_SHAPES: Final = frozenset({"AsyncGenerator", "Generator", "None", "bytes", "dict", "str"})


def _qualified(annotation: str) -> str:
    """Names of `types.py` in an annotation written `shapes.<name>`: a group class may have the
    same name as a shape (`Playlists`)."""
    return re.sub(
        r"[A-Za-z_]\w*",
        lambda m: m.group(0) if m.group(0) in NOT_SHAPES else f"shapes.{m.group(0)}",
        annotation,
    )


def render_methods(routes: list[Route]) -> str:
    groups: dict[str, list[Route]] = {}
    for route in routes:
        groups.setdefault(group_attr(route), []).append(route)
    out = [
        HEADER.format(
            doc="The SDK's typed methods, one per route, grouped as the API is\n"
            "(`Client.dnd5e.skill_check`, `AsyncClient.chat.send`, ...)."
        ),
        "from __future__ import annotations\n\n",
        "from collections.abc import AsyncGenerator, Generator, Mapping, Sequence\n\n",
        "from vttrelay.client._routes import BY_KEY\n",
        "from vttrelay.client.groups import AsyncCaller, SyncCaller\n",
        "from vttrelay.client import types as shapes\n",
    ]
    for asynchronous in (False, True):
        prefix = "Async" if asynchronous else ""
        caller = "AsyncCaller" if asynchronous else "SyncCaller"
        for attr, members in groups.items():
            names = [method_name(r) for r in members]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise SystemExit(f"group {attr}: two routes named {duplicates}; add NAMES")
            out.append(f"\n\nclass {prefix}{class_name(attr)}:\n")
            out.append(f'    """`{attr}`: the {members[0].group} endpoints."""\n\n')
            out.append(f"    def __init__(self, client: {caller}) -> None:\n")
            out.append("        self._client = client\n")
            for route in members:
                out.append("\n" + _method(route, asynchronous))
        mixin = f"{prefix}Groups" if asynchronous else "SyncGroups"
        out.append(f"\n\nclass {mixin}:\n")
        owner = "AsyncClient" if asynchronous else "Client"
        out.append(f'    """The endpoint groups of {owner}."""\n\n')
        for attr in groups:
            out.append(f"    {attr}: {prefix}{class_name(attr)}\n")
        out.append(f"\n    def _attach_groups(self, client: {caller}) -> None:\n")
        for attr in groups:
            out.append(f"        self.{attr} = {prefix}{class_name(attr)}(client)\n")
    return "".join(out)


def format_source(source: str) -> str:
    """The source as `ruff format` writes it, so the files read well and diffs stay small."""
    for command in (["check", "--fix-only", "--select", "I"], ["format", "--line-length", "100"]):
        source = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", "generated.py", "-"],
            input=source,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return source


def generated() -> dict[Path, str]:
    """The two files as they should be, from the current route table."""
    routes = sdk_routes()
    return {
        ROUTES_FILE: format_source(render_routes(routes)),
        METHODS_FILE: format_source(render_methods(routes)),
    }


def main() -> None:
    for path, text in generated().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.name}")
        else:
            print(f"{path.name} is up to date")


if __name__ == "__main__":
    main()
