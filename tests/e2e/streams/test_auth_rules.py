"""Every auth rule of the request core (core.py) through every path, over real sockets.

One parametrised test: each rule (missing, unknown, disabled, expired key; missing scope; rate
limit; a world the key may not use; a world of another account; the key's forced userId over the
caller's) is tried through REST (`GET /world-info`), SSE (`/hooks/subscribe`), a /ws/api request
(`world-info`) and a /ws/api subscription (`hooks`). Each attempt is reduced to (status, text):
the HTTP status and `error` (REST, SSE), the error frame's `status` and `error` (/ws/api), or the
close code and reason text when /ws/api refuses the connection itself.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest
from tests.support.e2e import eventually

USERS = [
    {"id": "gm", "name": "Gamemaster", "role": 4},
    {"id": "alice", "name": "Alice", "role": 1},
]
PATHS = ("rest", "sse", "ws", "ws-events")
SCOPES = ["world:info", "events:subscribe"]


@dataclass
class Attempt:
    """Who calls (key, or None for no key), naming which world, as which user."""

    key: str | None
    client_id: str | None = "world-1"
    user_id: str | None = None


async def _world(relay: Any, client_id: str = "world-1", account: str = "default") -> Any:
    world = await relay.world(client_id, account=account)
    await world.emit({"type": "player-list", "users": USERS})
    await eventually(lambda: bool(relay.state.registry.get(client_id).users))
    return world


# The rules: each prepares the relay for one path and returns the attempt --------------------------


async def missing_key(relay: Any, path: str) -> Attempt:
    await _world(relay)
    return Attempt(None)


async def unknown_key(relay: Any, path: str) -> Attempt:
    await _world(relay)
    return Attempt("not-a-key")


async def disabled_key(relay: Any, path: str) -> Attempt:
    await _world(relay)
    key_id, secret = relay.store.create_key("default", SCOPES)
    relay.store.revoke_key(key_id)
    return Attempt(secret)


async def expired_key(relay: Any, path: str) -> Attempt:
    await _world(relay)
    return Attempt(relay.key(SCOPES, expires_at=time.time() - 1))


async def missing_scope(relay: Any, path: str) -> Attempt:
    await _world(relay)
    return Attempt(relay.key(["chat:read"]))


async def rate_limited(relay: Any, path: str) -> Attempt:
    await _world(relay)
    # one call spends the budget first; a /ws/api connect counts as one call too
    budget = 2 if path.startswith("ws") else 1
    key = relay.key(SCOPES, rate_per_minute=budget)
    spent = await relay.call("GET", "/world-info", key, params={"clientId": "world-1"})
    assert spent.status == 200
    return Attempt(key)


async def world_not_allowed(relay: Any, path: str) -> Attempt:
    await _world(relay)
    await _world(relay, "world-2")
    return Attempt(relay.key(SCOPES, client_ids=["world-2"]))


async def world_of_another_account(relay: Any, path: str) -> Attempt:
    await _world(relay)
    await _world(relay, "b-world", account="b")
    return Attempt(relay.key(SCOPES), client_id="b-world")


async def forced_user(relay: Any, path: str) -> Attempt:
    await _world(relay)
    return Attempt(relay.key(SCOPES, user_id="alice"), user_id="gm")


Rule = Callable[[Any, str], Awaitable[Attempt]]

GM_ONLY = "User 'Alice' must be a GM to subscribe to hooks"
NOT_AUTHORIZED = "API key is not authorized for this client"
OTHER_ACCOUNT = "Invalid API key for this client ID"
WS_OTHER_ACCOUNT = "API key does not match the specified clientId"
RATE = "Too many API requests, please slow down"

# rule -> expected (status, text) per path: rest, sse, ws request, ws subscription
RULES: list[tuple[Rule, dict[str, tuple[int, str]]]] = [
    (missing_key, {"rest": (401, "API key is required"), "ws": (4002, "Invalid auth message")}),
    (unknown_key, {"rest": (401, "Invalid API key"), "ws": (4002, "Invalid API key")}),
    (disabled_key, {"rest": (401, "API key is disabled"), "ws": (4002, "API key is disabled")}),
    (expired_key, {"rest": (401, "API key has expired"), "ws": (4002, "API key has expired")}),
    (
        missing_scope,
        {
            "rest": (403, "API key lacks required scope: world:info"),
            "sse": (403, "API key lacks required scope: events:subscribe"),
            "ws": (403, "API key lacks required scope: world:info"),
            "ws-events": (403, "API key lacks required scope: events:subscribe"),
        },
    ),
    (rate_limited, {"rest": (429, RATE), "ws": (429, RATE)}),
    (world_not_allowed, {"rest": (403, NOT_AUTHORIZED), "ws": (4002, NOT_AUTHORIZED)}),
    # /ws/api refuses the connection in the reference relay's wording of the same rule
    (world_of_another_account, {"rest": (401, OTHER_ACCOUNT), "ws": (4002, WS_OTHER_ACCOUNT)}),
    (
        forced_user,
        {
            "rest": (200, "userId=alice"),
            "sse": (403, GM_ONLY),
            "ws": (200, "userId=alice"),
            "ws-events": (403, GM_ONLY),
        },
    ),
]


def expected_for(table: dict[str, tuple[int, str]], path: str) -> tuple[int, str]:
    """A rule's outcome on a path: its own entry, else the REST one (SSE), else /ws/api's."""
    if path in table:
        return table[path]
    return table["rest"] if path == "sse" else table["ws"]


CASES = [
    pytest.param(rule, path, expected_for(table, path), id=f"{rule.__name__}-{path}")
    for rule, table in RULES
    for path in PATHS
]


# The paths -----------------------------------------------------------------------------------


def _query(attempt: Attempt) -> dict[str, str]:
    query = {"clientId": attempt.client_id} if attempt.client_id else {}
    if attempt.user_id:
        query["userId"] = attempt.user_id
    return query


async def via_rest(relay: Any, attempt: Attempt) -> tuple[int, str]:
    answer = await relay.call("GET", "/world-info", attempt.key, params=_query(attempt))
    body = answer.json()
    if answer.status == 200:
        return 200, f"userId={body['data']['echo'].get('userId')}"
    return answer.status, body["error"]


async def via_sse(relay: Any, attempt: Attempt) -> tuple[int, str]:
    headers = {"x-api-key": attempt.key} if attempt.key else {}
    async with relay.http.get(
        relay.url + "/hooks/subscribe", params=_query(attempt), headers=headers
    ) as response:
        if response.status == 200:
            return 200, (await response.content.readuntil(b"\n\n")).decode()
        return response.status, (await response.json())["error"]


async def via_ws(relay: Any, attempt: Attempt, subscribe: bool) -> tuple[int, str]:
    async with relay.http.ws_connect(relay.url + "/ws/api") as ws:
        auth: dict[str, Any] = {"type": "auth"}
        if attempt.key is not None:
            auth["token"] = attempt.key
        if attempt.client_id:
            auth["clientId"] = attempt.client_id
        await ws.send_str(orjson.dumps(auth).decode())
        hello = orjson.loads((await ws.receive(timeout=5)).data)
        if hello["type"] != "connected":
            closing = await ws.receive(timeout=5)
            assert closing.type == aiohttp.WSMsgType.CLOSE
            assert closing.extra == hello["error"]  # the close reason says it too
            return closing.data, hello["error"]
        frame: dict[str, Any] = {"requestId": "r1"}
        if subscribe:
            frame.update(type="subscribe", channel="hooks")
        else:
            frame.update(type="world-info")
        if attempt.user_id:
            frame["userId"] = attempt.user_id
        await ws.send_str(orjson.dumps(frame).decode())
        reply = orjson.loads((await ws.receive(timeout=5)).data)
        assert reply["requestId"] == "r1"
        if "error" in reply:
            return reply["status"], reply["error"]
        if subscribe:
            return 200, reply["type"]
        return 200, f"userId={reply['data']['echo'].get('userId')}"


@pytest.mark.parametrize(("rule", "path", "expected"), CASES)
async def test_auth_rule_on_every_path(
    relay: Any, rule: Rule, path: str, expected: tuple[int, str]
) -> None:
    attempt = await rule(relay, path)
    if path == "rest":
        outcome = await via_rest(relay, attempt)
    elif path == "sse":
        outcome = await via_sse(relay, attempt)
    else:
        outcome = await via_ws(relay, attempt, subscribe=path == "ws-events")
    assert outcome == expected
