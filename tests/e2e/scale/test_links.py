"""The direct links between instances (backends.redis_link), end to end: one link per pair,
kept; a holder whose link cannot be reached is called through Redis; a connection that does not
open with the holder's secret is closed before anything it sends reaches a world."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from vttrelay.relay.backends.redis_directory import encode
from vttrelay.relay.backends.redis_link import LinkAddress

from ...conftest import free_port
from ..conftest import eventually

CALLS = 30


async def skill_checks(relay: Any, key: str, count: int) -> list[int]:
    async def call(i: int) -> int:
        answer = await relay.call(
            "POST",
            "/dnd5e/skill-check",
            key=key,
            params={"clientId": "w1"},
            json={"actorUuid": f"Actor.{i}", "skill": "prc"},
        )
        return answer.status

    return list(await asyncio.gather(*(call(i) for i in range(count))))


async def test_calls_to_another_instance_share_one_kept_link(cluster: Any) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)
    assert await skill_checks(b, key, CALLS) == [200] * CALLS  # all at once: one link opened
    assert b.state.registry.links() == [a.state.registry.link_address]
    assert await skill_checks(b, key, 3) == [200] * 3
    assert b.state.registry.links() == [a.state.registry.link_address]
    assert a.state.registry.links() == []  # the holder answers on the caller's link
    assert len([f for f in world.received if f["type"] == "skill-check"]) == CALLS + 3


async def test_a_holder_whose_link_is_unreachable_is_called_through_redis(cluster: Any) -> None:
    a, b = await cluster(2)
    address = LinkAddress.parse(a.state.registry.link_address)
    assert address is not None
    closed = LinkAddress(address.secret, "127.0.0.1", free_port())  # nothing listens there
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
