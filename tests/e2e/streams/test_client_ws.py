"""/ws/api over real sockets: auth, requests by action name, scopes, subscriptions, events."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from tests.support.e2e import eventually

from vttrelay import protocol
from vttrelay.relay.events.ws_api import MAX_IN_FLIGHT
from vttrelay.relay.events.ws_frames import TOO_MANY_IN_FLIGHT


def chat_event(kind: str, message_id: str, **msg: Any) -> dict[str, Any]:
    data = {"id": message_id, "speaker": {}, "whisper": [], "flags": {}, **msg}
    return {"type": "chat-event", "data": {"eventType": kind, "data": data}}


async def test_auth_and_connected(relay: Any, api_ws: Any) -> None:
    await relay.world()
    socket = await api_ws(relay, relay.key())
    hello = socket.hello
    assert hello["type"] == "connected"
    assert hello["clientId"] == "world-1"
    assert hello["eventChannels"] == list(protocol.CHANNELS)
    assert "skill-check" in hello["supportedTypes"] and "subscribe" in hello["supportedTypes"]
    await socket.send({"type": "ping", "requestId": "p1"})
    assert await socket.recv() == {"type": "pong", "requestId": "p1"}


async def test_auth_failures_close_the_socket(relay: Any, api_ws: Any) -> None:
    await relay.world()
    await relay.world("world-2")
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"key": "wrong"}, 4002, "Invalid API key"),
        ({"key": None}, 4002, "Invalid auth message"),
        ({"key": relay.key(), "clientId": "ghost"}, 4002, "Invalid clientId"),
        ({"key": relay.key()}, 4002, "Multiple clients connected. Please specify clientId."),
        (
            {"key": relay.key(client_ids=["world-2"]), "clientId": "world-1"},
            4002,
            "API key is not authorized for this client",
        ),
    ]
    for auth, code, message in cases:
        key = auth.pop("key")
        socket = await api_ws(relay, key, hello=False, **auth)
        assert await socket.recv() == {"type": "error", "error": message}
        msg = await socket.ws.receive(timeout=5)
        assert msg.type == aiohttp.WSMsgType.CLOSE
        assert socket.ws.close_code == code
    bound = await api_ws(relay, relay.key(client_ids=["world-2"]))
    assert bound.hello["clientId"] == "world-2"


async def test_requests_by_action_name(relay: Any, api_ws: Any) -> None:
    world = await relay.world()
    socket = await api_ws(relay, relay.key())
    await socket.send(
        {"type": "skill-check", "requestId": "mine-1", "actorUuid": "Actor.a", "skill": "prc"}
    )
    reply = await socket.recv()
    assert reply["type"] == "skill-check-result"
    assert reply["requestId"] == "mine-1"
    assert reply["clientId"] == "world-1"
    forwarded = reply["data"]["echo"]
    assert forwarded["requestId"] != "mine-1"  # the relay's own unique id went to the world
    assert forwarded["skill"] == "prc" and forwarded["createChatMessage"] is True
    assert "clientId" not in forwarded and forwarded["_scopes"]
    assert world.received[-1] == forwarded
    # GET-style parameters come from the frame too, defaults applied
    await socket.send({"type": "chat-messages", "requestId": "mine-2", "chatType": "1"})
    echo = (await socket.recv())["data"]["echo"]
    assert (echo["chatType"], echo["limit"], echo["offset"]) == (1, 10, 0)


async def test_request_errors(relay: Any, api_ws: Any) -> None:
    async def slow(frame: dict[str, Any]) -> dict[str, Any]:
        if frame["type"] == "world-info":
            await asyncio.sleep(10)
        return {"type": frame["type"] + "-result", "requestId": frame["requestId"], "error": "no"}

    await relay.world(handler=slow)
    relay.config.timeout_override = 0.2
    socket = await api_ws(relay, relay.key(scopes=["dnd5e", "world:info", "events:subscribe"]))

    async def ask(frame: dict[str, Any]) -> dict[str, Any]:
        await socket.send(frame)
        answer: dict[str, Any] = await socket.recv()
        return answer

    assert await ask({"type": "chat-send", "requestId": "a", "content": "hi"}) == {
        "type": "chat-send-result",
        "requestId": "a",
        "clientId": "world-1",
        "error": "API key lacks required scope: chat:write",
        "status": 403,
    }
    missing = await ask({"type": "skill-check", "requestId": "b", "actorUuid": "Actor.a"})
    assert (missing["error"], missing["status"]) == ("'skill' is required", 400)
    # the world's own error reply comes back as it is, with the caller's id
    refused = await ask({"type": "death-save", "requestId": "c", "actorUuid": "Actor.a"})
    assert refused == {
        "type": "death-save-result",
        "requestId": "c",
        "error": "no",
        "clientId": "world-1",
    }
    timed_out = await ask({"type": "world-info", "requestId": "d"})
    assert (timed_out["error"], timed_out["status"]) == ("Request timed out", 408)
    unknown = await ask({"type": "nope", "requestId": "e"})
    assert unknown == {"type": "error", "requestId": "e", "error": 'Unknown message type: "nope"'}
    await socket.ws.send_str("not json")
    assert await socket.recv() == {"type": "error", "error": "Invalid JSON"}


async def test_subscriptions_events_and_counts(
    relay: Any, api_ws: Any, sse: Any, sub_counts: Any
) -> None:
    world = await relay.world()
    relay.state.streams.hub.settings.subscription_linger = 0.1  # the world hears 0 soon after
    key = relay.key()
    socket = await api_ws(relay, key)
    await socket.send({"type": "subscribe", "channel": "chat-events", "requestId": "s1"})
    assert await socket.recv() == {
        "type": "subscribed",
        "channel": "chat-events",
        "lastEventId": 0,
        "requestId": "s1",
    }
    await socket.send({"type": "subscribe", "channel": "combat-events", "encounterId": "e1"})
    assert (await socket.recv())["type"] == "subscribed"
    stream = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    await stream.event()
    # SSE and /ws/api subscribers are counted together
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1, 2])
    await eventually(lambda: sub_counts(world, protocol.COMBAT_CHANNEL) == [1])

    await world.emit(chat_event("create", "m1", content="hello"))
    await world.emit({"type": "combat-event", "data": {"eventType": "turn", "encounterId": "e2"}})
    await world.emit({"type": "combat-event", "data": {"eventType": "turn", "encounterId": "e1"}})
    assert await socket.recv() == {
        "type": "chat-event",
        "event": "chat-create",
        "id": 1,
        "data": {"id": "m1", "speaker": {}, "whisper": [], "flags": {}, "content": "hello"},
    }
    assert await socket.recv() == {
        "type": "combat-event",
        "event": "combat-turn",
        "id": 2,
        "data": {"eventType": "turn", "encounterId": "e1"},
    }
    assert (await stream.event()).data["id"] == "m1"

    await socket.send({"type": "unsubscribe", "channel": "chat-events"})
    assert await socket.recv() == {
        "type": "unsubscribed",
        "channel": "chat-events",
        "removed": 1,
        "requestId": "",
    }
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1, 2, 1])
    await world.emit(chat_event("create", "m2"))
    assert (await stream.event()).data["id"] == "m2"
    await socket.send({"type": "ping"})
    assert await socket.recv() == {"type": "pong", "requestId": ""}  # m2 did not come here

    await socket.close()
    await eventually(lambda: sub_counts(world, protocol.COMBAT_CHANNEL) == [1, 0])


async def test_subscription_errors_and_replay(relay: Any, api_ws: Any) -> None:
    world = await relay.world()
    no_events = await api_ws(relay, relay.key(scopes=["chat:read"]))
    await no_events.send({"type": "subscribe", "channel": "chat-events"})
    assert await no_events.recv() == {
        "type": "error",
        "channel": "chat-events",
        "error": "API key lacks required scope: events:subscribe",
        "requestId": "",
        "status": 403,
    }
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "subscribe", "channel": "gossip"})
    assert (await socket.recv())["error"].startswith('Invalid channel: "gossip". Supported: ')
    await socket.send({"type": "subscribe", "channel": "chat-events", "userId": "nobody"})
    assert (await socket.recv())["error"] == "User not found: nobody"

    for i in range(3):
        await world.emit(chat_event("create", f"m{i}"))
    await eventually(lambda: relay.state.streams.hub.events.last_id("world-1", "chat-events") == 3)
    await socket.send({"type": "subscribe", "channel": "chat-events", "lastEventId": 1})
    assert await socket.recv() == {
        "type": "subscribed",
        "channel": "chat-events",
        "lastEventId": 1,
        "requestId": "",
    }
    replayed = [await socket.recv(), await socket.recv()]
    assert [(f["id"], f["data"]["id"]) for f in replayed] == [(2, "m1"), (3, "m2")]


async def test_world_reconnect_keeps_ws_subscriptions(relay: Any, api_ws: Any) -> None:
    world = await relay.world()
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "subscribe", "channel": "scene-events"})
    await socket.recv()
    await world.close()
    await eventually(lambda: relay.state.registry.get("world-1") is None)
    await socket.send({"type": "world-info", "requestId": "x"})
    gone = await socket.recv()
    assert (gone["error"], gone["status"]) == ("Foundry client is no longer connected", 404)
    back = await relay.world()
    await eventually(
        lambda: (
            {"type": "event-subscription-update", "channel": "scene-events", "count": 1}
            in back.received
        )
    )
    await back.emit(
        {"type": "scene-event", "data": {"eventType": "scene-activate", "sceneId": "s"}}
    )
    assert (await socket.recv())["event"] == "scene-scene-activate"


async def test_slow_socket_is_cut_off(relay_factory: Any, api_ws: Any) -> None:
    relay = await relay_factory(subscriber_queue_size=3)
    world = await relay.world()
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "subscribe", "channel": "hooks"})
    await socket.recv()
    await eventually(lambda: relay.state.streams.hub.count("world-1", "hooks") == 1)
    # stop the relay's writer from making progress by never reading and sending a lot
    big = ["y" * 50_000]
    for _ in range(300):
        await world.emit({"type": "hook-event", "data": {"hook": "updateActor", "args": big}})
        if relay.state.streams.hub.count("world-1", "hooks") == 0:
            break
        await asyncio.sleep(0.002)
    await eventually(lambda: relay.state.streams.hub.count("world-1", "hooks") == 0)
    frames = []
    while True:
        msg = await socket.ws.receive(timeout=10)
        if msg.type != aiohttp.WSMsgType.TEXT:
            break
        frames.append(msg.json())
    assert frames[-1]["type"] == "error" and "fell behind" in frames[-1]["error"]
    assert socket.ws.close_code == 1013


async def test_relay_shutdown_ends_sockets_and_streams(
    relay_factory: Any, api_ws: Any, sse: Any
) -> None:
    relay = await relay_factory()
    await relay.world()
    key = relay.key()
    socket = await api_ws(relay, key)
    await socket.send({"type": "subscribe", "channel": "chat-events"})
    await socket.recv()
    stream = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    await stream.event()
    started = asyncio.get_running_loop().time()
    await relay.runner.cleanup()  # its shutdown_timeout is 2 s: nothing may hold it that long
    assert asyncio.get_running_loop().time() - started < 1.5
    msg = await socket.ws.receive(timeout=5)
    assert (msg.type, msg.data, msg.extra) == (
        aiohttp.WSMsgType.CLOSE,
        1001,
        "Server shutting down",
    )
    assert await stream.ended() == b""


async def test_a_revoked_key_stops_working_on_an_open_socket(relay: Any, api_ws: Any) -> None:
    await relay.world()
    key_id, secret = relay.store.create_key("default", ["world:info"])
    socket = await api_ws(relay, secret)
    await socket.send({"type": "world-info", "requestId": "1"})
    assert "error" not in await socket.recv()
    relay.store.revoke_key(key_id)
    relay.state.keys.clear()  # the key cache would forget it within seconds anyway
    await socket.send({"type": "world-info", "requestId": "2"})
    refused = await socket.recv()
    assert (refused["error"], refused["status"]) == ("API key is disabled", 401)


async def test_requests_in_flight_per_socket_are_limited(relay: Any, api_ws: Any) -> None:
    gate = asyncio.Event()

    async def held(frame: dict[str, Any]) -> dict[str, Any]:
        await gate.wait()
        return {"type": "world-info-result", "requestId": frame["requestId"], "data": {"ok": 1}}

    world = await relay.world(handler=held)
    key = relay.key(rate_per_minute=0)
    socket = await api_ws(relay, key)
    for i in range(MAX_IN_FLIGHT):
        await socket.send({"type": "world-info", "requestId": f"r{i}"})
    await eventually(lambda: world.requests.qsize() == MAX_IN_FLIGHT)

    # one more is refused at once, with the caller's requestId, and never reaches the world
    await socket.send({"type": "world-info", "requestId": "one-too-many"})
    assert await socket.recv() == {
        "type": "world-info-result",
        "requestId": "one-too-many",
        "clientId": "world-1",
        "error": TOO_MANY_IN_FLIGHT,
        "status": 429,
    }
    assert TOO_MANY_IN_FLIGHT == "Too many concurrent requests; try again shortly"
    await socket.send({"type": "ping"})  # control frames are not requests
    assert await socket.recv() == {"type": "pong", "requestId": ""}
    other = await api_ws(relay, key)  # the limit is per socket
    await other.send({"type": "world-info", "requestId": "elsewhere"})
    await eventually(lambda: world.requests.qsize() == MAX_IN_FLIGHT + 1)

    gate.set()
    answered = [await socket.recv() for _ in range(MAX_IN_FLIGHT)]
    assert sorted(a["requestId"] for a in answered) == sorted(f"r{i}" for i in range(MAX_IN_FLIGHT))
    assert all(a["data"] == {"ok": 1} and "error" not in a for a in answered)
    assert (await other.recv())["requestId"] == "elsewhere"
    await socket.send({"type": "world-info", "requestId": "after"})  # room again
    assert await socket.recv() == {
        "type": "world-info-result",
        "requestId": "after",
        "data": {"ok": 1},
        "clientId": "world-1",
    }
    assert world.requests.qsize() == MAX_IN_FLIGHT + 2  # the refused one was never forwarded


async def test_a_revoked_key_ends_the_sockets_subscriptions(relay: Any, api_ws: Any) -> None:
    """As an SSE stream ends when its key stops working, so does a /ws/api subscription: the
    socket gets the reason and is closed (1008)."""
    hub = relay.state.streams.hub
    hub.settings.sweep_interval = hub.settings.key_check_interval = 0.05
    world = await relay.world()
    key_id, secret = relay.store.create_key("default", ["events:subscribe"])
    socket = await api_ws(relay, secret)
    await socket.send({"type": "subscribe", "channel": "chat-events", "requestId": "s"})
    assert (await socket.recv())["type"] == "subscribed"
    relay.store.revoke_key(key_id)
    relay.state.keys.clear()
    assert await socket.recv() == {"type": "error", "error": "API key is disabled"}
    msg = await socket.ws.receive(timeout=5)
    assert (msg.type, socket.ws.close_code) == (aiohttp.WSMsgType.CLOSE, 1008)
    assert hub.subscribers("world-1") == []
    await world.emit(chat_event("create", "late"))  # logged, delivered to nobody
    await eventually(lambda: hub.events.last_id("world-1", protocol.CHAT_CHANNEL) == 1)
