"""A world held on another instance that goes away ends the streams here, as on one process.

On one relay a world's disconnect ends its SSE streams (its /ws/api subscriptions stay and
resume when it comes back), while a same-host reconnect that replaces its socket does not. Scaled
out, the instance serving the streams learns of the disconnect through the Redis directory: the
world's release, or its instance being reaped as dead.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.e2e import eventually


def chat_event(message_id: str) -> dict[str, Any]:
    message = {"id": message_id, "content": "hi", "speaker": {}, "whisper": [], "flags": {}}
    return {"type": "chat-event", "data": {"eventType": "create", "data": message}}


async def test_a_remote_world_leaving_ends_the_streams_here_a_replacement_does_not(
    cluster: Any, sse: Any, api_ws: Any
) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    far = await sse(b, "/chat/subscribe", key, clientId="w1")
    near = await sse(a, "/chat/subscribe", key, clientId="w1")
    for stream in (far, near):
        assert (await stream.event()).name == "connected"
    socket = await api_ws(b, key, clientId="w1")
    await socket.send({"type": "subscribe", "channel": "chat-events", "requestId": "s"})
    await socket.recv_until("subscribed")

    # the same host reconnects through the other instance: it replaces the socket on `a`, and
    # the streams on both instances carry on with its events
    again = await b.world("w1")
    assert await world.wait_closed() == 1000
    await eventually(lambda: a.state.registry.get("w1") is not None)
    await again.emit(chat_event("after"))
    for stream in (far, near):
        assert (await stream.event()).data["id"] == "after"
    assert (await socket.recv_until("chat-event"))["data"]["id"] == "after"

    # and back to `a` (the replaced socket was on `b`, where the streams are)
    third = await a.world("w1")
    assert await again.wait_closed() == 1000
    await eventually(lambda: getattr(b.state.registry.get("w1"), "instance_id", None) == "relay-0")
    await third.emit(chat_event("third"))
    for stream in (far, near):
        assert (await stream.event()).data["id"] == "third"

    # it disconnects from `a`: the stream on `b` ends after what was sent, as on one process
    await third.emit(chat_event("last"))
    await third.close()
    assert (await far.event()).data["id"] == "last"
    assert await far.ended() == b""
    assert await near.ended(timeout=5.0) is not None  # ends too (its "last" may be cut: see
    # the report; the holding instance ends its streams before its event log numbered "last")
    await eventually(lambda: b.state.streams.hub.count("w1", "chat-events") == 1)  # the socket

    # the /ws/api subscription stays and resumes when the world comes back (anywhere)
    back = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    await back.emit(chat_event("back"))
    got = [(await socket.recv_until("chat-event"))["data"]["id"] for _ in range(3)]
    assert got == ["third", "last", "back"]


async def test_a_remote_world_whose_instance_is_reaped_ends_the_streams_here(
    cluster: Any, sse: Any
) -> None:
    a, b = await cluster(2, heartbeat_ttl=1.0)
    await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    stream = await sse(b, "/chat/subscribe", b.key(), clientId="w1")
    assert (await stream.event()).name == "connected"
    # `a` stops beating (as a killed process would) but keeps its socket: `b` reaps it
    directory = a.state.registry
    for task in directory._tasks:
        task.cancel()
    await asyncio.gather(*directory._tasks, return_exceptions=True)
    assert await stream.ended(timeout=5.0) == b""
    assert b.state.registry.get("w1") is None
