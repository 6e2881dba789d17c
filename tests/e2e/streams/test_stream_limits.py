"""Stream slots are counted per API key: a player-bound key that takes every slot of a channel
(issue 9, a "Low" fault) no longer locks the game master out, on SSE nor on /ws/api."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import eventually

from vttrelay import protocol
from vttrelay.relay.events.ws_frames import TOO_MANY_SUBSCRIPTIONS

USERS = [
    {"id": "gm", "name": "Gamemaster", "role": 4},
    {"id": "alice", "name": "Alice", "role": 1},
]
TOO_MANY_SSE = b'event: error\ndata: {"error":"Too many SSE connections"}\n\n'


async def _relay_with_keys(relay_factory: Any) -> tuple[Any, Any, str, str]:
    relay = await relay_factory(max_streams_per_channel=2)
    world = await relay.world()
    await world.emit({"type": "player-list", "users": USERS})
    await eventually(lambda: bool(relay.state.registry.get("world-1").users))
    return relay, world, relay.key(user_id="alice"), relay.key()


async def test_sse_slots_are_per_key(relay_factory: Any, sse: Any, sub_counts: Any) -> None:
    relay, world, player, gm = await _relay_with_keys(relay_factory)
    for _ in range(2):
        taken = await sse(relay, "/chat/subscribe", player, clientId="world-1")
        assert (await taken.event()).name == "connected"
    over = await sse(relay, "/chat/subscribe", player, clientId="world-1")
    assert await over.frame() == TOO_MANY_SSE  # the player's own limit holds
    assert await over.ended() == b""
    mine = await sse(relay, "/chat/subscribe", gm, clientId="world-1")
    assert (await mine.event()).name == "connected"  # the game master still gets in
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL)[-1:] == [3])
    await world.emit(
        {
            "type": "chat-event",
            "data": {"eventType": "create", "data": {"id": "m1", "content": "hi", "whisper": []}},
        }
    )
    assert (await mine.event()).data["id"] == "m1"


async def test_ws_slots_are_per_key(relay_factory: Any, api_ws: Any) -> None:
    relay, _world, player, gm = await _relay_with_keys(relay_factory)
    subscribe = {"type": "subscribe", "channel": "chat-events", "requestId": "s"}
    for _ in range(2):
        taken = await api_ws(relay, player)
        await taken.send(subscribe)
        assert (await taken.recv())["type"] == "subscribed"
    over = await api_ws(relay, player)
    await over.send(subscribe)
    assert await over.recv() == {
        "channel": "chat-events",
        "error": TOO_MANY_SUBSCRIPTIONS,
        "requestId": "s",
        "status": 429,
        "type": "error",
    }
    mine = await api_ws(relay, gm)
    await mine.send(subscribe)
    assert (await mine.recv())["type"] == "subscribed"
    assert relay.state.streams.hub.count("world-1", protocol.CHAT_CHANNEL, "ws") == 3
