"""frame_batch.py: frame headers by length, one write per loop iteration, nothing after a close."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vttrelay.relay.link.frame_batch import FrameBatch, SocketClosed, text_frame_header


@pytest.mark.parametrize(
    ("length", "header"),
    [
        (0, b"\x81\x00"),
        (125, b"\x81\x7d"),
        (126, b"\x81\x7e\x00\x7e"),
        (65_535, b"\x81\x7e\xff\xff"),
        (65_536, b"\x81\x7f\x00\x00\x00\x00\x00\x01\x00\x00"),
        (70_000_000, b"\x81\x7f" + (70_000_000).to_bytes(8, "big")),
    ],
)
def test_header_forms_of_rfc_6455(length: int, header: bytes) -> None:
    assert text_frame_header(length) == header


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[list[bytes]] = []
        self.closing = False

    def is_closing(self) -> bool:
        return self.closing

    def writelines(self, parts: list[bytes]) -> None:
        self.writes.append(list(parts))


class FakeSocket:
    closed = False


async def test_frames_of_one_iteration_leave_in_one_write_in_order() -> None:
    transport, ws = FakeTransport(), FakeSocket()
    batch = FrameBatch(ws, transport)  # type: ignore[arg-type]
    for payload in (b"one", b"two", b"x" * 200):
        batch.send(payload)
    assert transport.writes == []  # nothing before the end of this iteration
    await asyncio.sleep(0)
    assert transport.writes == [
        [b"\x81\x03", b"one", b"\x81\x03", b"two", b"\x81\x7e\x00\xc8", b"x" * 200]
    ]
    batch.send(b"later")
    await asyncio.sleep(0)
    assert len(transport.writes) == 2 and transport.writes[1] == [b"\x81\x05", b"later"]


async def test_closing_socket_refuses_and_drops_what_was_queued() -> None:
    transport, ws = FakeTransport(), FakeSocket()
    batch = FrameBatch(ws, transport)  # type: ignore[arg-type]
    batch.send(b"queued before the close")
    ws.closed = True  # aiohttp marks the socket closed before writing its close frame
    with pytest.raises(SocketClosed):
        batch.send(b"after")
    await asyncio.sleep(0)
    assert transport.writes == []
    ws.closed, transport.closing = False, True
    with pytest.raises(SocketClosed):
        batch.send(b"transport closing")
    none: Any = None
    with pytest.raises(SocketClosed):
        FrameBatch(ws, none).send(b"no transport")  # type: ignore[arg-type]
