"""Account isolation on every path: a key of account A never reaches a world of account B.

Checked over a real relay with worlds of two accounts: every forward route (named world and
auto-resolution), `/clients`, every SSE stream, the client WebSocket `/ws/api`, and the world
socket itself (a world of B cannot answer, or even see, a request meant for a world of A).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import aiohttp
import orjson
import pytest

from vttrelay.relay.routes import ALL_SCOPES, ROUTES, Route

FORWARD = [r for r in ROUTES if r.mode == "forward"]
STREAMS = [r for r in ROUTES if r.mode == "stream"]
OTHER_ACCOUNT = {"error": "Invalid API key for this client ID"}


SAMPLE = {"string": "x", "number": 1, "boolean": True, "array": ["x"], "object": {"gp": 1}}


# A valid value for each path parameter of the table.
PATH_SAMPLES = {"messageId": "m1", "documentType": "tokens", "uuid": "Macro.m1"}


def _valid(route: Route) -> tuple[str, dict[str, str], dict[str, Any] | None]:
    """(path, query, body) with the route's required parameters, so only the world is wrong."""
    path = re.sub(r"\{(\w+)\}", lambda m: PATH_SAMPLES[m.group(1)], route.path)
    query: dict[str, str] = {}
    body: dict[str, Any] = {}
    for param in route.params:
        if not (param.required or param.name in route.require_any[:1]) or "path" in param.sources:
            continue
        value = SAMPLE.get(param.type or "string")
        if route.method == "GET" or "body" not in param.sources:
            query[param.name] = orjson.dumps(value).decode() if param.type == "array" else "x"
        else:
            body[param.name] = value
    return path, query, body or None


@pytest.fixture
async def two_accounts(relay: Any) -> tuple[Any, Any, str]:
    """A world of account `b` (the victim), a world of `a`, and an all-scopes key of `a`."""
    victim = await relay.world("b-world", account="b")
    mine = await relay.world("a-world", account="a")
    return victim, mine, relay.key(scopes=ALL_SCOPES, account="a")


@pytest.mark.parametrize("route", FORWARD, ids=[f"{r.method} {r.path}" for r in FORWARD])
async def test_forward_routes(relay: Any, two_accounts: Any, route: Route) -> None:
    victim, mine, key = two_accounts
    path, query, body = _valid(route)
    named = {**query, "clientId": "b-world"}
    got = await relay.call(route.method, path, key=key, params=named, json=body)
    assert (got.status, got.json()) == (401, OTHER_ACCOUNT)
    bound = relay.key(scopes=ALL_SCOPES, account="a", client_ids=["b-world"])
    got = await relay.call(route.method, path, key=bound, params=query, json=body)
    assert got.status == 404 and got.json()["error"] == "Invalid client ID", got.body
    got = await relay.call(route.method, path, key=key, params=query, json=body)
    assert got.status == 200, got.body  # the same call reaches a's own world
    assert len(mine.received) == 1 and victim.received == []


async def test_auto_resolution_only_sees_own_worlds(relay: Any, two_accounts: Any) -> None:
    victim, mine, key = two_accounts
    got = await relay.call("GET", "/world-info", key=key)
    assert got.status == 200 and len(mine.received) == 1 and victim.received == []
    await relay.world("b-world-2", account="b")
    got = await relay.call("GET", "/world-info", key=key)
    assert got.status == 200  # still exactly one world for account a: no "several worlds"
    await mine.close()
    got = await relay.call("GET", "/world-info", key=key)
    assert (got.status, got.json()) == (404, {"error": "No connected Foundry clients found"})
    assert victim.received == []


async def test_clients_lists_only_own_worlds(relay: Any, two_accounts: Any) -> None:
    victim, _, key = two_accounts
    await victim.close()  # an offline world of b is not listed either
    got = await relay.call("GET", "/clients", key=key)
    assert [c["clientId"] for c in got.json()["clients"]] == ["a-world"]


@pytest.mark.parametrize("route", STREAMS, ids=[r.path for r in STREAMS])
async def test_streams(relay: Any, two_accounts: Any, route: Route) -> None:
    victim, _, key = two_accounts
    headers = {"x-api-key": key}
    url = relay.url + route.path
    async with relay.http.get(url, headers=headers, params={"clientId": "b-world"}) as resp:
        assert (resp.status, await resp.json()) == (401, OTHER_ACCOUNT)
    bound = relay.key(scopes=ALL_SCOPES, account="a", client_ids=["b-world"])
    async with relay.http.get(url, headers={"x-api-key": bound}) as resp:
        # Streams resolve their world as REST calls do (issue 24): the key's one allowed world,
        # which is not of its account, is refused as on REST.
        assert (resp.status, (await resp.json())["error"]) == (404, "Invalid client ID")
    assert [f for f in victim.received if f.get("count")] == []  # no subscription switched on


async def test_client_websocket(relay: Any, two_accounts: Any) -> None:
    victim, _, key = two_accounts
    async with relay.http.ws_connect(relay.url + "/ws/api") as ws:
        await ws.send_str(
            orjson.dumps({"type": "auth", "token": key, "clientId": "b-world"}).decode()
        )
        first = await ws.receive(timeout=5)
        assert first.type == aiohttp.WSMsgType.TEXT
        # the REST rule (Gate.admit), in the reference's /ws/api wording
        refused = {"type": "error", "error": "API key does not match the specified clientId"}
        assert orjson.loads(first.data) == refused
        closing = await ws.receive(timeout=5)
        assert closing.type == aiohttp.WSMsgType.CLOSE and ws.close_code == 4002
    assert victim.received == []


async def test_a_world_cannot_answer_another_worlds_request(relay: Any) -> None:
    """Replies are matched per world: b's world echoing a's requestId resolves nothing."""
    mine = await relay.world("a-world", account="a", handler=None)
    thief = await relay.world("b-world", account="b", handler=None)
    call = asyncio.ensure_future(
        relay.call("GET", "/world-info", key=relay.key(account="a"), params={"clientId": "a-world"})
    )
    request = await mine.next_request()
    await thief.emit({"type": "world-info-result", "requestId": request["requestId"], "data": 1})
    await asyncio.sleep(0.1)
    assert not call.done()
    await mine.emit({"type": "world-info-result", "requestId": request["requestId"], "data": 2})
    got = await asyncio.wait_for(call, 5)
    assert (got.status, got.json()["data"]) == (200, 2)
    assert thief.received == []
