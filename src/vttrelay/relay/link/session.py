"""One authenticated world's side of `/relay`, without I/O: frames in, frames and events out.

`WorldSession.receive(raw)` takes each text frame the world sends (wire-protocol §3) and says
what it means:

- a reply (any frame whose `requestId` is pending) resolves its request (`pending.py`) and
  returns None; a long plain reply is matched without parsing (`pending.peek_reply`);
- `ping` returns `PONG`, the frame to send back;
- `player-list` stores the world's users and returns `PlayersChanged`;
- `get-known-clients` returns `KnownClientsAsked`, `remote-request` `RemoteAsked` and
  `module-notify` `ModuleNotified` (the gateway has the account services answer or log them);
- an event frame (`protocol.EVENT_FRAME_CHANNEL`) returns `EventReceived` for the hub;
- anything else (not JSON, not an object, an unknown type) is dropped: None.

Every frame that parses, and every reply, stamps the world's `lastSeen`. `Keepalive` decides
when to ping the world and when to give up on it, from the times it is given. The aiohttp
adapter (`gateway.py`) reads the socket, feeds the session and does what comes back; the socket
itself is `connection.WorldConnection`'s, a session bound to one.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

import orjson

from vttrelay import protocol
from vttrelay.relay.link.pending import FAST_PATH_MIN_BYTES, Pending, Reply, fail_all, peek_reply
from vttrelay.relay.store import TokenRecord

log = logging.getLogger("vttrelay.relay")

PONG: Final = orjson.dumps(protocol.PongFrame(type=protocol.PONG))


def now_ms() -> int:
    """Wall-clock milliseconds, as `lastSeen` and `connectedSince` show them."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class PlayersChanged:
    """The world sent its user list (now in `session.users`)."""


@dataclass(frozen=True, slots=True)
class EventReceived:
    """The world sent an event of a channel the relay switched on."""

    frame: protocol.EventFrame


@dataclass(frozen=True, slots=True)
class KnownClientsAsked:
    """The world asked for its account's worlds (`get-known-clients`); answer with this id."""

    request_id: str


@dataclass(frozen=True, slots=True)
class RemoteAsked:
    """The world sent a `remote-request` for another world of its account (the tunnel)."""

    frame: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModuleNotified:
    """The world reported an event with `module-notify` (logged for its owner)."""

    frame: dict[str, Any]


PLAYERS_CHANGED: Final = PlayersChanged()
MAX_REQUEST_ID: Final = 256

Received = (
    bytes | PlayersChanged | EventReceived | KnownClientsAsked | RemoteAsked | ModuleNotified | None
)
"""What a frame means: a frame to send back, an event for the relay, or nothing more to do."""


class WorldSession:
    """The protocol state of one authenticated world: its identity and metadata, its users, its
    pending requests and its request count per minute (the dashboard's)."""

    def __init__(
        self, client_id: str, account: str, metadata: dict[str, Any], token: TokenRecord
    ) -> None:
        self.client_id = client_id
        self.account = account
        self.metadata = metadata
        self.token_id = token.id
        self.token_name = token.name
        self.system_id: str = str(metadata.get("systemId") or "")
        self.users: list[dict[str, Any]] = []  # as the world sent them (`protocol.WorldUser`)
        self.pending: Pending = {}
        self.closed = False
        # connected to a relay before (this process or an earlier one): it may still be sending
        # channels a relay switched on before a restart (streams tell it every count, 0 included)
        self.returning = False
        self.instance_id: str | None = None  # the holding instance: None, this one
        # requests forwarded, counted per wall-clock minute (the dashboard's requests/minute)
        self._minute = 0
        self._this_minute = 0
        self._last_minute = 0
        self.last_request: float | None = None  # when a request was last forwarded (epoch s)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.client_id} account={self.account}>"

    # Frames in ----------------------------------------------------------------------------------

    def receive(self, raw: bytes) -> Received:
        """One text frame from the world (see the module docstring)."""
        if self.resolve_unparsed(raw):
            self.touch()
            return None
        try:
            frame = orjson.loads(raw)
        except orjson.JSONDecodeError:
            log.debug("world %s sent a frame that is not JSON: dropped", self.client_id)
            return None
        if not isinstance(frame, dict):
            return None
        self.touch()
        request_id = frame.get("requestId")
        if isinstance(request_id, str) and self.resolve(request_id, raw, frame):
            return None
        kind = frame.get("type")
        if kind == protocol.PING:
            return PONG
        if kind == protocol.PLAYER_LIST:
            users = frame.get("users")
            self.users = users if isinstance(users, list) else []
            return PLAYERS_CHANGED
        if kind == protocol.GET_KNOWN_CLIENTS:
            asked = request_id if isinstance(request_id, str) else ""
            return KnownClientsAsked(asked[:MAX_REQUEST_ID])
        if kind == protocol.REMOTE_REQUEST:
            return RemoteAsked(frame)
        if kind == protocol.MODULE_NOTIFY:
            return ModuleNotified(frame)
        if kind in protocol.EVENT_FRAME_CHANNEL:
            event: protocol.EventFrame = frame  # type: ignore[assignment]  # `events.model` checks
            return EventReceived(event)
        log.debug("world %s sent an unhandled frame %r: dropped", self.client_id, kind)
        return None

    def touch(self) -> None:
        """The world was heard from now (`lastSeen`)."""
        self.metadata["lastSeen"] = now_ms()

    # Pending requests ---------------------------------------------------------------------------

    def resolve(self, request_id: str, raw: bytes, frame: dict[str, Any]) -> bool:
        """Answer the request `request_id` with this parsed frame; False: none is pending."""
        future = self.pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(Reply(raw, frame))
        return True

    def resolve_unparsed(self, raw: bytes) -> bool:
        """Resolve a pending request from a reply's bytes alone (`peek_reply`'s fast path);
        False when the frame must be parsed (not the usual head, maybe an error, not pending,
        or small: below FAST_PATH_MIN_BYTES orjson parses faster than the checks run)."""
        if len(raw) < FAST_PATH_MIN_BYTES:
            return False
        head = peek_reply(raw)
        if head is None or head[1]:
            return False
        future = self.pending.get(head[0])
        if future is None or future.done():
            return False
        future.set_result(Reply(raw, None, False))
        return True

    def fail_pending(self) -> None:
        """The world is gone: its pending requests fail at once (`WorldGone`)."""
        fail_all(self.pending)

    # Requests per minute ------------------------------------------------------------------------

    def _count_request(self, now: float) -> None:
        self.last_request = now
        minute = int(now // 60)
        if minute != self._minute:
            self._last_minute = self._this_minute if minute == self._minute + 1 else 0
            self._this_minute = 0
            self._minute = minute
        self._this_minute += 1

    def requests_per_minute(self, now: float | None = None) -> int:
        """Requests forwarded over the last 60 seconds, estimated from the counts of this
        wall-clock minute and the one before (weighted by how much of it the window covers)."""
        now = time.time() if now is None else now
        minute = int(now // 60)
        if minute == self._minute:
            current, previous = self._this_minute, self._last_minute
        elif minute == self._minute + 1:
            current, previous = 0, self._this_minute
        else:
            return 0
        return round(current + previous * (1 - (now % 60) / 60))


class Beat(Enum):
    """What the keepalive says to do now."""

    WAIT = "wait"  # nothing until `Keepalive.wake_at`
    PING = "ping"  # send a WebSocket ping, then wait
    DROP = "drop"  # no pong for too long: close the socket (1001, `Keepalive timeout`)


class Keepalive:
    """When to ping a world (every `interval` seconds) and when to drop it (`limit` seconds after
    its last pong), from the monotonic times it is given: no clock or timer of its own."""

    __slots__ = ("interval", "limit", "last_pong", "next_ping", "wake_at")

    def __init__(self, interval: float, limit: float, now: float) -> None:
        self.interval = interval
        self.limit = limit
        self.last_pong = now
        self.next_ping = now + interval
        self.wake_at = self.next_ping  # when `step` has something to do next

    def pong(self, now: float) -> None:
        self.last_pong = now

    def step(self, now: float) -> Beat:
        """What to do at `now`; `wake_at` is then when to ask again."""
        deadline = self.last_pong + self.limit
        if now >= deadline:
            return Beat.DROP
        beat = Beat.WAIT
        if now >= self.next_ping:
            self.next_ping = now + self.interval
            beat = Beat.PING
        self.wake_at = min(self.next_ping, deadline)
        return beat
