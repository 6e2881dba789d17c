"""No lost events across a reconnect: a channel stays on for `subscription_linger` seconds after
its last subscriber leaves, so a client that comes back with Last-Event-ID gets what the world
emitted meanwhile; after the grace period the world is told 0 and stops.

The world double here behaves like the real module: it emits a channel's events only while the
last count the relay sent it for that channel is above 0.
"""

from __future__ import annotations

from typing import Any

from tests.support.e2e import eventually

from vttrelay import protocol

CHAT = protocol.CHAT_CHANNEL


def chat_event(message_id: str) -> dict[str, Any]:
    message = {"id": message_id, "content": message_id, "speaker": {}, "whisper": [], "flags": {}}
    return {"type": "chat-event", "data": {"eventType": "create", "data": message}}


class GatedWorld:
    """A world double that emits only on channels switched on by the relay."""

    def __init__(self, double: Any) -> None:
        self.double = double

    def count(self, channel: str) -> int:
        told = [
            f["count"]
            for f in self.double.received
            if f.get("type") == protocol.SUBSCRIPTION_UPDATE and f.get("channel") == channel
        ]
        return told[-1] if told else 0

    async def emit(self, frame: dict[str, Any]) -> bool:
        """Send an event frame if its channel is on; whether it was sent."""
        if self.count(protocol.EVENT_FRAME_CHANNEL[frame["type"]]) <= 0:
            return False
        await self.double.emit(frame)
        return True


async def test_sse_reconnect_within_the_grace_period_gets_every_event(
    relay: Any, sse: Any, sub_counts: Any
) -> None:
    double = await relay.world()
    world = GatedWorld(double)
    hub = relay.state.streams.hub
    hub.settings.sweep_interval = 0.05
    assert hub.settings.subscription_linger == 30.0  # the default grace period
    key = relay.key()

    first = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    assert (await first.event()).id == "0"
    await eventually(lambda: world.count(CHAT) == 1)
    first.close()  # the client drops its connection
    await eventually(lambda: hub.count("world-1", CHAT) == 0)
    assert hub.lingering("world-1", CHAT)
    for i in (1, 2, 3):  # the world still sees count 1: it emits
        assert await world.emit(chat_event(f"m{i}"))
    await eventually(lambda: hub.events.last_id("world-1", CHAT) == 3)

    back = await sse(
        relay, "/chat/subscribe", key, headers={"Last-Event-ID": "0"}, clientId="world-1"
    )
    assert (await back.event()).name == "connected"
    replayed = await back.events(3)
    assert [(e.name, e.id, e.data["id"]) for e in replayed] == [
        ("chat-create", "1", "m1"),
        ("chat-create", "2", "m2"),
        ("chat-create", "3", "m3"),
    ]
    assert not hub.lingering("world-1", CHAT)

    # Gone for longer than the grace period: the world is told 0 and stops emitting.
    hub.settings.subscription_linger = 0.2
    back.close()
    await eventually(lambda: sub_counts(double, CHAT) == [1, 0])  # never 0 in between
    assert not await world.emit(chat_event("m4"))
    late = await sse(
        relay, "/chat/subscribe", key, headers={"Last-Event-ID": "3"}, clientId="world-1"
    )
    assert (await late.event()).id == "3"
    assert await late.nothing_more(0.1)
    await eventually(lambda: sub_counts(double, CHAT) == [1, 0, 1])
    assert hub.events.last_id("world-1", CHAT) == 3


async def test_ws_resubscribe_within_the_grace_period_gets_every_event(
    relay: Any, api_ws: Any, sub_counts: Any
) -> None:
    double = await relay.world()
    world = GatedWorld(double)
    hub = relay.state.streams.hub
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "subscribe", "channel": "scene-events"})
    assert (await socket.recv())["lastEventId"] == 0
    await eventually(lambda: world.count(protocol.SCENE_CHANNEL) == 1)
    await socket.close()
    await eventually(lambda: hub.count("world-1", protocol.SCENE_CHANNEL) == 0)
    for scene in ("s1", "s2"):
        frame = {"type": "scene-event", "data": {"eventType": "scene-activate", "sceneId": scene}}
        assert await world.emit(frame)
    await eventually(lambda: hub.events.last_id("world-1", protocol.SCENE_CHANNEL) == 2)

    again = await api_ws(relay, relay.key())
    await again.send({"type": "subscribe", "channel": "scene-events", "lastEventId": 0})
    assert await again.recv() == {
        "type": "subscribed",
        "channel": "scene-events",
        "lastEventId": 0,
        "requestId": "",
    }
    replayed = [await again.recv(), await again.recv()]
    assert [(f["id"], f["data"]["sceneId"]) for f in replayed] == [(1, "s1"), (2, "s2")]
    await again.send({"type": "ping"})
    assert await again.recv() == {"type": "pong", "requestId": ""}
    assert sub_counts(double, protocol.SCENE_CHANNEL) == [1]
