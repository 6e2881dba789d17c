"""Every relay-made error of wire-protocol §6, with its status and exact body; limits; isolation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests.support.relay import echo_handler

from vttrelay.relay.forward import CORS_HEADERS

WORLD_INFO = "/world-info"


async def test_missing_and_unknown_key_401(relay: Any) -> None:
    got = await relay.call("GET", WORLD_INFO)
    assert (got.status, got.json()) == (401, {"error": "API key is required"})
    got = await relay.call("GET", WORLD_INFO, key="nope")
    assert (got.status, got.json()) == (401, {"error": "Invalid API key"})
    got = await relay.call("GET", WORLD_INFO, key="x" * 5000)
    assert (got.status, got.json()) == (401, {"error": "Invalid API key"})


async def test_revoked_key_401_after_cache_ttl(relay_factory: Any) -> None:
    relay = await relay_factory(key_cache_ttl=0.2)
    await relay.world()
    key_id, secret = relay.store.create_key("default", ["world:info"])
    assert (await relay.call("GET", WORLD_INFO, key=secret)).status == 200
    relay.store.revoke_key(key_id)
    await asyncio.sleep(0.3)
    got = await relay.call("GET", WORLD_INFO, key=secret)
    assert (got.status, got.json()) == (401, {"error": "API key is disabled"})


async def test_expired_key_401(relay: Any) -> None:
    key = relay.key(expires_at=time.time() - 1)
    got = await relay.call("GET", WORLD_INFO, key=key)
    assert (got.status, got.json()) == (401, {"error": "API key has expired"})


async def test_missing_scope_403(relay: Any) -> None:
    await relay.world()
    key = relay.key()  # default scopes: no chat:write, no execute-js
    got = await relay.call("POST", "/chat", key=key, json={"content": "hi"})
    assert (got.status, got.json()) == (403, {"error": "API key lacks required scope: chat:write"})
    got = await relay.call("POST", "/execute-js", key=key, json={"script": "return 1"})
    assert (got.status, got.json()) == (403, {"error": "API key lacks required scope: execute-js"})
    empty = relay.key(scopes=[])
    got = await relay.call("GET", WORLD_INFO, key=empty)
    assert (got.status, got.json()) == (403, {"error": "API key lacks required scope: world:info"})


async def test_client_id_errors(relay: Any) -> None:
    await relay.world("mine")
    await relay.world("theirs", account="other")
    key = relay.key()
    got = await relay.call("GET", WORLD_INFO, key=key, params={"clientId": "ghost"})
    assert (got.status, got.json()) == (404, {"error": "Invalid client ID"})
    got = await relay.call("GET", WORLD_INFO, key=key, params={"clientId": "theirs"})
    assert (got.status, got.json()) == (401, {"error": "Invalid API key for this client ID"})
    bound = relay.key(client_ids=["elsewhere"])
    got = await relay.call("GET", WORLD_INFO, key=bound, params={"clientId": "mine"})
    assert (got.status, got.json()) == (403, {"error": "API key is not authorized for this client"})
    got = await relay.call("GET", WORLD_INFO, key=bound)
    assert (got.status, got.json()) == (
        404,
        {
            "error": "Invalid client ID",
            "clientId": "elsewhere",
            "message": "No Foundry client connected with this ID.",
        },
    )


async def test_auto_resolution(relay: Any) -> None:
    key = relay.key()
    got = await relay.call("GET", WORLD_INFO, key=key)
    assert (got.status, got.json()) == (404, {"error": "No connected Foundry clients found"})
    one = await relay.world("b-world")
    got = await relay.call("GET", WORLD_INFO, key=key)
    assert got.status == 200 and len(one.received) == 1
    await relay.world("a-world")
    got = await relay.call("GET", WORLD_INFO, key=key)
    assert (got.status, got.json()) == (
        400,
        {
            "error": "Multiple clients connected. Please specify clientId.",
            "connectedClients": ["a-world", "b-world"],
        },
    )
    bound = relay.key(client_ids=["b-world"])
    got = await relay.call("GET", WORLD_INFO, key=bound)
    assert got.status == 200 and len(one.received) == 2
    two = relay.key(client_ids=["b-world", "a-world", "gone"])
    got = await relay.call("GET", WORLD_INFO, key=two)
    assert got.status == 400 and got.json()["connectedClients"] == ["a-world", "b-world"]


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "message"),
    [
        ("POST", "/dnd5e/skill-check", {}, {"skill": "prc"}, "'actorUuid' is required"),
        (
            "POST",
            "/dnd5e/modify-experience",
            {},
            {"amount": "lots"},
            "'amount' must be a valid number",
        ),
        (
            "POST",
            "/dnd5e/modify-experience",
            {},
            {"amount": True},
            "'amount' must be a valid number",
        ),
        (
            "POST",
            "/dnd5e/equip-item",
            {},
            {"equipped": "yes", "actorUuid": "Actor.a"},
            "'equipped' must be a valid boolean",
        ),
        (
            "GET",
            "/dnd5e/get-actor-details",
            {"actorUuid": "Actor.a", "details": "items,spells"},
            {},
            "'details' must be a valid array",
        ),
        (
            "POST",
            "/dnd5e/get-actor-details",
            {},
            {},
            None,
        ),
        (
            "POST",
            "/dnd5e/skill-check",
            {},
            {"actorUuid": 12, "skill": "prc"},
            "'actorUuid' must be a string",
        ),
        (
            "POST",
            "/dnd5e/transfer-currency",
            {"currency": '{"gp":1}'},
            {},
            "'currency' is required",
        ),
        (
            "POST",
            "/dnd5e/transfer-currency",
            {},
            {"currency": [1]},
            "'currency' must be an object",
        ),
        ("POST", "/chat", {}, {"content": "x", "whisper": 5}, "'whisper' must be an array"),
        (
            "POST",
            "/chat",
            {},
            {"content": "x", "whisper": "[1,"},
            "'whisper' must be a valid array",
        ),
        (
            "POST",
            "/select",
            {},
            {"overwrite": True},
            "At least one of 'uuids', 'name', 'data', or 'all' is required",
        ),
        (
            "POST",
            "/execute-js",
            {},
            {"script": "return localStorage.getItem('x')"},
            "Script contains forbidden patterns",
        ),
        ("GET", "/chat", {"limit": "ten"}, {}, "'limit' must be a valid number"),
    ],
)
async def test_parameter_errors_400(
    relay: Any, method: str, path: str, query: dict, body: dict, message: str | None
) -> None:
    world = await relay.world()
    key = relay.key(scopes=["dnd5e", "chat:read", "chat:write", "entity:read", "execute-js"])
    got = await relay.call(method, path, key=key, params=query, json=body)
    if message is None:  # a method the table does not declare
        assert got.status == 405
        return
    assert (got.status, got.json()) == (400, {"error": message})
    assert world.received == []


async def test_get_body_is_ignored(relay: Any) -> None:
    await relay.world()
    key = relay.key()
    got = await relay.call(
        "GET", "/dnd5e/get-actor-details", key=key, json={"actorUuid": "A", "details": ["x"]}
    )
    assert (got.status, got.json()) == (400, {"error": "'actorUuid' is required"})


async def test_timeout_408(relay_factory: Any) -> None:
    relay = await relay_factory(timeout_override=0.2)
    await relay.world(handler=None)  # never answers
    got = await relay.call("GET", WORLD_INFO, key=relay.key())
    assert (got.status, got.json()) == (408, {"error": "Request timed out"})
    assert relay.state.registry.get("world-1").pending == {}


async def test_disconnect_fails_pending_within_a_second(relay: Any) -> None:
    world = await relay.world(handler=None)
    key = relay.key()
    calls = [asyncio.ensure_future(relay.call("GET", WORLD_INFO, key=key)) for _ in range(5)]
    for _ in range(5):
        await world.next_request()
    started = time.monotonic()
    await world.close()
    answers = await asyncio.gather(*calls)
    assert time.monotonic() - started < 1.0
    for got in answers:
        assert (got.status, got.json()) == (503, {"error": "World disconnected before replying"})


async def test_dnd5e_route_on_other_system_400_at_once(relay: Any) -> None:
    world = await relay.world("pf", system_id="pf2e")
    got = await relay.call(
        "POST", "/dnd5e/skill-check", key=relay.key(), json={"actorUuid": "A", "skill": "prc"}
    )
    assert (got.status, got.json()) == (
        400,
        {"error": "This endpoint needs a dnd5e world; world 'pf' runs 'pf2e'"},
    )
    assert world.received == []
    got = await relay.call("GET", WORLD_INFO, key=relay.key())
    assert got.status == 200


async def test_body_too_large_413(relay_factory: Any) -> None:
    relay = await relay_factory(max_body_mb=0.01)
    await relay.world()
    key = relay.key(scopes=["chat:write"])
    got = await relay.call("POST", "/chat", key=key, json={"content": "x" * 20000})
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})

    async def chunks() -> Any:
        for _ in range(30):
            yield b"x" * 1000

    got = await relay.call("POST", "/chat", key=key, data=chunks())
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})
    got = await relay.call("POST", "/chat", key=key, json={"content": "small"})
    assert got.status == 200


async def test_rate_limit_429_per_key(relay_factory: Any) -> None:
    relay = await relay_factory(rate_per_minute=5)
    await relay.world()
    key, other = relay.key(), relay.key()
    statuses = [(await relay.call("GET", WORLD_INFO, key=key)).status for _ in range(7)]
    assert statuses == [200] * 5 + [429] * 2
    got = await relay.call("GET", WORLD_INFO, key=key)
    assert got.json() == {"error": "Too many API requests, please slow down"}
    assert got.headers["Retry-After"] == "12"  # one call's share of the minute at 5 per minute
    assert (await relay.call("GET", WORLD_INFO, key=other)).status == 200
    generous = relay.key(rate_per_minute=100)
    statuses = [(await relay.call("GET", WORLD_INFO, key=generous)).status for _ in range(8)]
    assert statuses == [200] * 8
    unlimited = relay.key(rate_per_minute=0)
    statuses = [(await relay.call("GET", WORLD_INFO, key=unlimited)).status for _ in range(8)]
    assert statuses == [200] * 8


async def test_usage_is_counted_in_batches(relay_factory: Any) -> None:
    relay = await relay_factory(usage_flush_interval=0.1)
    await relay.world()
    key_id, secret = relay.store.create_key("default", ["world:info"])
    for _ in range(3):
        await relay.call("GET", WORLD_INFO, key=secret)
    await asyncio.sleep(0.3)
    record = relay.store.get_key(key_id)
    assert record.request_count == 3 and record.last_used_at is not None


async def test_200_concurrent_requests_each_get_their_reply(relay: Any) -> None:
    async def slow_echo(frame: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.001 * (hash(frame["requestId"]) % 20))
        return {"type": "skill-check-result", "requestId": frame["requestId"], "data": frame}

    world = await relay.world(handler=slow_echo)
    key = relay.key()
    actors = [f"Actor.{i:03d}" for i in range(200)]
    answers = await asyncio.gather(
        *(
            relay.call("POST", "/dnd5e/skill-check", key=key, json={"actorUuid": a, "skill": "prc"})
            for a in actors
        )
    )
    assert [a.status for a in answers] == [200] * 200
    assert [a.json()["data"]["actorUuid"] for a in answers] == actors
    ids = {a.json()["requestId"] for a in answers}
    assert len(ids) == 200 and len(world.received) == 200


async def test_key_of_account_a_never_reaches_account_b(relay: Any) -> None:
    b_world = await relay.world("b-world", account="b")
    key_a = relay.key(account="a")
    attempts = [
        relay.call("GET", WORLD_INFO, key=key_a),
        relay.call("GET", WORLD_INFO, key=key_a, params={"clientId": "b-world"}),
        relay.call("GET", "/clients", key=key_a),
    ]
    key_a_bound = relay.key(account="a", client_ids=["b-world"])
    attempts += [
        relay.call("GET", WORLD_INFO, key=key_a_bound),
        relay.call("GET", WORLD_INFO, key=key_a_bound, params={"clientId": "b-world"}),
    ]
    got = await asyncio.gather(*attempts)
    assert [g.status for g in got] == [404, 401, 200, 404, 401]
    assert got[2].json() == {"total": 0, "clients": []}
    assert b_world.received == []
    a_world = await relay.world("a-world", account="a")
    assert (await relay.call("GET", WORLD_INFO, key=key_a)).status == 200
    assert len(a_world.received) == 1 and b_world.received == []


async def test_body_limit_comes_before_auth(relay_factory: Any) -> None:
    relay = await relay_factory(max_body_mb=0.01)
    got = await relay.call("POST", "/chat", json={"content": "x" * 20000})  # no key at all
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})


async def test_answers_and_errors_carry_cors_headers(relay_factory: Any) -> None:
    relay = await relay_factory(rate_per_minute=2, timeout_override=0.1)
    await relay.world(
        handler=lambda frame: echo_handler(frame) if frame["type"] == "search" else None
    )
    key = relay.key()
    origin = {"Origin": "http://foundry.local"}
    cases = [
        ("GET", "/search", key, {"query": "gob"}, 200),
        ("GET", "/api/health", None, None, 200),
        ("GET", WORLD_INFO, None, None, 401),
        ("GET", WORLD_INFO, key, None, 408),
        ("GET", WORLD_INFO, key, None, 429),
        ("POST", "/chat", relay.key(), None, 403),
        ("GET", "/dnd5e/concentration", relay.key(), {"clientId": "ghost"}, 404),
        ("GET", "/no-such-path", None, None, 404),
        ("PUT", "/chat", None, None, 405),
        ("POST", "/auth/pair", None, None, 400),
    ]
    for method, path, with_key, params, status in cases:
        got = await relay.call(method, path, key=with_key, params=params, headers=origin)
        assert got.status == status, (path, got.body)
        assert got.headers["Access-Control-Allow-Origin"] == "*"
        assert got.headers["Access-Control-Allow-Credentials"] == "true"
        assert got.headers["Access-Control-Expose-Headers"] == (
            "Content-Disposition, Content-Type, X-Image-Width, X-Image-Height"
        )
        assert all(len(got.headers.getall(name)) == 1 for name in CORS_HEADERS)
