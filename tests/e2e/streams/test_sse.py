"""The six SSE routes over real sockets: a real relay, a world double emitting events, HTTP
clients reading the raw stream."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import orjson
import pytest
from tests.support.e2e import eventually

from vttrelay import protocol
from vttrelay.relay.events.subscriber import FELL_BEHIND
from vttrelay.relay.forward import CORS_HEADERS

CHANNEL_OF = {
    "/chat/subscribe": protocol.CHAT_CHANNEL,
    "/rolls/subscribe": protocol.ROLL_CHANNEL,
    "/hooks/subscribe": protocol.HOOK_CHANNEL,
    "/encounters/subscribe": protocol.COMBAT_CHANNEL,
    "/actor/subscribe": protocol.ACTOR_CHANNEL,
    "/scene/subscribe": protocol.SCENE_CHANNEL,
}

MSG = (
    '{"id":"m1","uuid":"ChatMessage.m1","content":"Hello <b>there</b>","speaker":{"scene":null,'
    '"actor":null,"token":null},"timestamp":1782956936093,"whisper":[],"type":"base","author":'
    '{"id":"gm","name":"Gamemaster"},"flavor":"","isRoll":false,"rolls":[],"flags":{}}'
)
ROLL = (
    '{"id":"r1","messageId":"m9","user":{"id":"alice","name":"Alice"},"speaker":{"alias":"Bree"},'
    '"flavor":"Perception","rollTotal":14,"formula":"1d20 + 3","isCritical":false,'
    '"isFumble":false,"dice":[{"faces":20,"results":[{"result":11,"active":true}]}],'
    '"timestamp":1782956936093}'
)
HOOK = '{"hook":"createActor","args":[{"_id":"a1","name":"Bree","type":"character"}]}'
COMBAT = (
    '{"eventType":"start","encounterId":"e1","round":1,"turn":0,"started":true,"combatants":'
    '[{"id":"c1","name":"Bree","initiative":17,"defeated":false,"uuid":"Actor.a1"}]}'
)
ACTOR = (
    '{"actorUuid":"Actor.a1","eventType":"update",'
    '"changes":{"system":{"attributes":{"hp":{"value":7}}}}}'
)
SCENE = '{"sceneId":"s1","eventType":"token-create","token":{"_id":"t1","name":"Bree","x":100}}'

# path, frame the world sends, the event frame the subscriber gets (byte for byte)
SIX = [
    (
        "/chat/subscribe",
        '{"type":"chat-event","data":{"eventType":"create","data":' + MSG + "}}",
        "id: 1\nevent: chat-create\ndata: " + MSG + "\n\n",
    ),
    (
        "/rolls/subscribe",
        '{"type":"roll-data","data":' + ROLL + "}",
        "id: 1\nevent: roll\ndata: " + ROLL + "\n\n",
    ),
    (
        "/hooks/subscribe",
        '{"type":"hook-event","data":' + HOOK + "}",
        "id: 1\nevent: createActor\ndata: " + HOOK + "\n\n",
    ),
    (
        "/encounters/subscribe",
        '{"type":"combat-event","data":' + COMBAT + "}",
        "id: 1\nevent: combat-start\ndata: " + COMBAT + "\n\n",
    ),
    (
        "/actor/subscribe",
        '{"type":"actor-event","data":' + ACTOR + "}",
        "id: 1\nevent: actor-update\ndata: " + ACTOR + "\n\n",
    ),
    (
        "/scene/subscribe",
        '{"type":"scene-event","data":' + SCENE + "}",
        "id: 1\nevent: scene-token-create\ndata: " + SCENE + "\n\n",
    ),
]

USERS = [
    {"id": "gm", "name": "Gamemaster", "role": 4, "active": True},
    {"id": "alice", "name": "Alice", "role": 1, "active": True},
    {"id": "bob", "name": "Bob", "role": 1, "active": False},
]


def chat_event(kind: str, **msg: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "speaker": {"scene": None, "actor": None, "token": None},
        "whisper": [],
        "author": {"id": "gm", "name": "Gamemaster"},
        "isRoll": False,
        "flags": {},
    }
    base.update(msg)
    return {"type": "chat-event", "data": {"eventType": kind, "data": base}}


async def with_users(relay: Any, world: Any) -> None:
    await world.emit({"type": "player-list", "users": USERS})
    await eventually(lambda: bool(relay.state.registry.get(world.client_id).users))


@pytest.mark.parametrize(("path", "sent", "expected"), SIX, ids=[p for p, _, _ in SIX])
async def test_each_stream_byte_for_byte(
    relay: Any, sse: Any, sub_counts: Any, path: str, sent: str, expected: str
) -> None:
    world = await relay.world()
    stream = await sse(relay, path, relay.key(), clientId="world-1")
    assert stream.status == 200
    assert stream.headers["Content-Type"] == "text/event-stream"
    assert stream.headers["Cache-Control"] == "no-cache"
    assert stream.headers["Connection"] == "keep-alive"
    assert all(stream.headers[name] == value for name, value in CORS_HEADERS.items())
    connected = (
        '{"actorUuid":"","clientId":"world-1"}'
        if path == "/actor/subscribe"
        else '{"clientId":"world-1"}'
    )
    assert await stream.frame() == f"id: 0\nevent: connected\ndata: {connected}\n\n".encode()
    channel = CHANNEL_OF[path]
    await eventually(lambda: sub_counts(world, channel) == [1])
    await world.emit_raw(sent)
    assert await stream.frame() == expected.encode()


async def test_connect_errors(relay: Any, sse: Any) -> None:
    await relay.world()
    await relay.world("world-2", account="other")
    key = relay.key()

    async def status_and_body(path: str, key: str | None, **query: Any) -> tuple[int, Any]:
        stream = await sse(relay, path, key, **query)
        body = await stream.ended()
        return stream.status, orjson.loads(body)

    assert await status_and_body("/chat/subscribe", None, clientId="world-1") == (
        401,
        {"error": "API key is required"},
    )
    assert await status_and_body("/chat/subscribe", "nope", clientId="world-1") == (
        401,
        {"error": "Invalid API key"},
    )
    no_scope = relay.key(scopes=["chat:read"])
    assert await status_and_body("/hooks/subscribe", no_scope, clientId="world-1") == (
        403,
        {"error": "API key lacks required scope: events:subscribe"},
    )
    await relay.world("world-3")  # without clientId, a stream finds its world as REST does
    assert await status_and_body("/chat/subscribe", key) == (
        400,
        {
            "error": "Multiple clients connected. Please specify clientId.",
            "connectedClients": ["world-1", "world-3"],
        },
    )
    assert await status_and_body("/chat/subscribe", key, clientId="ghost") == (
        404,
        {"error": "Invalid client ID"},
    )
    status, body = await status_and_body("/chat/subscribe", key, clientId="world-2")
    assert status in (401, 403, 404) and "error" in body
    only_two = relay.key(client_ids=["world-2"])
    assert await status_and_body("/chat/subscribe", only_two, clientId="world-1") == (
        403,
        {"error": "API key is not authorized for this client"},
    )
    assert await status_and_body("/chat/subscribe", key, clientId="world-1", userId="zed") == (
        400,
        {"error": "User not found: zed"},
    )
    assert await status_and_body("/chat/subscribe", key, clientId="world-1", type="x") == (
        400,
        {"error": "'type' must be a valid number"},
    )
    assert await status_and_body("/chat/subscribe", key, clientId="world-1", type="7") == (
        400,
        {"error": "'type' must be a chat type from 0 to 4"},
    )
    assert relay.state.streams.hub.subscribers() == []


async def test_chat_filters(relay: Any, sse: Any, sub_counts: Any) -> None:
    world = await relay.world()
    await with_users(relay, world)
    key = relay.key()
    filters: dict[str, dict[str, Any]] = {
        "all": {},
        "alias": {"speaker": "Bree"},
        "actor": {"speaker": "a1"},
        "whispers": {"type": 3},
        "emotes": {"type": 2},
        "whisperOnly": {"whisperOnly": "true"},
        "bob": {"userId": "bob"},
        "alice": {"userId": "ALICE"},
        "gm": {"userId": "Gamemaster"},
    }
    streams = {}
    for name, query in filters.items():
        streams[name] = await sse(relay, "/chat/subscribe", key, clientId="world-1", **query)
        assert (await streams[name].event()).name == "connected"
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL)[-1:] == [9])

    bree = {"scene": None, "actor": "a1", "token": None, "alias": "Bree"}
    sent = [
        chat_event("create", id="ooc", content="hi"),
        chat_event("create", id="ic", speaker=bree, content="I search"),
        chat_event("create", id="secret", whisper=["alice"], content="psst"),
        chat_event("create", id="roll", isRoll=True, flags={"vttrelay": {"chatType": 4}}),
        chat_event(
            "create",
            id="emote",
            author={"id": "bob", "name": "Bob"},
            flags={"vttrelay": {"chatType": 2}},
        ),
        chat_event("update", id="ic", speaker=bree, content="I search again"),
        chat_event("delete", id="secret"),
        chat_event("delete", id="never-seen"),
    ]
    for frame in sent:
        await world.emit(frame)
    await world.emit(chat_event("create", id="end"))  # a marker every unfiltered stream gets

    expected = {
        "all": [
            "chat-create ooc",
            "chat-create ic",
            "chat-create secret",
            "chat-create roll",
            "chat-create emote",
            "chat-update ic",
            "chat-delete secret",
            "chat-delete never-seen",
        ],
        "alias": ["chat-create ic", "chat-update ic"],
        "actor": ["chat-create ic", "chat-update ic"],
        "whispers": ["chat-create secret", "chat-delete secret"],
        "emotes": ["chat-create emote"],
        "whisperOnly": ["chat-create secret", "chat-delete secret"],
        "bob": [
            "chat-create ooc",
            "chat-create ic",
            "chat-create roll",
            "chat-create emote",
            "chat-update ic",
            "chat-delete never-seen",
        ],
        "alice": [
            "chat-create ooc",
            "chat-create ic",
            "chat-create secret",
            "chat-create roll",
            "chat-create emote",
            "chat-update ic",
            "chat-delete secret",
            "chat-delete never-seen",
        ],
    }
    expected["gm"] = expected["all"]
    for name, stream in streams.items():
        gets_marker = not filters[name] or "userId" in filters[name]
        received = await stream.events(len(expected[name]) + gets_marker)
        got = [f"{e.name} {e.data['id']}" for e in received]
        if gets_marker:
            assert got.pop() == "chat-create end", name
        assert got == expected[name], name
        assert await stream.nothing_more(0.05), name
        if name == "whisperOnly":  # the data is the bare message; a delete is {"id": ...}
            assert received[0].data == sent[2]["data"]["data"]
            assert received[1].data == {"id": "secret"}


async def test_filters_of_the_other_streams(relay: Any, sse: Any, sub_counts: Any) -> None:
    world = await relay.world()
    await with_users(relay, world)
    key = relay.key()
    opened = {
        "rolls": await sse(relay, "/rolls/subscribe", key, clientId="world-1", userId="alice"),
        "hooks": await sse(
            relay, "/hooks/subscribe", key, clientId="world-1", hooks="createActor,deleteActor"
        ),
        "combat": await sse(
            relay, "/encounters/subscribe", key, clientId="world-1", encounterId="e1"
        ),
        "actor": await sse(
            relay, "/actor/subscribe", key, clientId="world-1", actorUuid="Actor.a1"
        ),
        "scene": await sse(relay, "/scene/subscribe", key, clientId="world-1", sceneId="s1"),
    }
    hello = await opened["actor"].event()
    assert hello.data == {"actorUuid": "Actor.a1", "clientId": "world-1"}
    for name, stream in opened.items():
        if name != "actor":
            assert (await stream.event()).name == "connected"
    others = [c for c in CHANNEL_OF.values() if c != protocol.CHAT_CHANNEL]
    await eventually(lambda: all(sub_counts(world, c) == [1] for c in others))

    frames = [
        {"type": "roll-data", "data": {"id": "r-bob", "user": {"id": "bob", "name": "Bob"}}},
        {"type": "roll-data", "data": {"id": "r-alice", "user": {"id": "alice", "name": "A"}}},
        {"type": "hook-event", "data": {"hook": "updateActor", "args": []}},
        {"type": "hook-event", "data": {"hook": "deleteActor", "args": ["a1"]}},
        {"type": "combat-event", "data": {"eventType": "turn", "encounterId": "e2"}},
        {"type": "combat-event", "data": {"eventType": "end", "encounterId": "e1", "round": 3}},
        {"type": "actor-event", "data": {"eventType": "update", "actorUuid": "Actor.zz"}},
        {"type": "actor-event", "data": {"eventType": "item-add", "actorUuid": "Actor.a1"}},
        {"type": "scene-event", "data": {"eventType": "wall-create", "sceneId": "s2"}},
        {"type": "scene-event", "data": {"eventType": "scene-activate", "sceneId": "s1"}},
    ]
    for frame in frames:
        await world.emit(frame)
    expectations = {
        "rolls": ("roll", {"id": "r-alice", "user": {"id": "alice", "name": "A"}}, "2"),
        "hooks": ("deleteActor", {"hook": "deleteActor", "args": ["a1"]}, "2"),
        "combat": ("combat-end", {"eventType": "end", "encounterId": "e1", "round": 3}, "2"),
        "actor": ("actor-item-add", {"eventType": "item-add", "actorUuid": "Actor.a1"}, "2"),
        "scene": ("scene-scene-activate", {"eventType": "scene-activate", "sceneId": "s1"}, "2"),
    }
    for name, (event_name, data, event_id) in expectations.items():
        event = await opened[name].event()
        assert (event.name, event.data, event.id) == (event_name, data, event_id), name
        assert await opened[name].nothing_more(0.1), name


async def test_counting_across_sse_and_reannouncement_on_reconnect(
    relay: Any, sse: Any, sub_counts: Any
) -> None:
    world = await relay.world()
    relay.state.streams.hub.settings.sweep_interval = 0.05
    key = relay.key()
    a = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    b = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    r = await sse(relay, "/rolls/subscribe", key, clientId="world-1")
    for stream in (a, b, r):
        await stream.event()
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1, 2])
    assert sub_counts(world, protocol.ROLL_CHANNEL) == [1]
    assert sub_counts(world, protocol.HOOK_CHANNEL) == []  # never asked for unwatched events
    a.close()
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1, 2, 1])

    # The same world reconnects from the same host: it replaces the old socket, gets the live
    # counts once per channel, and the open streams carry on with its events.
    again = await relay.world()
    await world.wait_closed()
    await eventually(
        lambda: (
            sorted(
                (f["channel"], f["count"])
                for f in again.received
                if f.get("type") == "event-subscription-update"
            )
            == [(protocol.CHAT_CHANNEL, 1), (protocol.ROLL_CHANNEL, 1)]
        )
    )
    await again.emit(chat_event("create", id="after"))
    event = await b.event()
    assert (event.name, event.data["id"], event.id) == ("chat-create", "after", "1")


async def test_last_event_id_replays_and_announces_gaps(
    relay_factory: Any, sse: Any, sub_counts: Any
) -> None:
    relay = await relay_factory(event_buffer_size=3)
    world = await relay.world()
    key = relay.key()
    first = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    assert (await first.event()).id == "0"
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1])
    for i in (1, 2):
        await world.emit(chat_event("create", id=f"m{i}"))
    assert [e.id for e in await first.events(2)] == ["1", "2"]
    first.close()

    for i in (3, 4):  # missed while away
        await world.emit(chat_event("create", id=f"m{i}"))
    await eventually(lambda: relay.state.streams.hub.events.last_id("world-1", "chat-events") == 4)
    back = await sse(
        relay, "/chat/subscribe", key, headers={"Last-Event-ID": "2"}, clientId="world-1"
    )
    assert await back.frame() == b'id: 2\nevent: connected\ndata: {"clientId":"world-1"}\n\n'
    replayed = await back.events(2)
    assert [(e.id, e.data["id"]) for e in replayed] == [("3", "m3"), ("4", "m4")]
    back.close()

    for i in range(5, 10):  # more than the buffer keeps
        await world.emit(chat_event("create", id=f"m{i}"))
    await eventually(lambda: relay.state.streams.hub.events.last_id("world-1", "chat-events") == 9)
    late = await sse(
        relay, "/chat/subscribe", key, headers={"Last-Event-ID": "4"}, clientId="world-1"
    )
    assert (await late.event()).name == "connected"
    assert (
        await late.frame() == b'id: 4\nevent: gap\ndata: {"missedFrom":5,"oldestAvailable":7}\n\n'
    )
    assert [e.id for e in await late.events(3)] == ["7", "8", "9"]
    await world.emit(chat_event("create", id="m10"))
    assert (await late.event()).id == "10"


async def test_limit_per_world_and_channel(relay_factory: Any, sse: Any, sub_counts: Any) -> None:
    relay = await relay_factory(max_streams_per_channel=2)
    world = await relay.world()
    key = relay.key()
    for _ in range(2):
        stream = await sse(relay, "/chat/subscribe", key, clientId="world-1")
        assert (await stream.event()).name == "connected"
    over = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    assert over.status == 200
    assert over.headers["Content-Type"] == "text/event-stream"
    assert await over.frame() == b'event: error\ndata: {"error":"Too many SSE connections"}\n\n'
    assert await over.ended() == b""
    other = await sse(relay, "/rolls/subscribe", key, clientId="world-1")
    assert (await other.event()).name == "connected"
    await eventually(lambda: sub_counts(world, protocol.ROLL_CHANNEL) == [1])
    assert sub_counts(world, protocol.CHAT_CHANNEL) == [1, 2]


async def test_keepalive_comment(relay_factory: Any, sse: Any) -> None:
    relay = await relay_factory(keepalive_interval=0.1)
    await relay.world()
    stream = await sse(relay, "/scene/subscribe", relay.key(), clientId="world-1")
    assert (await stream.event()).name == "connected"
    assert await stream.frame(2.0) == b": keepalive\n\n"
    assert await stream.frame(2.0) == b": keepalive\n\n"


async def test_world_disconnect_ends_its_streams(relay: Any, sse: Any, sub_counts: Any) -> None:
    world = await relay.world()
    other = await relay.world("world-2")
    key = relay.key()
    mine = await sse(relay, "/chat/subscribe", key, clientId="world-1")
    theirs = await sse(relay, "/chat/subscribe", key, clientId="world-2")
    for stream in (mine, theirs):
        await stream.event()
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1])
    await world.emit(chat_event("create", id="last"))
    await world.close()
    assert (await mine.event()).data["id"] == "last"  # what was sent before still arrives
    assert await mine.ended() == b""
    await eventually(lambda: relay.state.streams.hub.count("world-1", "chat-events") == 0)
    await other.emit(chat_event("create", id="still"))
    assert (await theirs.event()).data["id"] == "still"


async def test_client_going_away_is_uncounted(relay: Any, sse: Any, sub_counts: Any) -> None:
    world = await relay.world()
    settings = relay.state.streams.hub.settings
    settings.sweep_interval = 0.05
    settings.subscription_linger = 0.1  # 0 comes once the grace period is over
    stream = await sse(relay, "/hooks/subscribe", relay.key(), clientId="world-1")
    await stream.event()
    stream.close()
    await eventually(lambda: sub_counts(world, protocol.HOOK_CHANNEL) == [1, 0])


async def test_key_restrictions_hold_on_streams(relay: Any, sse: Any, sub_counts: Any) -> None:
    world = await relay.world()
    await with_users(relay, world)
    as_bob = relay.key(user_id="bob")
    stream = await sse(relay, "/chat/subscribe", as_bob, clientId="world-1", userId="gm")
    assert (await stream.event()).name == "connected"
    await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1])
    await world.emit(chat_event("create", id="secret", whisper=["alice"]))
    await world.emit(chat_event("create", id="public"))
    assert (await stream.event()).data["id"] == "public"  # the key's user wins over userId=gm

    refused = await sse(relay, "/hooks/subscribe", as_bob, clientId="world-1")
    assert refused.status == 403
    assert orjson.loads(await refused.ended()) == {
        "error": "User 'Bob' must be a GM to subscribe to hooks"
    }
    as_gm = relay.key(user_id="Gamemaster")
    hooks = await sse(relay, "/hooks/subscribe", as_gm, clientId="world-1")
    assert (await hooks.event()).name == "connected"
    one_world = relay.key(client_ids=["world-1"])
    fine = await sse(relay, "/rolls/subscribe", one_world, clientId="world-1")
    assert (await fine.event()).name == "connected"


async def test_slow_consumer_is_cut_off(relay_factory: Any, sub_counts: Any) -> None:
    relay = await relay_factory(subscriber_queue_size=4)
    relay.state.streams.hub.settings.slow_close_grace = 30.0
    relay.state.streams.hub.settings.subscription_linger = 0  # the cut-off shows as count 0
    world = await relay.world()
    key = relay.key()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", relay.port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
    try:
        writer.write(
            (
                "GET /chat/subscribe?clientId=world-1 HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{relay.port}\r\nx-api-key: {key}\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"event: connected"), 5)
        assert head.startswith(b"HTTP/1.1 200")
        await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1])
        (slow,) = relay.state.streams.hub.subscribers("world-1")
        big = "x" * 32_000
        sent = 0
        while sub_counts(world, protocol.CHAT_CHANNEL) != [1, 0] and sent < 400:
            await world.emit(chat_event("create", id=f"m{sent}", content=big))
            sent += 1
            assert len(slow.mailbox) <= 4  # the relay holds at most the queue per subscriber
            await asyncio.sleep(0.002)
        await eventually(lambda: sub_counts(world, protocol.CHAT_CHANNEL) == [1, 0])
        assert slow.reason == "fell-behind" and sent < 400
        rest = b""  # now read it all, to the end of the chunked body (the socket stays open)
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            assert chunk, "connection closed before the stream ended"
            rest += chunk
        error = b'event: error\ndata: {"error":"' + FELL_BEHIND.encode() + b'"}\n\n'
        assert error in rest
        assert rest.endswith(b"0\r\n\r\n")  # the chunked body ended properly
        assert rest.count(b"event: chat-create") < sent
    finally:
        writer.close()


async def test_a_revoked_key_ends_its_open_streams(relay: Any, sse: Any) -> None:
    await relay.world()
    settings = relay.state.streams.hub.settings
    settings.sweep_interval = settings.key_check_interval = 0.05
    key_id, secret = relay.store.create_key("default", ["events:subscribe"])
    stream = await sse(relay, "/chat/subscribe", secret, clientId="world-1")
    assert (await stream.event()).name == "connected"
    relay.store.revoke_key(key_id)
    relay.state.keys.clear()  # the key cache would forget it within seconds anyway
    assert await stream.frame() == b'event: error\ndata: {"error":"API key is disabled"}\n\n'
    assert await stream.ended() == b""
    await eventually(lambda: relay.state.streams.hub.count("world-1", "chat-events") == 0)
