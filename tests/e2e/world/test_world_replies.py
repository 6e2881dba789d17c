"""One request can't wedge the world (issue 9 item 5), checked on the world side: request frames
sent straight through the relay's world socket, so that the relay's parameter checks don't stop
them, over a real WebSocket to the embedded world.

Before the fix, a reply the world could not encode (`offset` 1e20 -> an integer past 64 bits)
killed its sending task without a log line: it stayed online and every later request timed out.
Now each such request gets an error reply, the next one is answered, a failed send makes the
agent reconnect, and unexpected failures are logged once, as one line, with a reply that says
what was wrong with the request instead of "Internal error in ...".
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
import orjson
import pytest
from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.world.actions.table import standard_table
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.runtime.table import ActionSpec, ActionTable


async def raw_request(relay: Any, frame: dict[str, Any], timeout: float = 5.0) -> Any:
    """The world's reply frame to `frame`, sent through the relay's world socket as is."""
    connection = relay.state.registry.get(CLIENT_ID)
    assert connection is not None
    reply = await connection.request(frame, timeout)
    return orjson.loads(reply.raw)


async def chat_works(relay: Any, api: Any) -> bool:
    status, body = await api(relay, "GET", "/chat", limit=1)
    return status == 200 and body["success"] is True


async def test_an_unencodable_reply_becomes_an_error_reply(
    relay: Any, world: EmbeddedWorld, api: Any, caplog: pytest.LogCaptureFixture
) -> None:
    frame = {"type": "chat-messages", "requestId": "raw-1", "offset": 1e20, "limit": 1}
    got = await raw_request(relay, frame)
    assert got == {
        "type": "chat-messages-result",
        "requestId": "raw-1",
        "success": False,
        "error": "The reply to chat-messages could not be sent: a number in it is too large",
    }
    logged = [r.getMessage() for r in caplog.records if "raw-1" in r.getMessage()]
    assert len(logged) == 1 and "\n" not in logged[0] and "64-bit" in logged[0]
    # The sender survived: the next requests are answered.
    got = await raw_request(relay, {"type": "chat-messages", "requestId": "raw-2", "limit": 1})
    assert got["success"] is True
    assert await chat_works(relay, api)


async def test_an_action_returning_an_unencodable_value(
    relay: Any, start_world: Any, api: Any
) -> None:
    def bad(ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
        return {"data": {"when": object()}}

    async def deep(ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
        value: Any = 1
        for _ in range(300):
            value = [value]
        return {"data": value}

    own = ActionTable.of(ActionSpec("test-bad", bad), ActionSpec("test-deep", deep, is_async=True))
    await start_world(relay, actions=standard_table().extended(own))
    got = await raw_request(relay, {"type": "test-bad", "requestId": "b1"})
    assert got["requestId"] == "b1"
    assert (
        got["error"]
        == "The reply to test-bad could not be sent: it holds a value JSON cannot carry"
    )
    got = await raw_request(relay, {"type": "test-deep", "requestId": "d1"})
    assert got["error"] == "The reply to test-deep could not be sent: its data is nested too deeply"
    assert await chat_works(relay, api)


async def test_deep_params_that_bypass_the_relay_are_answered(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    currency: Any = 1
    for _ in range(200):
        currency = {"gp": currency}
    frame = {
        "type": "transfer-currency",
        "requestId": "raw-deep",
        "currency": currency,
        "sourceActorName": "nobody",
        "targetActorName": "nobody",
    }
    got = await raw_request(relay, frame)
    assert got["requestId"] == "raw-deep" and isinstance(got["error"], str)
    assert await chat_works(relay, api)


async def test_unexpected_failure_says_what_was_wrong_and_logs_one_line(
    relay: Any, world: EmbeddedWorld, api: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # 1e300 experience points: stored as an integer past 64 bits, which the store can't write.
    frame = {
        "type": "modify-experience",
        "requestId": "xp-1",
        "actorUuid": "Actor.pipMonk000000001",
        "amount": 1e300,
    }
    with caplog.at_level(logging.ERROR, logger="vttrelay.world.runtime.replies"):
        got = await raw_request(relay, frame)
    assert got["error"] == "Could not carry out modify-experience: a number in it is too large"
    assert "Internal error" not in got["error"]
    logged = [r for r in caplog.records if "xp-1" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is None
    line = logged[0].getMessage()
    assert "\n" not in line and "64-bit range" in line and ".py:" in line
    # Nothing was stored: the transaction rolled back.
    status, body = await api(
        relay,
        "GET",
        "/dnd5e/get-actor-details",
        actorUuid="Actor.pipMonk000000001",
        details=["details"],
    )
    assert status == 200 and "1e+300" not in orjson.dumps(body).decode()
    assert await chat_works(relay, api)


async def test_a_failed_send_reconnects_instead_of_lingering(
    relay: Any, world: EmbeddedWorld, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = world.agent
    assert agent.connections == 1
    real_send = aiohttp.ClientWebSocketResponse.send_frame
    failures = [RuntimeError("simulated broken socket")]

    async def flaky_send(self: Any, data: bytes, opcode: Any, compress: Any = None) -> None:
        if failures and b"chat-messages-result" in data:
            raise failures.pop()
        await real_send(self, data, opcode, compress)

    monkeypatch.setattr(aiohttp.ClientWebSocketResponse, "send_frame", flaky_send)
    status, body = await api(relay, "GET", "/chat", limit=1)
    # The reply could not be sent: the world closed its socket, so the relay fails the request
    # at once (503) instead of a 10 s timeout, and the agent connects again.
    assert (status, body) == (503, {"error": "World disconnected before replying"})
    await eventually(lambda: agent.connections == 2 and agent.connected.is_set(), timeout=10)
    await eventually(lambda: relay.state.registry.get(CLIENT_ID) is not None, timeout=10)
    assert await chat_works(relay, api)
