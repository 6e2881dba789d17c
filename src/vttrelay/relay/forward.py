"""Forward routes: a REST call becomes one flat frame to a world, its reply becomes the body.

`forward(request, route, state)` reads top to bottom: authenticate -> parameters -> target world
-> system check -> frame (wire-protocol §4.5, no invented `data`) -> await the reply -> the
reply's bytes as the body, 400 iff it carries a top-level string `error`, else 200.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web

from vttrelay.relay.auth import authenticate, check_system, error, resolve_world
from vttrelay.relay.params import ParamError, extract, parse_body
from vttrelay.relay.routes import Route
from vttrelay.relay.store import KeyRecord
from vttrelay.relay.worlds import Reply, WorldConnection, WorldGone

if TYPE_CHECKING:
    from vttrelay.relay.app import RelayState

TIMED_OUT = "Request timed out"
WORLD_GONE = "World disconnected before replying"

_counter = itertools.count(1)
_process = secrets.token_hex(4)  # random per process (and per forked child): made once


def _new_process_id() -> None:
    global _process
    _process = secrets.token_hex(4)


os.register_at_fork(after_in_child=_new_process_id)


def new_request_id(action: str) -> str:
    """`<action>_<counter>_<process>`: unique within a process by the counter, across processes
    and restarts by a random part made once per process (no random bytes per request)."""
    return f"{action}_{next(_counter)}_{_process}"


def build_frame(route: Route, params: Mapping[str, Any], key: KeyRecord) -> dict[str, Any]:
    """The frame a world receives: type, requestId, declared params, _scopes, forced userId."""
    assert route.action is not None
    frame: dict[str, Any] = {"type": route.action, "requestId": new_request_id(route.action)}
    for name, value in params.items():
        if name not in ("clientId", "type"):
            frame[name] = value
    frame["_scopes"] = list(key.scopes)
    if key.user_id:
        frame["userId"] = key.user_id
    return frame


def reply_response(reply: Reply) -> web.Response:
    """The world's frame, byte for byte, as the HTTP body."""
    return web.Response(
        body=reply.raw, status=400 if reply.is_error else 200, content_type="application/json"
    )


async def send_request(world: WorldConnection, frame: dict[str, Any], timeout: float) -> Reply:
    """Send a frame and await its reply; raises ApiError 408 or 503."""
    try:
        return await world.request(frame, timeout)
    except TimeoutError:
        raise error(408, TIMED_OUT) from None
    except WorldGone:
        raise error(503, WORLD_GONE) from None


async def read_params(request: web.Request, route: Route) -> dict[str, Any]:
    """The route's parameters from this request, or ApiError 400."""
    body = parse_body(request.method, await request.read()) if request.method != "GET" else {}
    try:
        return extract(route, request.query, body, request.match_info)
    except ParamError as exc:
        raise error(400, exc.message) from None


async def forward(request: web.Request, route: Route, state: RelayState) -> web.Response:
    """Handle one forward route."""
    key = authenticate(request, route, state)
    params = await read_params(request, route)
    world = resolve_world(key, params.get("clientId"), state.registry)
    check_system(route, world)
    frame = build_frame(route, params, key)
    timeout = state.config.timeout_override or route.timeout
    return reply_response(await send_request(world, frame, timeout))
