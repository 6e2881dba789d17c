"""The API as a signed-in session calls it (`calls.py`): no key to paste.

- `ANY /dashboard/api/{path}`: the route of the route table at `/{path}` (forward routes and
  `/scene/image`), run through the request core as the session's account's own key and recorded
  in the activity log like any API call. The world page, Live events and "Try it" call it.
- `GET /dashboard/streams/{client_id}?channel=...`: one Server-Sent Events stream carrying the
  events of the named channels of a world (at most one subscription per channel), each admitted
  and counted like any subscriber (the key's rate budget, its stream slots per world and
  channel), each event with its readable line (`feed.describe`) beside its raw data.

Every call needs the session (401 JSON otherwise) and comes from the dashboard's own pages
(`same_origin`); a change (any method but GET) also carries the session's CSRF token in the
`X-CSRF-Token` header. A viewer reaches only its own account's worlds; the operator acts as the
account of the world it names.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Final

import orjson
from aiohttp import web

from vttrelay import protocol
from vttrelay.dashboard.calls import RouteFinder, SessionCalls, session_key
from vttrelay.dashboard.feed import describe
from vttrelay.dashboard.sessions import Viewer, session_viewer
from vttrelay.dashboard.views import COOKIE, Dashboard, same_origin
from vttrelay.relay import core
from vttrelay.relay.core import SUBSCRIBE_SCOPE, RelayError, error
from vttrelay.relay.events.mailbox import Mailbox
from vttrelay.relay.events.subscriber import Subscriber
from vttrelay.relay.forward import error_response
from vttrelay.relay.params import ParamError, extract
from vttrelay.relay.routes import ROUTES, STREAM_ROUTES

log = logging.getLogger("vttrelay.dashboard")

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}
STREAM_ROUTE = {r.channel: r for r in STREAM_ROUTES}
NOT_SIGNED_IN: Final = "You are not signed in (or your session has ended)."
OTHER_SITE: Final = "This call did not come from the dashboard's own pages."


def parse_sse(frame: bytes) -> tuple[str, int | None, bytes]:
    """An SSE frame of the hub (`id:`, `event:`, `data:` lines) as (name, id, data)."""
    name, event_id, data = "message", None, b""
    for line in frame.split(b"\n"):
        field, _, value = line.partition(b": ")
        if field == b"event":
            name = value.decode()
        elif field == b"id" and value.isdigit():
            event_id = int(value)
        elif field == b"data":
            data = value
    return name, event_id, data


def feed_frame(channel: str, name: str, event_id: int | None, data: bytes) -> bytes:
    """One event for the dashboard: its channel, name, id, readable line and raw data."""
    try:
        decoded: Any = orjson.loads(data) if data else None
    except orjson.JSONDecodeError:
        decoded = None
    head = orjson.dumps(
        {
            "channel": channel,
            "event": name,
            "id": event_id,
            "line": describe(name, decoded).as_json(),
        }
    )
    return b"data: " + head[:-1] + b',"data":' + (data or b"null") + b"}\n\n"


@dataclass
class SessionApi:
    """The session's API calls and streams, bound to one dashboard."""

    dash: Dashboard

    def __post_init__(self) -> None:
        state = self.dash.state
        self.finder = RouteFinder(ROUTES)
        self.calls = SessionCalls(state.gate, state.registry, state.activity)

    async def viewer(self, request: web.Request, change: bool) -> Viewer:
        """The session's viewer after the checks of a call (RelayError 401/403)."""
        if not same_origin(request):
            raise error(403, OTHER_SITE)
        viewer = await self.dash.viewer(request)
        if viewer is None:
            raise error(401, NOT_SIGNED_IN)
        if change and not viewer.csrf_ok(request.headers.get("X-CSRF-Token")):
            raise error(403, "CSRF check failed: reload the page")
        return viewer

    async def call(self, request: web.Request) -> web.StreamResponse:
        try:
            viewer = await self.viewer(request, change=request.method != "GET")
            path = "/" + request.match_info["path"]
            found = self.finder.find(request.method, path)
            if found is None:
                raise error(404, f"No route {request.method} {path} for a dashboard session")
            route, path_params = found
            return await self.calls.call(request, viewer.account, route, path_params, read=True)
        except RelayError as exc:
            return error_response(exc)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """A world's chosen channels as one SSE stream (the module docstring)."""
        try:
            viewer = await self.viewer(request, change=False)
            client_id = request.match_info["client_id"]
            account = self.calls.account_of(viewer.account, client_id)
            channels = list(dict.fromkeys(request.query.getall("channel", [])))
            if not channels or any(c not in STREAM_ROUTE for c in channels):
                raise error(400, "channel: one or more of " + ", ".join(protocol.CHANNELS))
            return await self._serve(request, account, client_id, channels)
        except RelayError as exc:
            return error_response(exc)

    async def _serve(
        self, request: web.Request, account: str, client_id: str, channels: list[str]
    ) -> web.StreamResponse:
        gate, hub = self.dash.state.gate, self.dash.state.streams.hub
        key = session_key(account)
        mailbox = Mailbox(self.dash.state.streams.settings.subscriber_queue_size)
        subs: list[Subscriber] = []
        response = web.StreamResponse(status=200, headers=SSE_HEADERS)
        started, status = time.perf_counter(), 500
        try:
            for channel in channels:
                route = STREAM_ROUTE[channel]
                key = await core.admitted(gate.admit_key(key, SUBSCRIBE_SCOPE, client_id))
                try:
                    params = extract(route, request.query, {}, {})
                except ParamError as exc:
                    raise error(exc.status, exc.message) from None
                world = await gate.target_world(key, client_id)
                wanted = core.build_filter(channel, params, None, world.users)
                sub = Subscriber(
                    client_id, channel, wanted, "sse", mailbox, key.id, transport=request.transport
                )
                if await hub.subscribe(sub) is None:
                    raise error(429, "Too many streams of this account on this world's " + channel)
                subs.append(sub)
            await response.prepare(request)
            hello = {"clientId": client_id, "channels": channels}
            await response.write(b"event: connected\ndata: " + orjson.dumps(hello) + b"\n\n")
            status = 200
            await self._pump(request, response, mailbox)
            return response
        except RelayError as exc:
            status = exc.status
            raise
        except (ConnectionError, RuntimeError) as exc:  # the browser went away
            log.debug("dashboard stream of %s ended: %r", client_id, exc)
            return response if response.prepared else web.Response(status=204)
        finally:
            for sub in subs:
                hub.finished(sub)
            for channel in channels:  # recorded as an SSE route is, when it ends
                self.calls.record(
                    request, account, client_id, STREAM_ROUTE[channel], status, started
                )

    async def _pump(
        self,
        request: web.Request,
        response: web.StreamResponse,
        mailbox: Mailbox,
    ) -> None:
        """Write the mailbox's events as feed frames until it ends, the session ends (checked at
        each keep-alive) or the browser leaves."""
        every = self.dash.state.streams.settings.keepalive_interval
        store = self.dash.state.store
        cookie = request.cookies.get(COOKIE)
        while True:
            batch = await mailbox.next_batch(every)
            if batch is None:
                if await asyncio.to_thread(session_viewer, store, cookie) is None:
                    await response.write(b'event: error\ndata: {"error":"signed out"}\n\n')
                    return
                await response.write(b": keepalive\n\n")
                continue
            if not batch:
                return
            out = []
            for frame in batch:
                name, event_id, data = parse_sse(frame)
                if name == "error":
                    out.append(frame)
                    continue
                out.append(feed_frame(_channel_of(name), name, event_id, data))
            await response.write(b"".join(out))


def _channel_of(name: str) -> str:
    """The channel of an event by its name (`chat-create` -> chat-events)."""
    for prefix, channel in (
        ("chat-", protocol.CHAT_CHANNEL),
        ("combat-", protocol.COMBAT_CHANNEL),
        ("actor-", protocol.ACTOR_CHANNEL),
        ("scene-", protocol.SCENE_CHANNEL),
    ):
        if name.startswith(prefix):
            return channel
    return protocol.ROLL_CHANNEL if name == "roll" else protocol.HOOK_CHANNEL


def setup(app: web.Application, dash: Dashboard) -> SessionApi:
    api = SessionApi(dash)
    r = app.router
    r.add_route("*", "/dashboard/api/{path:.*}", api.call)
    r.add_get("/dashboard/streams/{client_id}", api.stream)
    return api
