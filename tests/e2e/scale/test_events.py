"""Events and counters across instances, end to end: relays sharing one Redis (real sockets, a
real redis-server), a world on one instance, subscribers and callers on the others.

- a subscriber on B gets A's world events in order with the same ids as one on A, over SSE and
  /ws/api; Last-Event-ID replays on any instance;
- the world is told the total subscriber count over the instances, and the count drops when an
  instance with subscribers is killed (separate processes, SIGKILL);
- a key's rate limit is one budget over the instances.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.support.e2e import eventually
from tests.support.streams import counts

from vttrelay import protocol

CHAT = protocol.CHAT_CHANNEL


def chat_event(n: int) -> dict[str, Any]:
    message = {"id": f"m{n}", "content": f"message {n}", "speaker": {}, "whisper": [], "flags": {}}
    return {"type": "chat-event", "data": {"eventType": "create", "data": message}}


async def test_a_subscriber_elsewhere_gets_the_events_in_order_with_the_same_ids(
    cluster: Any, sse: Any, api_ws: Any
) -> None:
    a, b, c = await cluster(3)
    world = await a.world("w1")
    await eventually(lambda: all(r.state.registry.get("w1") is not None for r in (b, c)))
    key = a.key()
    here = await sse(a, "/chat/subscribe", key, clientId="w1")
    there = await sse(b, "/chat/subscribe", key, clientId="w1")
    assert (await here.event()).name == (await there.event()).name == "connected"
    socket = await api_ws(c, key, clientId="w1")
    await socket.send({"type": "subscribe", "channel": CHAT, "requestId": "s"})
    assert (await socket.recv_until("subscribed"))["lastEventId"] == 0
    for n in range(1, 21):
        await world.emit(chat_event(n))

    expected = [(str(n), "chat-create", f"message {n}") for n in range(1, 21)]
    for stream in (here, there):
        got = await stream.events(20)
        assert [(e.id, e.name, e.data["content"]) for e in got] == expected
    pushed = [await socket.recv_until("chat-event") for _ in range(20)]
    assert [(str(f["id"]), f["event"], f["data"]["content"]) for f in pushed] == expected

    # Last-Event-ID on the instances that did not serve the stream: the events after it
    there.close()
    for server in (b, c):
        again = await sse(server, "/chat/subscribe", key, {"Last-Event-ID": "15"}, clientId="w1")
        connected = await again.event()
        assert (connected.name, connected.id) == ("connected", "15")
        replay = await again.events(5)
        assert [(e.id, e.data["content"]) for e in replay] == [
            (str(n), f"message {n}") for n in range(16, 21)
        ]
        again.close()

    # /ws/api lastEventId on another instance, then live events
    late = await api_ws(b, key, clientId="w1")
    await late.send({"type": "subscribe", "channel": CHAT, "requestId": "r", "lastEventId": 18})
    assert (await late.recv_until("subscribed"))["lastEventId"] == 18
    await world.emit(chat_event(21))
    replayed = [await late.recv_until("chat-event") for _ in range(3)]
    assert [f["id"] for f in replayed] == [19, 20, 21]
    assert (await here.event()).id == "21"


async def test_the_world_is_told_the_total_over_the_instances(cluster: Any, sse: Any) -> None:
    a, b = await cluster(2, subscription_linger=0)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    far = await sse(b, "/chat/subscribe", key, clientId="w1")
    await far.event()
    await eventually(lambda: counts(world, CHAT)[-1:] == [1])
    near = await sse(a, "/chat/subscribe", key, clientId="w1")
    await near.event()
    await eventually(lambda: counts(world, CHAT)[-1:] == [2])
    far2 = await sse(b, "/chat/subscribe", key, clientId="w1")
    await far2.event()
    await eventually(lambda: counts(world, CHAT)[-1:] == [3])
    far.close()
    far2.close()
    await eventually(lambda: counts(world, CHAT)[-1:] == [1])
    near.close()
    await eventually(lambda: counts(world, CHAT)[-1:] == [0])
    assert counts(world, CHAT) == [1, 2, 3, 2, 1, 0] or counts(world, CHAT) == [1, 2, 3, 1, 0]


async def test_a_dead_instances_subscribers_stop_counting(relay_processes: Any, sse: Any) -> None:
    a, b = await relay_processes(2, "--heartbeat-ttl", "1.5")
    world = await a.world("w1")
    key = a.key()
    far = await sse(b, "/chat/subscribe", key, clientId="w1")
    await far.event()
    near = await sse(a, "/chat/subscribe", key, clientId="w1")
    await near.event()
    await eventually(lambda: counts(world, CHAT)[-1:] == [2])
    await world.emit(chat_event(1))
    assert (await far.event()).id == (await near.event()).id == "1"
    b.kill()
    killed = time.monotonic()
    await eventually(lambda: counts(world, CHAT)[-1:] == [1], timeout=10)
    took = time.monotonic() - killed
    assert took < 1.5 + 2.0, took  # the heartbeat TTL, then one check
    await world.emit(chat_event(2))
    assert (await near.event()).id == "2"


async def test_a_keys_rate_limit_is_one_budget_over_the_instances(cluster: Any) -> None:
    a, b = await cluster(2)
    key = a.key(rate_per_minute=4)
    statuses = []
    for server in (a, b, a, b, a, b):
        statuses.append((await server.call("GET", "/clients", key=key)).status)
    assert statuses == [200, 200, 200, 200, 429, 429]
    refused = await b.call("GET", "/clients", key=key)
    assert refused.json() == {"error": "Too many API requests, please slow down"}
    assert refused.headers["Retry-After"] == "15"
    other = a.key(rate_per_minute=4)  # another key has its own budget
    assert (await b.call("GET", "/clients", key=other)).status == 200


async def test_events_keep_their_order_while_subscribers_join(cluster: Any, sse: Any) -> None:
    """Subscribers that join on another instance while the world emits get every event after
    the id they start from, once, in order (the snapshot and the live events meet)."""
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)

    async def emit_all() -> None:
        for n in range(1, 101):
            await world.emit(chat_event(n))
            if n % 10 == 0:
                await asyncio.sleep(0.005)

    emitting = asyncio.ensure_future(emit_all())
    streams = []
    for _ in range(5):
        stream = await sse(b, "/chat/subscribe", key, {"Last-Event-ID": "0"}, clientId="w1")
        streams.append(stream)
        await asyncio.sleep(0.01)
    await emitting
    for stream in streams:
        connected = await stream.event()
        assert connected.name == "connected"
        got = [int(e.id) for e in await stream.events(100)]
        assert got == list(range(1, 101))
