"""A byte budget for a WebSocket until it has authenticated (`/relay` and `/ws/api`).

aiohttp fixes a socket's largest frame when the socket opens, and each side needs a large one once
authenticated (a world's reply can be many MiB). Before authentication only the auth frame (about
a hundred bytes) and a few pings are expected, yet a peer could send a frame of up to that limit
and the relay would buffer all of it. `PreAuthBudget` sits between the connection and aiohttp
while the socket is unauthenticated: it counts the bytes that arrive, and when they pass `limit`
it stops passing them on (what follows is dropped), sends the close frame 1009 `Message too big`
and ends the connection, so memory stays bounded. `release()` (authenticated) takes it out of
the way: it costs nothing afterwards.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

from aiohttp import web

log = logging.getLogger("vttrelay.relay")

TOO_BIG_CODE = 1009
TOO_BIG_REASON = "Message too big"
CLOSE_GRACE = 2.0  # seconds the peer has to answer the close frame before the connection drops
# RFC 6455 §5.5.1: a close frame from a server (FIN + opcode 8, unmasked, payload < 126 bytes)
_CLOSE_FRAME = (
    bytes([0x88, 2 + len(TOO_BIG_REASON)])
    + struct.pack("!H", TOO_BIG_CODE)
    + TOO_BIG_REASON.encode()
)


class PreAuthBudget(asyncio.Protocol):
    """Counts an unauthenticated socket's incoming bytes; see the module docstring."""

    def __init__(self, transport: Any, inner: asyncio.BaseProtocol, limit: int, label: str) -> None:
        self.transport = transport
        self.inner: Any = inner
        self.limit = limit
        self.label = label
        self.received = 0
        self.exceeded = False

    @classmethod
    def install(cls, request: web.Request, limit: int, label: str) -> PreAuthBudget | None:
        """Put a budget of `limit` bytes in front of the (already prepared) WebSocket of
        `request`; None when the connection has no transport to watch (already closed)."""
        transport: Any = request.transport  # uvloop's transports are no asyncio.Transport
        if transport is None or transport.is_closing() or not hasattr(transport, "set_protocol"):
            return None
        budget = cls(transport, transport.get_protocol(), limit, label)
        transport.set_protocol(budget)
        return budget

    def release(self) -> None:
        """The socket authenticated: the connection talks to aiohttp directly again."""
        if not self.exceeded and self.transport.get_protocol() is self:
            self.transport.set_protocol(self.inner)

    # asyncio.Protocol: everything but data_received goes to aiohttp's protocol as it is

    def data_received(self, data: bytes) -> None:
        if self.exceeded:
            return
        self.received += len(data)
        if self.received <= self.limit:
            self.inner.data_received(data)
            return
        self.exceeded = True
        log.info(
            "%s from %s: more than %d bytes before authentication, closed with %d",
            self.label,
            _peer(self.transport),
            self.limit,
            TOO_BIG_CODE,
        )
        # The close frame, then the peer's reply is awaited (what it sends meanwhile is dropped)
        # for CLOSE_GRACE seconds: closing at once, with its data unread, would reset the
        # connection and the peer might never see why.
        self.transport.write(_CLOSE_FRAME)
        asyncio.get_running_loop().call_later(CLOSE_GRACE, self.transport.abort)

    def eof_received(self) -> bool | None:
        result: bool | None = self.inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


def _peer(transport: Any) -> str:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return "?"
