"""The relay's hand-written encoders, byte for byte against the libraries that read them.

The relay writes some wire formats itself, for speed: WebSocket text frames to worlds
(`frame_batch.py`), pre-encoded control frames (`handshake.AUTH_SUCCESS`, `session.PONG`), the
`/ws/api` event frame spliced from pre-encoded parts (`LoggedEvent.ws`), SSE frames written as
HTTP/1.1 chunks (`LoggedEvent.sse_chunk`, the keep-alive comment), and the 503 a connection past
the limit gets (`listener.REFUSAL`). Each is checked here against its reference: the bytes equal
what the library's own writer produces (aiohttp's WebSocket and HTTP writers, orjson), and the
library's reader (aiohttp's WebSocket reader and HTTP parsers, orjson) reads back what was meant.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp import WSMsgType
from aiohttp._websocket.reader import WebSocketDataQueue
from aiohttp.base_protocol import BaseProtocol
from aiohttp.http_parser import HttpResponseParser
from aiohttp.http_websocket import WebSocketReader, WebSocketWriter
from aiohttp.http_writer import StreamWriter

from vttrelay import protocol
from vttrelay.relay.events.model import SSE_KEEPALIVE, LoggedEvent, StreamEvent, sse_frame
from vttrelay.relay.events.subscriber import KEEPALIVE_CHUNK
from vttrelay.relay.link import handshake, session
from vttrelay.relay.link.frame_batch import FrameBatch, text_frame_header
from vttrelay.relay.listener import REFUSAL, TOO_MANY_CONNECTIONS

# Payload lengths at and around each of RFC 6455's three length forms.
LENGTHS = (0, 1, 125, 126, 127, 65_535, 65_536, 70_000)


class Transport(asyncio.Transport):
    """An asyncio transport that keeps what is written."""

    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()

    def write(self, data: Any) -> None:
        self.data += data

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.data += data

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


class Socket:
    """What `FrameBatch` asks of aiohttp's WebSocketResponse: whether it is closed."""

    closed = False


async def _batch_bytes(*payloads: bytes) -> bytes:
    transport = Transport()
    batch = FrameBatch(Socket(), transport)  # type: ignore[arg-type]
    for payload in payloads:
        batch.send(payload)
    await asyncio.sleep(0)  # the end of this loop iteration: the one write
    return bytes(transport.data)


async def _aiohttp_frames(*payloads: bytes) -> bytes:
    """What aiohttp's own writer sends for these text frames as a server (unmasked, no
    compression: how the relay's world sockets are set up)."""
    transport = Transport()
    protocol_ = BaseProtocol(asyncio.get_running_loop())
    protocol_.connection_made(transport)
    writer = WebSocketWriter(protocol_, transport, use_mask=False, compress=0)
    for payload in payloads:
        await writer.send_frame(payload, WSMsgType.TEXT)
    return bytes(transport.data)


def _read_frames(data: bytes) -> list[tuple[WSMsgType, bytes]]:
    """aiohttp's WebSocket reader over `data`: the messages it reads, text kept as bytes (as the
    relay's world sockets read them, `decode_text=False`)."""
    loop = asyncio.get_running_loop()
    queue = WebSocketDataQueue(BaseProtocol(loop), 2**20, loop=loop)
    reader = WebSocketReader(queue, max_msg_size=2**20, compress=False, decode_text=False)
    reader.feed_data(data)
    messages = []
    while queue._buffer:
        message, _size = queue._buffer.popleft()
        messages.append((message.type, message.data))
    return messages


@pytest.mark.parametrize("length", LENGTHS)
async def test_a_text_frame_is_byte_for_byte_aiohttps(length: int) -> None:
    payload = bytes(i % 251 for i in range(length))
    ours = await _batch_bytes(payload)
    assert ours == text_frame_header(length) + payload
    assert ours == await _aiohttp_frames(payload)
    assert _read_frames(ours) == [(WSMsgType.TEXT, payload)]


async def test_frames_of_one_iteration_read_back_in_order() -> None:
    payloads = [orjson.dumps({"type": "players", "requestId": f"r{i}"}) for i in range(3)]
    payloads.append(b'{"type":"chat","big":"' + b"x" * 70_000 + b'"}')
    ours = await _batch_bytes(*payloads)
    assert ours == await _aiohttp_frames(*payloads)
    assert _read_frames(ours) == [(WSMsgType.TEXT, p) for p in payloads]


def test_pre_encoded_control_frames_are_orjsons_encoding_of_the_typed_frames() -> None:
    assert orjson.dumps({"type": "auth-success"}) == handshake.AUTH_SUCCESS
    assert orjson.dumps({"type": "pong"}) == session.PONG
    assert orjson.loads(handshake.AUTH_SUCCESS)["type"] == protocol.AUTH_SUCCESS


def _logged(channel: str, name: str, data: Any, seq: int = 7) -> LoggedEvent:
    return LoggedEvent(seq, StreamEvent(channel, name, data))


@pytest.mark.parametrize(
    ("channel", "kind", "name", "data"),
    [
        (
            protocol.CHAT_CHANNEL,
            "chat-event",
            "chat-create",
            {"id": "m", "content": 'a "b"\n\u2603'},
        ),
        (protocol.ROLL_CHANNEL, "roll-event", "roll", {"total": 17, "formula": "1d20", "d": [14]}),
        (protocol.HOOK_CHANNEL, "hook-event", "createActor", {"hook": "createActor", "args": [{}]}),
        (protocol.SCENE_CHANNEL, "scene-event", "scene-update", {"sceneId": "s", "x": 1.5}),
    ],
)
def test_the_ws_api_event_frame_is_orjsons_encoding_of_the_whole_frame(
    channel: str, kind: str, name: str, data: Any
) -> None:
    logged = _logged(channel, name, data)
    expected: dict[str, Any] = {"type": kind, "event": name, "id": 7}
    if channel == protocol.HOOK_CHANNEL:
        expected["hook"] = name
    expected["data"] = data
    assert logged.ws == orjson.dumps(expected)
    assert orjson.loads(logged.ws) == expected


def test_an_sse_frame_carries_the_event_on_single_lines() -> None:
    logged = _logged(protocol.CHAT_CHANNEL, "chat-create", {"content": "two\nlines"}, seq=12)
    lines = logged.sse.split(b"\n")
    assert lines == [b"id: 12", b"event: chat-create", b'data: {"content":"two\\nlines"}', b"", b""]
    assert sse_frame("gap", b"{}") == b"event: gap\ndata: {}\n\n"


async def _aiohttp_chunk(data: bytes) -> bytes:
    """What aiohttp's HTTP writer sends for one chunk of a chunked response."""
    transport = Transport()
    protocol_ = BaseProtocol(asyncio.get_running_loop())
    protocol_.connection_made(transport)
    writer = StreamWriter(protocol_, asyncio.get_running_loop())
    writer.enable_chunking()
    await writer.write(data)
    return bytes(transport.data)


def _read_chunked(data: bytes) -> bytes:
    """aiohttp's HTTP response parser over a chunked response whose body is `data`."""
    loop = asyncio.get_running_loop()
    parser = HttpResponseParser(BaseProtocol(loop), loop, 2**16)
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    ((_message, payload),), _upgraded, _tail = parser.feed_data(head + data + b"0\r\n\r\n")
    return b"".join(payload._buffer)


@pytest.mark.parametrize("size", [0, 1, 15, 16, 4095, 70_000])
async def test_an_sse_chunk_is_byte_for_byte_aiohttps(size: int) -> None:
    logged = _logged(protocol.ROLL_CHANNEL, "roll", {"pad": "x" * size})
    assert logged.sse_chunk == await _aiohttp_chunk(logged.sse)
    assert _read_chunked(logged.sse_chunk) == logged.sse
    assert await _aiohttp_chunk(SSE_KEEPALIVE) == KEEPALIVE_CHUNK
    assert _read_chunked(KEEPALIVE_CHUNK) == SSE_KEEPALIVE


async def test_the_refusal_past_the_connection_limit_parses_as_its_503() -> None:
    loop = asyncio.get_running_loop()
    parser = HttpResponseParser(BaseProtocol(loop), loop, 2**16)
    ((message, payload),), _upgraded, tail = parser.feed_data(REFUSAL)
    assert (message.version, message.code, message.reason) == ((1, 1), 503, "Service Unavailable")
    assert message.should_close and tail == b""
    assert message.headers["Content-Type"] == "application/json"
    assert message.headers["Retry-After"] == "1"
    assert message.headers["Access-Control-Allow-Origin"] == "*"
    body = b"".join(payload._buffer)
    assert body == orjson.dumps({"error": TOO_MANY_CONNECTIONS})
    assert int(message.headers["Content-Length"]) == len(body)
