"""The event subscriptions of one `/ws/api` socket (`ws_api.ClientSocket`): `subscribe` and
`unsubscribe` frames (one subscription per channel, through the request core as an SSE route's),
the socket's outbox that the hub fills and `write_events` drains, and how the socket ends when it
falls behind or its key stops working (a final error frame, then close 1013 or 1008).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import WSMsgType, web

from vttrelay import protocol
from vttrelay.relay import core
from vttrelay.relay.core import SUBSCRIBE_SCOPE, RelayError, error
from vttrelay.relay.events.mailbox import Mailbox
from vttrelay.relay.events.model import dumps
from vttrelay.relay.events.subscriber import FELL_BEHIND, Subscriber, error_frame
from vttrelay.relay.events.ws_frames import (
    CHANNEL_ROUTES,
    FELL_BEHIND_CLOSE,
    KEY_REFUSED,
    TOO_MANY_SUBSCRIPTIONS,
    subscription_params,
)
from vttrelay.relay.params import ParamError, extract
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.events.streams import Streams


class Socket(Protocol):
    """What the subscriptions need of their socket (`ws_api.ClientSocket`)."""

    streams: Streams
    ws: web.WebSocketResponse
    secret: str  # the socket's API key, looked up again per subscribe
    client_id: str  # the socket's world

    async def send(self, frame: dict[str, Any]) -> None: ...


class Subscriptions:
    """A socket's subscriptions (`subs`, one per channel) and `outbox`, the bounded mailbox they
    all share; `closing` is the close to send after the outbox's last frame."""

    def __init__(self, socket: Socket) -> None:
        self.socket = socket
        self.streams = socket.streams
        self.gate = socket.streams.gate  # the request core (core.py): keys, worlds, limits
        self.outbox = Mailbox(socket.streams.settings.subscriber_queue_size)
        self.subs: dict[str, Subscriber] = {}
        self.closing: tuple[int, bytes] | None = None

    def finish(self) -> None:
        """The socket ended: end its subscriptions."""
        for sub in list(self.subs.values()):
            self.streams.hub.finished(sub)
        self.subs.clear()

    async def subscribe(self, frame: dict[str, Any], request_id: str) -> None:
        channel = frame.get("channel")
        route = CHANNEL_ROUTES.get(channel) if isinstance(channel, str) else None
        if route is None:
            named = channel if isinstance(channel, str) else "" if channel is None else str(channel)
            await self.socket.send(
                {
                    "error": f'Invalid channel: "{named}". Supported: '
                    + ", ".join(protocol.CHANNELS),
                    "requestId": request_id,
                    "type": "error",
                }
            )
            return
        try:
            sub, last_seen = await self._subscription(route, frame)
        except RelayError as exc:
            await self.socket.send(
                {
                    "channel": channel,
                    "error": exc.message,
                    "requestId": request_id,
                    "status": exc.status,
                    "type": "error",
                }
            )
            return
        old = self.subs.pop(route.channel or "", None)
        if old is not None:
            self.streams.hub.finished(old)
        resume = await self.streams.hub.subscribe(sub, last_seen)
        if resume is None:
            await self.socket.send(
                {
                    "channel": channel,
                    "error": TOO_MANY_SUBSCRIPTIONS,
                    "requestId": request_id,
                    "status": 429,
                    "type": "error",
                }
            )
            return
        if sub.dropped:  # the socket was cut off or its key refused while it joined
            return
        self.subs[sub.channel] = sub
        # `subscribed`, the gap and the replay go through the outbox now, before any await, so
        # that nothing new can overtake them.
        self._deliver(
            dumps(
                {
                    "channel": channel,
                    "lastEventId": resume.cursor,
                    "requestId": request_id,
                    "type": "subscribed",
                }
            )
        )
        if resume.gap is not None:
            self._deliver(dumps({"type": "gap", "channel": channel, **resume.gap.as_json()}))
        for logged in resume.replay:
            self._deliver(logged.ws)

    async def _subscription(
        self, route: Route, frame: dict[str, Any]
    ) -> tuple[Subscriber, int | None]:
        """A subscriber for a subscribe frame and where it resumes, through the core (the
        socket's world may be away for now: its subscriptions wait for it); raises RelayError."""
        key = await core.admitted(self.gate.admit(self.socket.secret, SUBSCRIBE_SCOPE, None))
        try:
            params = extract(route, {}, subscription_params(frame, self.socket.client_id), {})
        except ParamError as exc:
            raise error(exc.status, exc.message) from None
        world = self.gate.worlds.get(self.socket.client_id)
        users = world.users if world is not None else []
        event_filter = core.build_filter(
            route.channel or "", params, key.forced_user(self.socket.client_id), users
        )
        last = frame.get("lastEventId")
        valid = isinstance(last, int) and not isinstance(last, bool) and last >= 0
        sub = Subscriber(
            self.socket.client_id,
            route.channel or "",
            event_filter,
            "ws",
            self.outbox,
            key.id,
            on_overflow=self._overflow,
            secret=self.socket.secret,
            on_refused=self._refused,
        )
        return sub, last if valid else None

    async def unsubscribe(self, frame: dict[str, Any], request_id: str) -> None:
        """Drop this socket's subscription to `channel`, or all of them without one."""
        channel = frame.get("channel")
        if channel:
            sub = self.subs.pop(channel, None) if isinstance(channel, str) else None
            dropped = [sub] if sub is not None else []
        else:
            dropped, channel = list(self.subs.values()), "all"
            self.subs.clear()
        for sub in dropped:
            self.streams.hub.finished(sub)
        await self.socket.send(
            {
                "channel": channel,
                "removed": len(dropped),
                "requestId": request_id,
                "type": "unsubscribed",
            }
        )

    def _deliver(self, data: bytes) -> None:
        if not self.outbox.put(data):
            self._overflow(None)

    def _overflow(self, _sub: Subscriber | None) -> None:
        """This socket fell behind: drop all its subscriptions, send the error, close it."""
        for sub in list(self.subs.values()):
            self.streams.hub.unsubscribe(sub, "fell-behind")
        self.subs.clear()
        self.closing = (FELL_BEHIND_CLOSE, b"Fell behind")
        self.outbox.close(error_frame("ws", FELL_BEHIND))

    def _refused(self, reason: str) -> None:
        """This socket's key stopped working: drop its subscriptions, send why, close it."""
        for sub in list(self.subs.values()):
            self.streams.hub.unsubscribe(sub, "refused")
        self.subs.clear()
        self.closing = (KEY_REFUSED, reason.encode()[:120])
        self.outbox.close(error_frame("ws", reason))

    async def write_events(self) -> None:
        """Send what the subscriptions queue; close the socket when the outbox is closed."""
        try:
            while True:
                batch = await self.outbox.next_batch(None)
                if not batch:
                    break
                for data in batch:
                    await self.socket.ws.send_frame(data, WSMsgType.TEXT)
        except (ConnectionError, RuntimeError):
            return
        if self.closing is not None:
            with contextlib.suppress(Exception):
                await self.socket.ws.close(code=self.closing[0], message=self.closing[1])
