"""Idle and slow sockets (issue 9): header and idle timeouts, the connection limit with a clear
refusal, and `vttrelay serve` raising its file-descriptor soft limit. Real sockets, with short
configured timeouts."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from bench.procs import free_port
from tests.support.relay import start_serve, stop_process

from vttrelay.relay.listener import TOO_MANY_CONNECTIONS, connection_limit
from vttrelay.relay.middleware import BODY_TIMEOUT

HEALTH = b"GET /api/health HTTP/1.1\r\nHost: relay\r\n\r\n"


async def _open(relay: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", relay.port)


async def _closed_after(reader: asyncio.StreamReader, limit: float) -> float:
    """Seconds until the relay closes the connection (reads until EOF), at most `limit`."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        while await asyncio.wait_for(reader.read(65536), limit):
            pass
    except ConnectionResetError:
        pass
    return loop.time() - started


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[int, bytes]:
    """One request on an open keep-alive connection: (status, body)."""
    writer.write(HEALTH)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    body = await asyncio.wait_for(reader.readexactly(length), 5)
    return int(head.split()[1]), body


async def test_a_socket_that_sends_nothing_is_closed(relay_factory: Any) -> None:
    relay = await relay_factory(header_timeout=0.3, idle_timeout=30)
    reader, writer = await _open(relay)
    assert 0.2 < await _closed_after(reader, 5) < 2.0
    writer.close()


async def test_dripped_headers_are_closed_at_the_header_timeout(relay_factory: Any) -> None:
    relay = await relay_factory(header_timeout=0.5, idle_timeout=30)
    reader, writer = await _open(relay)
    loop = asyncio.get_running_loop()
    started = loop.time()
    writer.write(b"GET /api/health HTTP/1.1\r\nHost: relay\r\n")
    closed = False
    for i in range(40):  # one header line every 0.1 s: never a whole head
        await asyncio.sleep(0.1)
        try:
            writer.write(f"X-Drip-{i}: 1\r\n".encode())
            await writer.drain()
        except ConnectionError:
            closed = True
            break
        if reader.at_eof():
            closed = True
            break
    if not closed:
        await _closed_after(reader, 1)
    assert loop.time() - started < 2.0
    writer.close()


async def test_an_idle_keep_alive_connection_is_closed(relay_factory: Any) -> None:
    relay = await relay_factory(header_timeout=5, idle_timeout=0.4)
    reader, writer = await _open(relay)
    assert (await _get(reader, writer))[0] == 200
    assert (await _get(reader, writer))[0] == 200  # keep-alive works
    assert 0.3 < await _closed_after(reader, 5) < 2.5
    writer.close()


async def test_past_the_limit_a_connection_is_refused_clearly(
    relay_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    relay = await relay_factory(header_timeout=5, idle_timeout=30, max_connections=4)
    held = [await _open(relay) for _ in range(4)]
    for reader, writer in held:
        assert (await _get(reader, writer))[0] == 200
    caplog.set_level(logging.WARNING, logger="vttrelay.relay")
    for _ in range(2):  # limit + 1, twice
        reader, writer = await _open(relay)
        writer.write(HEALTH)
        answer = await asyncio.wait_for(reader.read(), 5)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ")
        assert b"\r\nRetry-After: 1\r\n" in head + b"\r\n"  # the request never ran: retry
        assert orjson.loads(body) == {"error": TOO_MANY_CONNECTIONS}
        writer.close()
    refusing = [r for r in caplog.records if "refusing new ones" in r.getMessage()]
    assert len(refusing) == 1  # logged once
    for reader, writer in held:  # the open connections are unaffected
        assert (await _get(reader, writer))[0] == 200
    held[0][1].close()
    await asyncio.sleep(0.1)
    reader, writer = await _open(relay)  # room again
    assert (await _get(reader, writer))[0] == 200
    assert any("accepting connections again (2 refused)" in r.getMessage() for r in caplog.records)
    for _, w in [*held, (reader, writer)]:
        w.close()


async def test_at_the_limit_the_oldest_silent_connection_makes_room(relay_factory: Any) -> None:
    """An idle flood can't lock clients out: sockets that have not sent a request head yet
    give way, oldest first, to new connections; active ones are never closed for it."""
    relay = await relay_factory(header_timeout=30, idle_timeout=30, max_connections=3)
    active = await _open(relay)
    assert (await _get(*active))[0] == 200
    silent = [await _open(relay) for _ in range(2)]
    await asyncio.sleep(0.05)
    clients = []
    for _ in range(2):  # each new client gets in, evicting a silent socket
        reader, writer = await _open(relay)
        assert (await _get(reader, writer))[0] == 200
        clients.append((reader, writer))
    assert await _closed_after(silent[0][0], 2) < 2 and await _closed_after(silent[1][0], 2) < 2
    reader, writer = await _open(relay)  # every open connection is active now: refused
    writer.write(HEALTH)
    assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 503 ")
    assert (await _get(*active))[0] == 200  # the active connections were left alone
    assert (await _get(*clients[0]))[0] == 200
    for _, w in [active, *silent, *clients, (reader, writer)]:
        w.close()


async def test_a_body_sent_too_slowly_gets_408_and_the_connection_ends(
    relay_factory: Any,
) -> None:
    relay = await relay_factory(body_timeout=0.4)
    key = relay.key(("chat:write",))
    reader, writer = await _open(relay)
    writer.write(
        f"POST /chat HTTP/1.1\r\nHost: r\r\nx-api-key: {key}\r\n"
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"content":'.encode()
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)  # the rest never comes
    assert loop.time() - started < 2.0
    assert head.startswith(b"HTTP/1.1 408 ") and b"Connection: close" in head
    body = await asyncio.wait_for(reader.read(), 5)  # then the relay ends the connection
    assert orjson.loads(body) == {"error": BODY_TIMEOUT}
    assert loop.time() - started < 4.5  # body_timeout + the lingering close (2 s)
    writer.close()
    # a body that arrives in time is read as before
    answer_ok = await relay.call("POST", "/chat", key=key, json={"content": "hi"})
    assert answer_ok.status != 408


def test_the_connection_limit_stays_below_the_fd_limit() -> None:
    assert connection_limit(10_000, 1024) == 1024 - 64
    assert connection_limit(500, 1 << 20) == 500
    assert connection_limit(500, -1) == 500


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_serve_raises_its_fd_soft_limit_to_the_hard_limit(tmp_path: Path) -> None:
    port = free_port()
    proc, _ = await start_serve(
        tmp_path / "relay", port, "--no-world", preexec_fn=_lower_soft_fd_limit
    )
    try:
        limits = Path(f"/proc/{proc.pid}/limits").read_text().splitlines()
        soft, hard = next(line for line in limits if line.startswith("Max open files")).split()[3:5]
        assert soft == hard or int(soft) >= 1 << 20, (soft, hard)
    finally:
        await stop_process(proc)


def _lower_soft_fd_limit() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
