"""The direct link's framing and handshake (backends.redis.link), on a stand-in transport:
messages cut anywhere by the network come out whole and in order; the messages of one loop
iteration leave in one write; the accepting end hears nothing before the right secret and
closes on a wrong or oversized one."""

from __future__ import annotations

import asyncio
import struct

from vttrelay.relay.backends.redis.link import MAX_FIRST_MESSAGE, Link, LinkAddress, link_hosts


class Transport:
    """What a Link uses of an asyncio transport."""

    def __init__(self) -> None:
        self.written = b""
        self.writes = 0
        self.closed = False

    def writelines(self, data: list[bytes]) -> None:
        self.written += b"".join(data)
        self.writes += 1

    def close(self) -> None:
        self.closed = True


def framed(*messages: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(m)) + m for m in messages)


def link(expect: bytes | None = None) -> tuple[Link, list[bytes], Transport]:
    heard: list[bytes] = []
    end = Link(lambda _link, data: heard.append(data), lambda _link: None, expect)
    transport = Transport()
    end.connection_made(transport)  # type: ignore[arg-type]
    return end, heard, transport


def test_messages_cut_anywhere_come_out_whole_and_in_order() -> None:
    messages = [b"", b"a", b'{"k":"req"}\n{"type":"x"}', b"z" * 70_000]
    stream = framed(*messages)
    for step in (1, 3, 4, 5, 1000, len(stream)):
        end, heard, _ = link()
        for at in range(0, len(stream), step):
            end.data_received(stream[at : at + step])
        assert heard == messages


async def test_the_messages_of_one_iteration_leave_in_one_write() -> None:
    end, _, transport = link()
    assert end.send(b"hello") and end.send(b"world")
    assert transport.writes == 0
    await asyncio.sleep(0)
    assert (transport.written, transport.writes) == (framed(b"hello", b"world"), 1)
    assert end.send(b"again")
    await asyncio.sleep(0)
    assert (transport.written, transport.writes) == (framed(b"hello", b"world", b"again"), 2)


async def test_a_closed_link_sends_nothing() -> None:
    end, _, transport = link()
    assert end.send(b"queued")
    end.close()  # before the write: dropped, as the connection is
    assert transport.closed and not end.send(b"after")
    await asyncio.sleep(0)
    assert transport.written == b""


def test_the_accepting_end_hears_messages_after_the_right_secret_only() -> None:
    end, heard, transport = link(expect=b"s3cret")
    end.data_received(framed(b"s3cret", b"one", b"two"))
    assert heard == [b"one", b"two"] and not transport.closed


def test_a_wrong_secret_closes_before_anything_is_heard() -> None:
    end, heard, transport = link(expect=b"s3cret")
    end.data_received(framed(b"guess!", b"one"))
    assert heard == [] and transport.closed


def test_an_oversized_first_message_closes_before_it_is_buffered() -> None:
    end, heard, transport = link(expect=b"s3cret")
    end.data_received(struct.pack(">I", MAX_FIRST_MESSAGE + 1) + b"x")
    assert heard == [] and transport.closed


def test_a_link_address_reads_back_what_it_writes() -> None:
    address = LinkAddress("ab12", "10.0.0.7", 4321)
    assert LinkAddress.parse(str(address)) == address
    v6 = LinkAddress("ab12", "::1", 4321)
    assert LinkAddress.parse(str(v6)) == v6
    local = LinkAddress("ab12", "127.0.0.1", 4321, "boot-id", "/tmp/a dir/link.sock")
    assert LinkAddress.parse(str(local)) == local
    for bad in ("", "ab12", "ab12@host", "@10.0.0.7:1", "ab12@10.0.0.7:port"):
        assert LinkAddress.parse(bad) is None


def test_link_hosts_follow_the_http_host() -> None:
    assert link_hosts("127.0.0.1", "redis://10.1.2.3:6379/0") == ("127.0.0.1", "127.0.0.1")
    assert link_hosts("10.0.0.5", "redis://127.0.0.1:6379/0") == ("10.0.0.5", "10.0.0.5")
    # every interface: bind them all, advertise the address this machine reaches Redis from
    assert link_hosts("0.0.0.0", "redis://127.0.0.1:6379/0") == ("0.0.0.0", "127.0.0.1")
    assert link_hosts("0.0.0.0", "unix:///run/redis.sock") == ("0.0.0.0", "127.0.0.1")
