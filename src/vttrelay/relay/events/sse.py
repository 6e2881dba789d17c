"""The SSE adapter of the event hub: the six `*/subscribe` routes (wire-protocol §5.2).

A stream is admitted by the request core like any keyed call (key, scope, world, the filter's
user rules), subscribed to the hub, and starts with `connected`, a `gap` if events it asked for
are gone, and the replay after its `Last-Event-ID`. Then events and `: keepalive` comments are
written straight to its socket when nothing is queued before them, else from its mailbox.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay import protocol
from vttrelay.relay import core
from vttrelay.relay.events.mailbox import Mailbox
from vttrelay.relay.events.model import Resume, dumps, parse_last_event_id, sse_frame
from vttrelay.relay.events.subscriber import EVERYTHING, Subscriber, error_frame
from vttrelay.relay.forward import API_KEY_HEADER, CORS_HEADERS, admit_request, read_params
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.events.streams import Streams

log = logging.getLogger("vttrelay.relay.streams")  # the name it had before the move

TOO_MANY: Final = "Too many SSE connections"

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
    **CORS_HEADERS,
}


def connected_data(route_channel: str, client_id: str, params: dict[str, Any]) -> dict[str, Any]:
    """The `connected` event's data (the actor stream also names its filter)."""
    if route_channel == protocol.ACTOR_CHANNEL:  # keys in the reference relay's (sorted) order
        return {"actorUuid": params.get("actorUuid") or "", "clientId": client_id}
    return {"clientId": client_id}


def resume_frames(resume: Resume, connected: dict[str, Any]) -> bytes:
    """What a new SSE stream starts with: `connected`, a `gap` if any, the replayed events.

    `connected` and `gap` carry the position the stream resumes from as their id, so a client
    that reconnects before any event still tells the relay where it was.
    """
    parts = [sse_frame("connected", dumps(connected), resume.cursor)]
    if resume.gap is not None:
        parts.append(sse_frame("gap", dumps(resume.gap.as_json()), resume.cursor))
    parts.extend(e.sse for e in resume.replay)
    return b"".join(parts)


async def serve_sse(streams: Streams, request: web.Request, route: Route) -> web.StreamResponse:
    """Serve one `*/subscribe` route (wire-protocol §5.2 with DESIGN §6 items 1 and 5)."""
    gate = streams.gate
    key = await core.admitted(admit_request(request, route, gate))
    params = await read_params(request, route)
    world = await gate.target_world(key, params.get("clientId"))  # an offline one started
    channel = route.channel or ""
    event_filter = core.build_filter(channel, params, key.forced_user(world.client_id), world.users)
    if event_filter == EVERYTHING:
        event_filter = EVERYTHING  # one shared instance for every unfiltered stream
    last_seen = parse_last_event_id(request.headers.get("Last-Event-ID"))

    response = web.StreamResponse(status=200, headers=SSE_HEADERS)
    sub = Subscriber(
        world.client_id,
        channel,
        event_filter,
        "sse",
        Mailbox(streams.settings.subscriber_queue_size),
        key.id,
        secret=request.headers.get(API_KEY_HEADER, ""),
        transport=request.transport,
    )
    resume = await streams.hub.subscribe(sub, last_seen)
    subscribed = resume is not None
    try:
        await response.prepare(request)
        if resume is None:
            await response.write(error_frame("sse", TOO_MANY))
            return response
        if gate.worlds.get(world.client_id) is not world:
            return response  # the world left while we were setting up
        first = resume_frames(resume, connected_data(channel, world.client_id, params))
        del resume, params  # not kept for the stream's lifetime (a replay can be long)
        await response.write(first)
        del first
        # From here on, fan-out and keep-alive comments write straight to the socket when
        # they can (one shared, pre-encoded chunk for every subscriber), without waking
        # this task; it writes only what had to be queued. Only for what aiohttp itself
        # would write unchanged: no compression; chunked or not as the response was prepared
        sub.chunked = response.headers.get("Transfer-Encoding", "").lower() == "chunked"
        sub.direct = not response.compression
        streams.hub.keepalives.add(sub)
        mailbox = sub.mailbox
        while True:
            # the mailbox's future, not `next_batch`: a coroutine object less per open
            # stream (~0.25 KiB; 10,000 idle streams: -2.4 MiB RSS, bench/RESULTS.md)
            if (arrival := mailbox.arrival()) is not None:
                await arrival
            if not (batch := mailbox.take()):
                break
            await response.write(b"".join(batch))
    except (ConnectionError, RuntimeError) as exc:  # the client went away
        log.debug("SSE client of %s/%s went away: %r", world.client_id, channel, exc)
    finally:
        if subscribed:
            streams.hub.finished(sub)
    return response
