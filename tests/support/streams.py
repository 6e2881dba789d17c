"""The event stream readers of the tests: an SSE reader over a real HTTP connection and a client
WebSocket on /ws/api (the fixtures `sse`, `api_ws` and `sub_counts`, imported by the conftest files
that offer them).

- `sse` -> `async open(server, path, key, headers=None, **query) -> SSEStream`; every stream
  opened is closed at teardown. `SSEStream.frame()` returns the next raw frame (bytes up to and
  including the blank line), `.event()` the next non-comment frame parsed as `SSEEvent(name, data,
  id)`, `.ended()` waits for the end of the stream.
- `api_ws` -> `async open(server, key, **auth) -> ApiSocket` (auth frame sent; the `connected`
  answer read and kept as `.hello`); `.send(frame)`, `.recv()`, `.recv_until(type)`.
- `counts(world, channel)` -> the counts a world double was sent for a channel, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest


@dataclass
class SSEEvent:
    name: str | None
    data: Any
    id: str | None
    raw: bytes


def parse_frame(raw: bytes) -> SSEEvent:
    name = event_id = None
    data = None
    for line in raw.decode().split("\n"):
        field, _, value = line.partition(": ")
        if field == "event":
            name = value
        elif field == "id":
            event_id = value
        elif field == "data":
            data = orjson.loads(value)
    return SSEEvent(name, data, event_id, raw)


class SSEStream:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.status = response.status
        self.headers = response.headers

    async def frame(self, timeout: float = 5.0) -> bytes:
        raw = await asyncio.wait_for(self.response.content.readuntil(b"\n\n"), timeout)
        if not raw.endswith(b"\n\n"):
            raise EOFError(raw)
        return raw

    async def event(self, timeout: float = 5.0) -> SSEEvent:
        while True:
            raw = await self.frame(timeout)
            if not raw.startswith(b":"):
                return parse_frame(raw)

    async def events(self, count: int, timeout: float = 5.0) -> list[SSEEvent]:
        return [await self.event(timeout) for _ in range(count)]

    async def nothing_more(self, wait: float = 0.2) -> bool:
        """True when no event arrives within `wait` seconds."""
        try:
            await self.event(wait)
        except TimeoutError:
            return True
        return False

    async def ended(self, timeout: float = 5.0) -> bytes:
        """Wait for the end of the stream; returns what came before it."""
        rest = await asyncio.wait_for(self.response.content.read(), timeout)
        return rest

    def close(self) -> None:
        self.response.close()


@pytest.fixture
async def sse() -> AsyncIterator[Callable[..., Awaitable[SSEStream]]]:
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
    opened: list[SSEStream] = []

    async def open_stream(
        server: Any, path: str, key: str | None, headers: dict[str, str] | None = None, **query: Any
    ) -> SSEStream:
        all_headers = dict(headers or {})
        if key is not None:
            all_headers["x-api-key"] = key
        params = {k: str(v) for k, v in query.items()}
        response = await session.get(server.url + path, params=params, headers=all_headers)
        stream = SSEStream(response)
        opened.append(stream)
        return stream

    try:
        yield open_stream
    finally:
        for stream in opened:
            stream.close()
        await session.close()


class ApiSocket:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.hello: dict[str, Any] = {}

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send_str(orjson.dumps(frame).decode())

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise EOFError(f"{msg.type} {self.ws.close_code} {msg.extra}")
        frame: dict[str, Any] = orjson.loads(msg.data)
        return frame

    async def recv_until(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        while True:
            frame = await self.recv(timeout)
            if frame.get("type") == kind:
                return frame

    async def close(self) -> None:
        await self.ws.close()


@pytest.fixture
async def api_ws() -> AsyncIterator[Callable[..., Awaitable[ApiSocket]]]:
    session = aiohttp.ClientSession()
    sockets: list[ApiSocket] = []

    async def open_socket(
        server: Any, key: str | None, hello: bool = True, **auth: Any
    ) -> ApiSocket:
        ws = await session.ws_connect(server.url + "/ws/api")
        socket = ApiSocket(ws)
        sockets.append(socket)
        frame = {"type": "auth", **({"token": key} if key is not None else {}), **auth}
        await socket.send(frame)
        if hello:
            socket.hello = await socket.recv()
        return socket

    try:
        yield open_socket
    finally:
        for socket in sockets:
            with contextlib.suppress(Exception):
                await socket.close()
        await session.close()


def counts(world: Any, channel: str) -> list[int]:
    """The subscription counts a world double was sent for one channel, in order."""
    return [
        f["count"]
        for f in world.received
        if f.get("type") == "event-subscription-update" and f.get("channel") == channel
    ]


@pytest.fixture
def sub_counts() -> Callable[[Any, str], list[int]]:
    return counts
