"""Memory before authentication (issue 9): until a `/relay` or `/ws/api` socket has authenticated
it may send only `preauth_bytes` (64 KiB); more is refused with the close 1009 and nothing is
buffered. After authentication each side has its own frame limit: `max_frame_bytes` for a world
(a reply can be large), `client_frame_bytes` for an API client."""

from __future__ import annotations

import asyncio
import struct
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from bench.procs import free_port
from tests.support.relay import start_serve, stop_process

from vttrelay.relay.accounts.preauth import TOO_BIG_CODE, TOO_BIG_REASON

BIG = "x" * (100 * 1024)  # past the 64 KiB budget, far below the post-auth limits


async def _closed_by(ws: aiohttp.ClientWebSocketResponse) -> tuple[Any, str]:
    while True:
        msg = await ws.receive(timeout=5)
        if msg.type != aiohttp.WSMsgType.TEXT:
            return ws.close_code, str(msg.extra)


async def test_world_socket_large_frame_before_auth_is_closed(relay: Any) -> None:
    async with relay.http.ws_connect(relay.ws_url, params={"id": "w"}) as ws:
        await ws.send_str(orjson.dumps({"type": "auth", "token": BIG}).decode())
        assert await _closed_by(ws) == (TOO_BIG_CODE, TOO_BIG_REASON)
    assert relay.state.registry.get("w") is None


async def test_client_socket_large_frame_before_auth_is_closed(relay: Any) -> None:
    async with relay.http.ws_connect(relay.url + "/ws/api") as ws:
        await ws.send_str(orjson.dumps({"type": "auth", "token": BIG}).decode())
        assert await _closed_by(ws) == (TOO_BIG_CODE, TOO_BIG_REASON)


async def test_after_auth_a_world_reply_can_be_large(relay: Any) -> None:
    big = "y" * (2 * 1024 * 1024)

    def handler(frame: dict[str, Any]) -> dict[str, Any]:
        return {"type": "world-info-result", "requestId": frame["requestId"], "data": big}

    await relay.world(handler=handler)
    answer = await relay.call("GET", "/world-info", key=relay.key())
    assert answer.status == 200 and answer.json()["data"] == big


async def test_after_auth_a_client_has_its_own_frame_limit(relay_factory: Any) -> None:
    relay = await relay_factory(client_frame_bytes=256 * 1024)
    await relay.world()
    async with relay.http.ws_connect(relay.url + "/ws/api") as ws:
        await ws.send_str(orjson.dumps({"type": "auth", "token": relay.key()}).decode())
        hello = orjson.loads((await ws.receive(timeout=5)).data)
        assert hello["type"] == "connected"
        # larger than the pre-auth budget, within the client limit: answered
        await ws.send_str(orjson.dumps({"type": "ping", "requestId": "p", "pad": BIG}).decode())
        assert orjson.loads((await ws.receive(timeout=5)).data)["type"] == "pong"
        await ws.send_str("z" * (300 * 1024))  # over the client limit: closed
        assert (await _closed_by(ws))[0] == TOO_BIG_CODE


def _rss(pid: int) -> int:
    """Resident memory of a process, in bytes (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def _send_huge_unauthenticated_frame(port: int, path: str, size: int) -> asyncio.StreamWriter:
    """Open a WebSocket by hand and send `size` bytes of one text frame (all but its last byte,
    so a relay that buffers frames keeps them); returns the open connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101"), head
    # FIN + text, masked, 64-bit length; a zero mask leaves the payload as it is
    writer.write(bytes([0x81, 0x80 | 127]) + struct.pack("!Q", size) + b"\0\0\0\0")
    chunk = b"a" * (256 * 1024)
    sent = 0
    try:
        while sent < size - 1:
            part = chunk[: min(len(chunk), size - 1 - sent)]
            writer.write(part)
            await asyncio.wait_for(writer.drain(), 5)
            sent += len(part)
    except (ConnectionError, TimeoutError):
        pass  # refused: the relay closed the connection
    return writer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_unauthenticated_huge_frames_do_not_grow_the_relays_memory(tmp_path: Path) -> None:
    """`vttrelay serve` (uvloop): 6 sockets each send 24 MiB before authenticating."""
    port = free_port()
    proc, _ = await start_serve(tmp_path / "relay", port, "--no-world")
    writers: list[asyncio.StreamWriter] = []
    try:
        before = _rss(proc.pid)
        for path in ("/relay?id=w", "/ws/api") * 3:
            writers.append(await _send_huge_unauthenticated_frame(port, path, 24 * 1024 * 1024))
        await asyncio.sleep(0.3)
        grown = _rss(proc.pid) - before
        assert grown < 16 * 1024 * 1024, f"relay memory grew by {grown // 1024} KiB"
    finally:
        for writer in writers:
            writer.close()
        await stop_process(proc)
