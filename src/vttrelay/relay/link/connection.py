"""A world session bound to its aiohttp WebSocket: how the relay writes to a world and awaits
its replies.

`WorldConnection` is what the world directory holds for a world connected to this instance (a
`backends.WorldHandle`): `request` sends a request frame and awaits the frame with its
`requestId`; `send` and `send_quietly` send frames nobody awaits an answer to. Frames leave
through the socket's `FrameBatch`, one write per loop iteration. `WorldListener` is what the
directory tells about worlds coming and going and about their event frames (the event hub).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Protocol

import orjson
from aiohttp import web

from vttrelay.relay.link.frame_batch import FrameBatch, SocketClosed
from vttrelay.relay.link.pending import Reply, WorldGone, expire_reply
from vttrelay.relay.link.session import WorldSession
from vttrelay.relay.store import TokenRecord


class WorldListener(Protocol):
    """Told about worlds coming and going and about their event frames."""

    def world_connected(self, world: WorldConnection) -> None: ...

    def world_disconnected(self, world: WorldConnection) -> None: ...

    def world_event(self, world: WorldConnection, frame: dict[str, Any]) -> None: ...


class WorldConnection(WorldSession):
    """One authenticated world socket: its session, and the socket it reads and writes."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        client_id: str,
        account: str,
        metadata: dict[str, Any],
        token: TokenRecord,
        peer_host: str,
        transport: asyncio.Transport | None,
    ) -> None:
        super().__init__(client_id, account, metadata, token)
        self.ws = ws
        self.frames = FrameBatch(ws, transport)  # frames out, one write per loop iteration
        self.peer_host = peer_host

    async def send(self, frame: dict[str, Any]) -> None:
        """Send one JSON text frame. Raises WorldGone if the socket is closed."""
        self.queue_frame(orjson.dumps(frame))

    def queue_frame(self, data: bytes) -> None:
        """Queue one text frame for this loop iteration's write (`frame_batch.py`). Raises
        WorldGone if the socket is closed or closing."""
        if self.closed:
            raise WorldGone()
        try:
            self.frames.send(data)
        except SocketClosed:
            raise WorldGone() from None

    async def request(self, frame: dict[str, Any], timeout: float) -> Reply:
        """Send a request frame and return the frame that answers it (same `requestId`).

        Raises `asyncio.TimeoutError` after `timeout` seconds and `WorldGone` if the world
        disconnects first.
        """
        request_id = frame["requestId"]
        self._count_request(time.time())
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Reply] = loop.create_future()
        self.pending[request_id] = future
        timer = loop.call_later(timeout, expire_reply, future)
        try:
            self.queue_frame(orjson.dumps(frame))
            return await future
        finally:
            timer.cancel()
            if self.pending.get(request_id) is future:
                del self.pending[request_id]

    async def close(self, code: int, reason: str) -> None:
        """Close the socket with a code from protocol.Close; pending requests fail at once."""
        self.closed = True
        self.fail_pending()
        with contextlib.suppress(Exception):
            await self.ws.close(code=code, message=reason.encode())


def send_quietly(world: WorldConnection, data: bytes) -> None:
    """Queue a frame nobody awaits an answer to (a pong, a frame relayed from another
    instance); a world that has gone just drops it."""
    with contextlib.suppress(WorldGone):
        world.queue_frame(data)
