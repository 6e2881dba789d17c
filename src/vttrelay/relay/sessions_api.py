"""The session routes (files-sheet-sessions §4): `POST /session-handshake`, `POST
/start-session`, `DELETE /end-session`, `GET /session`, and the stored embedded worlds
(`GET`/`POST /session/worlds`). The handshake reads the reference's headers, else the same
values from a JSON body (`foundryUrl`, `username`, `worldName`: the SDK's way). The work is a
`SessionService`'s (the `sessions` package's manager, given to `create_app` by the composition
root); these handlers authenticate (scope `session:manage`), read the request, and write its
answers with sorted keys as the reference's encoder does. A caller sees and ends only its own
account's sessions (the reference lists everyone's). Without a service (sessions turned off)
the routes answer as the reference does with `ALLOW_HEADLESS=false` (§4.2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from aiohttp import web

from vttrelay import protocol
from vttrelay.relay import core
from vttrelay.relay.accounts.bodies import map_body
from vttrelay.relay.backends.ports import WorldDirectory
from vttrelay.relay.core import error
from vttrelay.relay.forward import admit_request, sorted_json_response
from vttrelay.relay.routes import Route

Answer = tuple[int, dict[str, Any]]
LastRequest = Callable[[str], float | None]
DISABLED: Final = {
    "docsUrl": "https://foundryrestapi.com/docs/installation",
    "error": "Headless sessions are not available on this relay",
    "message": "The operator has disabled headless sessions. To use headless sessions, "
    "self-host your own relay instance.",
}
# What the module's connection query told about a world, shown with its session.
WORLD_FIELDS: Final = tuple(k for k in protocol.WORLD_QUERY_KEYS if k not in ("id", "customName"))


class SessionService(Protocol):
    """What the session routes need (`sessions.manager.SessionManager`)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def handshake(
        self, account: str, url: str, username: str, world: str, instance_id: str
    ) -> Answer: ...

    async def start(self, account: str, body: Mapping[str, Any]) -> Answer: ...

    def listing(self, account: str, last_request: LastRequest) -> list[dict[str, Any]]: ...

    async def end(self, account: str, session_id: str) -> Answer: ...

    async def sweep(self, last_request: LastRequest) -> None: ...

    async def create_world(self, account: str, name: Any) -> Answer: ...

    def worlds(self, account: str) -> list[dict[str, Any]]: ...


def last_request(registry: WorldDirectory) -> LastRequest:
    """When the relay last forwarded a request to a world (seconds since the epoch), if live."""

    def seen(client_id: str) -> float | None:
        world = registry.get(client_id)
        value = getattr(world, "last_request", None) if world is not None else None
        return value if isinstance(value, float) else None

    return seen


@dataclass(frozen=True, slots=True)
class SessionDeps:
    """What the session routes use: the request core, the session manager (None: sessions are
    turned off), the live worlds (when each last got a request) and this instance's id."""

    gate: core.Gate
    sessions: SessionService | None
    registry: WorldDirectory
    instance_id: str


def _answer(answer: Answer) -> web.Response:
    status, body = answer
    return sorted_json_response(body, status)


async def h_handshake(request: web.Request, route: Route, deps: SessionDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    if deps.sessions is None:
        return sorted_json_response(DISABLED, 503)
    headers = request.headers
    body = await map_body(request, route)

    def given(header: str, field: str, limit: int) -> str:
        value = headers.get(header) or body.get(field)
        return value[:limit] if isinstance(value, str) else ""

    return _answer(
        await deps.sessions.handshake(
            key.account,
            given("x-foundry-url", "foundryUrl", 2048),
            given("x-username", "username", 256),
            given("x-world-name", "worldName", 256),
            deps.instance_id,
        )
    )


async def h_start(request: web.Request, route: Route, deps: SessionDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    body = await map_body(request, route)
    if deps.sessions is None:  # no handshake can exist: the reference's first refusals
        if not body.get("handshakeToken") or not body.get("encryptedPassword"):
            raise error(400, "handshakeToken and encryptedPassword are required")
        raise error(400, "Invalid or expired handshake token")
    return _answer(await deps.sessions.start(key.account, body))


async def h_end(request: web.Request, route: Route, deps: SessionDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    session_id = request.query.get("sessionId") or ""
    if not session_id:
        body = await map_body(request, route)
        found = body.get("sessionId")
        session_id = found if isinstance(found, str) else ""
    if not session_id:
        raise error(400, "sessionId is required")
    if deps.sessions is None:
        return sorted_json_response({"status": "ok"})
    return _answer(await deps.sessions.end(key.account, session_id[:128]))


async def h_list(request: web.Request, route: Route, deps: SessionDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    if deps.sessions is None:
        return sorted_json_response({"activeSessions": []})
    sessions = deps.sessions.listing(key.account, last_request(deps.registry))
    for entry in sessions:
        world = deps.registry.get(entry["clientId"])
        if world is not None:
            entry.update({k: world.metadata[k] for k in WORLD_FIELDS if world.metadata.get(k)})
    return sorted_json_response({"activeSessions": sessions})


async def h_worlds(request: web.Request, route: Route, deps: SessionDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    if deps.sessions is None:
        return sorted_json_response(DISABLED, 503)
    if request.method == "POST":
        body = await map_body(request, route)
        return _answer(await deps.sessions.create_world(key.account, body.get("name")))
    return sorted_json_response({"worlds": deps.sessions.worlds(key.account)})


HANDLERS: Final = {
    "session_handshake": h_handshake,
    "start_session": h_start,
    "end_session": h_end,
    "sessions": h_list,
    "session_worlds": h_worlds,
}
