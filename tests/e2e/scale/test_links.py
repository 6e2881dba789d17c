"""The direct links between instances (backends.redis_link), end to end: one link per pair,
kept, over the holder's Unix socket on one machine and over TCP when that cannot be reached; a
holder whose link cannot be reached at all is called through Redis; a connection that does not
open with the holder's secret is closed before anything it sends reaches a world."""

from __future__ import annotations

import asyncio
import struct
from dataclasses import replace
from typing import Any

from bench.procs import free_port
from tests.support.e2e import eventually
from tests.support.scale import skill_checks

from vttrelay.relay.backends.redis.directory_scripts import encode
from vttrelay.relay.backends.redis.link import LinkAddress

CALLS = 30


async def test_calls_to_another_instance_share_one_kept_link(cluster: Any) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)
    assert await skill_checks(b, key, CALLS) == [200] * CALLS  # all at once: one link opened
    assert b.state.registry.links() == [a.state.registry.link_address]
    address = LinkAddress.parse(a.state.registry.link_address)
    assert address is not None and address.path
    (link,) = b.state.registry._links.values()
    assert link.transport.get_extra_info("peername") == address.path  # one machine: Unix socket
    assert await skill_checks(b, key, 3) == [200] * 3
    assert b.state.registry.links() == [a.state.registry.link_address]
    assert a.state.registry.links() == []  # the holder answers on the caller's link
    assert len([f for f in world.received if f["type"] == "skill-check"]) == CALLS + 3


async def test_a_link_goes_over_tcp_when_the_unix_socket_is_out_of_reach(cluster: Any) -> None:
    a, b = await cluster(2)
    address = LinkAddress.parse(a.state.registry.link_address)
    assert address is not None and address.path  # this machine has Unix sockets
    elsewhere = replace(address, machine="another-machine")
    a.state.registry.link_address = str(elsewhere)
    await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)
    assert await skill_checks(b, key, 5) == [200] * 5
    assert b.state.registry.links() == [str(elsewhere)]
    (link,) = b.state.registry._links.values()
    assert link.transport.get_extra_info("peername")[1] == address.port  # TCP, to A's port


async def test_a_holder_whose_link_is_unreachable_is_called_through_redis(cluster: Any) -> None:
    a, b = await cluster(2)
    address = LinkAddress.parse(a.state.registry.link_address)
    assert address is not None
    # nothing listens there
    closed = LinkAddress(address.secret, "127.0.0.1", free_port(), address.machine, "/nonexistent")
    a.state.registry.link_address = str(closed)
    await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)
    assert await skill_checks(b, key, 5) == [200] * 5
    assert b.state.registry.links() == []


async def test_a_link_without_the_secret_is_closed_unheard(cluster: Any) -> None:
    (a,) = await cluster(1)
    world = await a.world("w1")
    address = LinkAddress.parse(a.state.registry.link_address)
    assert address is not None
    reader, writer = await asyncio.open_connection(address.host, address.port)
    head = {"k": "req", "from": "intruder", "id": "w1", "t": 5}
    frame = b'{"type":"world-info","requestId":"world-info_1"}'
    for message in (b"0" * len(address.secret), encode(head, frame)):
        writer.write(struct.pack(">I", len(message)) + message)
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the holder
    writer.close()
    await asyncio.sleep(0.2)
    assert [f for f in world.received if f["type"] == "world-info"] == []
