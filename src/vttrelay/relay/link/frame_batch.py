"""Text frames to one world socket, written together once per event-loop iteration.

Every request forwarded to a world is one WebSocket text frame. Written one by one, each frame is
one `send` system call on the world's socket: on loopback the kernel then does the whole TCP
receive path in that call, and it was a tenth of the relay's time per forwarded request (py-spy,
bench/RESULTS.md "Issue 15"). Under load several requests reach the relay in one loop iteration
(one wake-up reads many client sockets), so `FrameBatch.send` queues the frame and the first
frame of an iteration schedules one `flush` at its end (`loop.call_soon`): the frames of that
iteration leave in one `writelines`, one system call, in the order they were queued (`WriteBatch`,
which the links between instances use too).
Measured on a quiet machine, with the parameter plan of `params.py` (bench/RESULTS.md "Issue 15:
the forwarded hop"): 0.090 / 0.091 -> 0.087 / 0.084 ms of relay CPU per forwarded request at 20
connections (`python -m bench --pin --scenario forwarded --conns 20`, A B A B); the send calls
on the world socket fell from 10.6 % of the relay's time to 3.3 % for the batched writes.

Server-to-client frames are not masked (RFC 6455 §5.1), and world sockets do not negotiate
compression (`compress=False`), so a frame is a 2-, 4- or 10-byte header and the payload as it
is. aiohttp's own writer still sends pings, pongs and the close frame on the same transport; a
frame still queued when the socket starts closing is dropped, as it would be had the close come
first. Flow control is the transport's: like aiohttp's writer, this writes whatever it is given
(the amount is bounded by the requests in flight, each of bounded size and with a deadline).
"""

from __future__ import annotations

import asyncio
import struct
from typing import Final

from aiohttp import web

_FIN_TEXT: Final = 0x81  # FIN bit and opcode 1 (text)
_LEN16: Final = struct.Struct("!BBH").pack
_LEN64: Final = struct.Struct("!BBQ").pack


def text_frame_header(length: int) -> bytes:
    """The header of an unmasked, final text frame with a payload of `length` bytes."""
    if length < 126:
        return bytes((_FIN_TEXT, length))
    if length < 65536:
        return _LEN16(_FIN_TEXT, 126, length)
    return _LEN64(_FIN_TEXT, 127, length)


class WriteBatch:
    """Byte strings for one transport, written together at the end of this loop iteration: the
    first `queue` of an iteration schedules one `flush`, which writes everything queued meanwhile
    in one `writelines`, in order. `writable` says whether the transport takes writes (here: it
    is there); each user says what closed means for it. Also the links between instances
    (`backends.redis.link.Link`)."""

    __slots__ = ("transport", "queued")

    def __init__(self, transport: asyncio.Transport | None) -> None:
        self.transport = transport
        self.queued: list[bytes] = []

    def writable(self) -> bool:
        return self.transport is not None

    def queue(self, *parts: bytes) -> None:
        """Queue bytes for this iteration's write (the caller checked `writable`)."""
        if not self.queued:
            asyncio.get_running_loop().call_soon(self.flush)
        self.queued.extend(parts)

    def flush(self) -> None:
        """Write every queued part in one call (dropped if the transport stopped taking writes)."""
        queued, self.queued = self.queued, []
        if self.writable():
            assert self.transport is not None
            self.transport.writelines(queued)


class SocketClosed(Exception):
    """The socket is closing or closed: the frame was not queued."""


class FrameBatch(WriteBatch):
    """The frames queued for one world socket in this loop iteration."""

    __slots__ = ("ws",)

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.Transport | None) -> None:
        super().__init__(transport)
        self.ws = ws

    def writable(self) -> bool:
        transport = self.transport
        return transport is not None and not transport.is_closing() and not self.ws.closed

    def send(self, payload: bytes) -> None:
        """Queue one text frame; raises SocketClosed if the socket is closing."""
        if not self.writable():
            raise SocketClosed()
        self.queue(text_frame_header(len(payload)), payload)
