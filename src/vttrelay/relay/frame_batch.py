"""Text frames to one world socket, written together once per event-loop iteration.

Every request forwarded to a world is one WebSocket text frame. Written one by one, each frame is
one `send` system call on the world's socket: on loopback the kernel then does the whole TCP
receive path in that call, and it was a tenth of the relay's time per forwarded request (py-spy,
bench/RESULTS.md "Issue 15"). Under load several requests reach the relay in one loop iteration
(one wake-up reads many client sockets), so `FrameBatch.send` queues the frame and the first
frame of an iteration schedules one `flush` at its end (`loop.call_soon`): the frames of that
iteration leave in one `writelines`, one system call, in the order they were queued.
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


class SocketClosed(Exception):
    """The socket is closing or closed: the frame was not queued."""


class FrameBatch:
    """The frames queued for one world socket in this loop iteration."""

    __slots__ = ("ws", "transport", "queued")

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.Transport | None) -> None:
        self.ws = ws
        self.transport = transport
        self.queued: list[bytes] = []

    def send(self, payload: bytes) -> None:
        """Queue one text frame; raises SocketClosed if the socket is closing."""
        transport = self.transport
        if transport is None or transport.is_closing() or self.ws.closed:
            raise SocketClosed()
        if not self.queued:
            asyncio.get_running_loop().call_soon(self.flush)
        self.queued.append(text_frame_header(len(payload)))
        self.queued.append(payload)

    def flush(self) -> None:
        """Write every queued frame in one call (dropped if the socket began closing)."""
        queued, self.queued = self.queued, []
        transport = self.transport
        if transport is None or transport.is_closing() or self.ws.closed:
            return
        transport.writelines(queued)
