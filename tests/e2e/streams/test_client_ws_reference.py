"""/ws/api as the reference relay speaks it (endpoints-beyond-seed §13), over real sockets.

Each reply is compared with the reference's shape key for key. vttrelay adds a few keys of its
own, named where they occur: `lastEventId` on `subscribed` (where a replay resumes), `status` on
refusals (the HTTP status the same refusal has on REST) and `clientId` on request failures.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from tests.support.e2e import eventually

from vttrelay import protocol
from vttrelay.relay.core import Gate
from vttrelay.relay.routes import ROUTES

SUPPORTED = "chat-events, roll-events, hooks, combat-events, actor-events, scene-events"


def deep(levels: int) -> str:
    """JSON text of a value nested `levels` deep (deeper than orjson would write)."""
    return "[" * levels + "1" + "]" * levels


async def test_control_replies_echo_the_request_id(relay: Any, api_ws: Any) -> None:
    world = await relay.world()
    socket = await api_ws(relay, relay.key())

    async def ask(frame: dict[str, Any] | str | bytes) -> dict[str, Any]:
        if isinstance(frame, dict):
            await socket.send(frame)
        elif isinstance(frame, str):
            await socket.ws.send_str(frame)
        else:
            await socket.ws.send_bytes(frame)
        return await socket.recv()

    assert await ask({"type": "ping", "requestId": "p"}) == {"requestId": "p", "type": "pong"}
    assert await ask({"type": "ping"}) == {"requestId": "", "type": "pong"}
    assert await ask({"type": "subscribe", "channel": "hooks", "requestId": "s"}) == {
        "channel": "hooks",
        "lastEventId": 0,  # vttrelay's: where a replay would resume
        "requestId": "s",
        "type": "subscribed",
    }
    assert await ask({"type": "subscribe", "channel": "gossip", "requestId": "g"}) == {
        "error": f'Invalid channel: "gossip". Supported: {SUPPORTED}',
        "requestId": "g",
        "type": "error",
    }
    assert await ask({"type": "subscribe"}) == {
        "error": f'Invalid channel: "". Supported: {SUPPORTED}',
        "requestId": "",
        "type": "error",
    }
    assert await ask({"type": "subscribe", "channel": "roll-events"}) == {
        "channel": "roll-events",
        "lastEventId": 0,
        "requestId": "",
        "type": "subscribed",
    }
    assert await ask({"type": "unsubscribe", "channel": "hooks", "requestId": "u"}) == {
        "channel": "hooks",
        "removed": 1,
        "requestId": "u",
        "type": "unsubscribed",
    }
    assert await ask({"type": "unsubscribe", "channel": "hooks", "requestId": "u2"}) == {
        "channel": "hooks",
        "removed": 0,
        "requestId": "u2",
        "type": "unsubscribed",
    }
    # without a channel: every subscription of this socket
    await ask({"type": "subscribe", "channel": "chat-events"})
    assert await ask({"type": "unsubscribe", "requestId": "all"}) == {
        "channel": "all",
        "removed": 2,
        "requestId": "all",
        "type": "unsubscribed",
    }
    await eventually(lambda: relay.state.streams.hub.subscribers("world-1") == [])

    assert await ask("{not json") == {"error": "Invalid JSON", "type": "error"}
    assert await ask("[1, 2]") == {"error": "Invalid JSON", "type": "error"}
    assert await ask({"requestId": "t"}) == {
        "error": 'Missing "type" field',
        "requestId": "t",
        "type": "error",
    }
    assert await ask({"type": 7}) == {
        "error": 'Missing "type" field',
        "requestId": "",
        "type": "error",
    }
    assert await ask({"type": "nope", "requestId": "n"}) == {
        "error": 'Unknown message type: "nope"',
        "requestId": "n",
        "type": "error",
    }
    # a binary frame is read like a text one
    assert await ask(orjson.dumps({"type": "ping", "requestId": "b"})) == {
        "requestId": "b",
        "type": "pong",
    }

    # a request without a string requestId is refused, and never reaches the world
    for frame in ({"type": "world-info"}, {"type": "world-info", "requestId": 5}):
        assert await ask(frame) == {
            "error": 'Missing "requestId" field for request messages',
            "type": "error",
        }
    await asyncio.sleep(0.1)
    assert not any(f.get("type") == "world-info" for f in world.received)


async def test_the_auth_frame_may_be_binary_too(relay: Any) -> None:
    await relay.world()
    async with relay.http.ws_connect(relay.url + "/ws/api") as ws:
        await ws.send_bytes(orjson.dumps({"type": "auth", "token": relay.key()}))
        hello = orjson.loads((await ws.receive(timeout=5)).data)
        assert (hello["type"], hello["clientId"]) == ("connected", "world-1")


async def test_request_replies_and_failures(relay: Any, api_ws: Any) -> None:
    world = await relay.world(handler=lambda f: {"type": "whatever", "requestId": f["requestId"]})
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "world-info", "requestId": "w", "format": "x"})
    # the reference sets the reply's type to `<type>-result` and adds the caller's id and world
    assert await socket.recv() == {
        "clientId": "world-1",
        "requestId": "w",
        "type": "world-info-result",
    }
    await world.close()
    await eventually(lambda: relay.state.registry.get("world-1") is None)
    await socket.send({"type": "world-info", "requestId": "gone"})
    assert await socket.recv() == {
        "clientId": "world-1",
        "error": "Foundry client is no longer connected",
        "requestId": "gone",
        "status": 404,
        "type": "world-info-result",
    }


async def test_every_forward_action_is_a_supported_type(relay: Any, api_ws: Any) -> None:
    await relay.world()
    socket = await api_ws(relay, relay.key())
    actions = {r.action for r in ROUTES if r.mode == "forward" and r.action}
    supported = set(socket.hello["supportedTypes"])
    assert actions <= supported
    assert {"subscribe", "unsubscribe", "ping", "remote-request"} <= supported
    assert socket.hello["eventChannels"] == list(protocol.CHANNELS)


async def test_hook_events_carry_the_hook_name_at_the_top_level(relay: Any, api_ws: Any) -> None:
    world = await relay.world()
    socket = await api_ws(relay, relay.key())
    await socket.send({"type": "subscribe", "channel": "hooks", "requestId": "h"})
    await socket.recv()
    args = [{"_id": "a1", "name": "Goblin"}, {"action": "create"}, "gm"]
    await world.emit({"type": "hook-event", "data": {"hook": "createActor", "args": args}})
    event = await socket.recv()
    assert event == {
        "type": "hook-event",
        "event": "createActor",
        "id": 1,
        "hook": "createActor",
        "data": {"hook": "createActor", "args": args},
    }


async def test_remote_request_goes_through_the_core(relay: Any, api_ws: Any) -> None:
    await relay.world()
    other = await relay.world("world-2")
    await relay.world("b-world", account="b")
    key = relay.key(["world:info", "dnd5e"], rate_per_minute=0)
    socket = await api_ws(relay, key, clientId="world-1")

    async def remote(**frame: Any) -> dict[str, Any]:
        await socket.send({"type": "remote-request", "requestId": "rr", **frame})
        return await socket.recv()

    answer = await remote(targetClientId="world-2", action="world-info", payload={})
    assert answer["type"] == "remote-response" and answer["requestId"] == "rr"
    assert answer["success"] is True
    echoed = answer["data"]["data"]["echo"]
    assert echoed["type"] == "world-info" and echoed["_scopes"] == ["world:info", "dnd5e"]
    assert other.received[-1] == echoed  # it reached world-2, not the socket's world
    # parameters are checked as on REST, from `payload`
    assert await remote(targetClientId="world-2", action="skill-check", payload={}) == {
        "error": "'actorUuid' is required",
        "requestId": "rr",
        "status": 400,
        "success": False,
        "type": "remote-response",
    }
    refusals: list[tuple[dict[str, Any], int, str]] = [
        ({"action": "chat-send", "payload": {"content": "x"}}, 403, "chat:write"),
        ({"targetClientId": "b-world", "action": "world-info"}, 401, "for this client ID"),
        ({"targetClientId": "ghost", "action": "world-info"}, 404, "Invalid client ID"),
        ({"action": "no-such-action"}, 400, 'Unknown action: "no-such-action"'),
        ({"action": "world-info", "payload": [1]}, 400, "'payload' must be an object"),
    ]
    for frame, status, text in refusals:
        refused = await remote(**frame)
        assert (refused["success"], refused["status"]) == (False, status), refused
        assert text in refused["error"]
    # without a target: the socket's own world
    mine = await remote(action="world-info")
    assert mine["success"] is True
    assert relay.state.registry.get("world-1") is not None


async def test_deep_json_gets_an_error_frame(relay: Any, api_ws: Any) -> None:
    """Deep JSON once gave no answer at all on this socket; now the same parameter checks as
    on REST answer it, and a nesting the parser refuses is `Invalid JSON`."""
    world = await relay.world()
    socket = await api_ws(relay, relay.key(["execute-js"]))
    await socket.ws.send_str('{"type":"execute-js","requestId":"deep","script":' + deep(300) + "}")
    refused = await socket.recv()
    assert refused["type"] == "execute-js-result" and refused["requestId"] == "deep"
    assert refused["status"] == 400 and "'script' is nested too deeply" in refused["error"]
    rest = await relay.call(
        "POST",
        "/execute-js",
        relay.key(["execute-js"]),
        data='{"script":' + deep(300) + "}",
        headers={"Content-Type": "application/json"},
    )
    assert (rest.status, rest.json()["error"]) == (400, refused["error"])  # the same check
    await socket.ws.send_str(deep(2000))
    assert await socket.recv() == {"error": "Invalid JSON", "type": "error"}
    await socket.send({"type": "ping", "requestId": "still"})
    assert await socket.recv() == {"requestId": "still", "type": "pong"}
    assert not any(f.get("type") == "execute-js" for f in world.received)


async def test_an_unexpected_failure_is_answered_not_silenced(
    relay: Any, api_ws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await relay.world()
    socket = await api_ws(relay, relay.key())

    async def broken(*args: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(Gate, "forward", broken)
    await socket.send({"type": "world-info", "requestId": "x"})
    assert await socket.recv() == {
        "clientId": "world-1",
        "error": "Internal error",
        "requestId": "x",
        "status": 500,
        "type": "world-info-result",
    }
    await socket.send({"type": "remote-request", "requestId": "y", "action": "world-info"})
    assert await socket.recv() == {
        "error": "Internal error",
        "requestId": "y",
        "status": 500,
        "success": False,
        "type": "remote-response",
    }
    await socket.send({"type": "ping", "requestId": "z"})  # the socket lives on
    assert await socket.recv() == {"requestId": "z", "type": "pong"}
