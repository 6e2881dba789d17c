"""Pairing (wire-protocol §2.6), CORS (§8), and the relay's own routes: clients, health, docs."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from vttrelay.relay.openapi import openapi_path
from vttrelay.relay.routes import ROUTES
from vttrelay.relay.store import PAIRING_ALPHABET


async def test_pair_flow(relay: Any, world_double: Any) -> None:
    code = relay.store.create_pairing_code()
    assert re.fullmatch(f"[{PAIRING_ALPHABET}]{{6}}", code)
    got = await relay.call(
        "POST",
        "/auth/pair",
        json={"code": code.lower(), "worldId": "w", "worldTitle": "My World"},
        headers={"Host": "relay.example:8080", "Origin": "http://foundry.local:30000"},
    )
    assert got.status == 200
    body = got.json()
    assert set(body) == {"token", "clientId", "relayUrl"}
    assert re.fullmatch("[0-9a-f]{64}", body["token"])
    assert re.fullmatch("fvtt_[0-9a-f]{16}", body["clientId"])
    assert body["relayUrl"] == "ws://relay.example:8080/relay"
    assert got.headers["Access-Control-Allow-Origin"] == "*"
    # Known before it ever connects, then active once connected.
    got = await relay.call("GET", f"/api/clients/{body['clientId']}/active")
    assert (got.status, got.json()) == (200, {"active": False})
    world = world_double(relay.ws_url, body["clientId"], body["token"])
    relay.worlds.append(world)
    await world.connect()
    got = await relay.call("GET", f"/api/clients/{body['clientId']}/active")
    assert (got.status, got.json()) == (200, {"active": True})
    got = await relay.call("POST", "/auth/pair", json={"code": code, "worldId": "w"})
    assert (got.status, got.json()) == (410, {"error": "Pairing code has already been used"})
    assert len(relay.store.list_tokens()) == 1  # single use: one token minted


async def test_pair_code_works_once_under_concurrency(relay: Any) -> None:
    code = relay.store.create_pairing_code()
    body = {"code": code, "worldId": "w"}
    got = await asyncio.gather(*(relay.call("POST", "/auth/pair", json=body) for _ in range(8)))
    assert sorted(g.status for g in got) == [200] + [410] * 7
    assert len(relay.store.list_tokens()) == 1


async def test_pair_keeps_existing_client_id(relay: Any) -> None:
    code = relay.store.create_pairing_code()
    body = {"code": code, "worldId": "w", "existingClientId": "fvtt_1"}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert (got.status, got.json()["clientId"]) == (200, "fvtt_1")
    # Re-pairing with a code of the same account keeps the id again.
    body["code"] = relay.store.create_pairing_code()
    assert (await relay.call("POST", "/auth/pair", json=body)).json()["clientId"] == "fvtt_1"


async def test_pair_never_takes_over_another_accounts_client_id(relay: Any) -> None:
    await relay.world("fvtt_alice", account="alice")
    code = relay.store.create_pairing_code("mallory")
    body = {"code": code, "worldId": "w", "existingClientId": "fvtt_alice"}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert got.status == 200
    assert re.fullmatch("fvtt_[0-9a-f]{16}", got.json()["clientId"])  # a fresh id instead
    assert relay.store.known_client("fvtt_alice").account == "alice"
    alice_key = relay.key(account="alice")
    got = await relay.call("GET", "/clients", key=alice_key)
    assert [c["clientId"] for c in got.json()["clients"]] == ["fvtt_alice"]


async def test_relay_url_follows_forwarded_proto(relay_factory: Any) -> None:
    """X-Forwarded-Proto names the scheme from a trusted proxy only (relay/forwarded.py)."""
    for trusted, expected in (((), "ws"), (("127.0.0.1",), "wss")):
        relay = await relay_factory(trusted_proxies=trusted)
        code = relay.store.create_pairing_code()
        got = await relay.call(
            "POST",
            "/auth/pair",
            json={"code": code, "worldId": "w"},
            headers={"Host": "relay.example", "X-Forwarded-Proto": "https"},
        )
        assert got.json()["relayUrl"] == f"{expected}://relay.example/relay"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 400, "Code is required"),
        ({"code": ""}, 400, "Code is required"),
        ({"code": 123456, "worldId": "w"}, 400, "Code is required"),
        ({"code": "ZZZZZZ"}, 400, "worldId is required"),
        ({"code": "ZZZZZZ", "worldId": ""}, 400, "worldId is required"),
        ({"code": "ZZZZZZ", "worldId": 7}, 400, "worldId is required"),
        ({"code": "ZZZZZZ", "worldId": "w"}, 404, "Invalid pairing code"),
    ],
)
async def test_pair_errors(relay: Any, body: dict, status: int, message: str) -> None:
    got = await relay.call("POST", "/auth/pair", json=body)
    assert (got.status, got.json()) == (status, {"error": message})


async def test_pair_expired_and_bad_json(relay: Any) -> None:
    code = relay.store.create_pairing_code(ttl=-1)
    got = await relay.call("POST", "/auth/pair", json={"code": code, "worldId": "w"})
    assert (got.status, got.json()) == (410, {"error": "Pairing code has expired"})
    assert relay.store.list_tokens() == []  # a refused code mints nothing
    got = await relay.call("POST", "/auth/pair", data=b"{not json")
    assert (got.status, got.json()) == (400, {"error": "Code is required"})


async def test_pair_rate_limit(relay_factory: Any) -> None:
    relay = await relay_factory(pair_rate_limit=3)
    body = {"code": "ZZZZZZ", "worldId": "w"}
    statuses = [(await relay.call("POST", "/auth/pair", json=body)).status for _ in range(4)]
    assert statuses == [404, 404, 404, 429]
    got = await relay.call("POST", "/auth/pair", json=body)
    assert got.json() == {"error": "Too many pairing attempts, please try again later"}


async def test_client_active_404_only_for_unknown(relay: Any) -> None:
    got = await relay.call("GET", "/api/clients/never-seen/active")
    assert (got.status, got.json()) == (404, {"error": "Client not found"})
    world = await relay.world("seen")
    await world.close()
    got = await relay.call("GET", "/api/clients/seen/active")
    assert (got.status, got.json()) == (200, {"active": False})


async def test_self_unpair_errors(relay: Any) -> None:
    for bad in (b"nope", b"{}", b'{"token": ""}', b'{"token": 5}', b'["t"]', b""):
        got = await relay.call("POST", "/api/self-unpair", data=bad)
        assert (got.status, got.json()) == (400, {"error": "Missing token"}), bad
    got = await relay.call("POST", "/api/self-unpair", json={"token": "f" * 64})
    assert (got.status, got.json()) == (
        200,
        {"success": True, "message": "Token not found or already revoked"},
    )


@pytest.mark.parametrize("route", ROUTES, ids=[f"{r.method} {r.path}" for r in ROUTES])
async def test_cors_preflight_on_every_route(relay: Any, route: Any) -> None:
    path = route.path.replace("{messageId}", "m1").replace("{clientId}", "c1")
    got = await relay.call(
        "OPTIONS",
        path,
        headers={
            "Origin": "http://foundry.local:30000",
            "Access-Control-Request-Method": route.method,
            "Access-Control-Request-Headers": "x-api-key, content-type",
        },
    )
    assert got.status == 200
    headers = got.headers
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert headers["Access-Control-Allow-Credentials"] == "true"
    assert headers["Access-Control-Max-Age"] == "300"
    assert set(headers["Access-Control-Allow-Methods"].split(", ")) == {
        "GET",
        "POST",
        "PUT",
        "DELETE",
        "OPTIONS",
        "PATCH",
    }
    assert headers["Access-Control-Allow-Headers"] == (
        "Accept, Authorization, Content-Type, X-API-Key"
    )


async def test_health_and_status(relay: Any) -> None:
    for path in ("/api/health", "/health"):
        got = await relay.call("GET", path)
        body = got.json()
        assert got.status == 200 and body["status"] == "ok"
        assert body["instanceId"] == relay.config.instance_id
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["timestamp"])
    got = await relay.call("GET", "/api/status")
    body = got.json()
    assert body["status"] == "ok" and body["websocket"] == "/relay"
    assert body["billingEnabled"] is False and body["headlessEnabled"] is False
    # which instance answered, and how many are alive: this one alone
    assert body["instanceId"] == relay.config.instance_id
    assert body["instancesAlive"] == 1


async def test_clients_lists_live_then_known(relay: Any) -> None:
    key = relay.key()
    await relay.world("live-1", customName="Friday game")
    gone = await relay.world("gone-1")
    await gone.close()
    await relay.world("other-account", account="x")
    before = int(time.time() * 1000)
    got = await relay.call("GET", "/clients", key=key)
    assert got.status == 200
    body = got.json()
    assert body["total"] == 2
    live, offline = body["clients"]
    assert live["clientId"] == "live-1" and live["isOnline"] is True
    assert live["customName"] == "Friday game" and live["systemId"] == "dnd5e"
    assert live["instanceId"] == relay.config.instance_id
    assert live["ipAddress"].startswith("127.0.0.1:")
    assert live["tokenName"] == "live-1"
    assert 0 < live["connectedSince"] <= before + 1000
    assert offline["clientId"] == "gone-1" and offline["isOnline"] is False
    assert "" not in live.values()
    meta = {"worldId", "worldTitle", "foundryVersion", "systemId", "systemTitle", "systemVersion"}
    assert set(live) == meta | {
        "clientId", "instanceId", "lastSeen", "connectedSince", "customName", "ipAddress",
        "tokenName", "isOnline",
    }  # fmt: skip
    assert before - 5000 < live["lastSeen"] <= before + 1000
    assert set(offline) == meta | {
        "clientId", "lastSeen", "connectedSince", "ipAddress", "tokenName", "isOnline",
    }  # fmt: skip
    assert (offline["lastSeen"], offline["connectedSince"]) == (0, 0)  # wire-protocol §4.10
    bound = relay.key(client_ids=["gone-1"])
    got = await relay.call("GET", "/clients", key=bound)
    assert [c["clientId"] for c in got.json()["clients"]] == ["gone-1"]
    got = await relay.call("GET", "/clients", key=relay.key(scopes=["world:info"]))
    assert (got.status, got.json()) == (
        403,
        {"error": "API key lacks required scope: clients:read"},
    )


async def test_openapi_has_every_route_with_scope_and_parameters(relay: Any) -> None:
    got = await relay.call("GET", "/openapi.json")
    assert got.status == 200
    doc = got.json()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["ApiKeyAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
    }
    for route in ROUTES:
        op = doc["paths"][openapi_path(route)][route.method.lower()]
        assert op["summary"] == route.summary
        if route.scope:
            assert op["x-scope"] == route.scope
            assert op["security"] == [{"ApiKeyAuth": [route.scope]}]
        elif route.keyed:  # a key is needed, no scope (GET /api/key)
            assert op["security"] == [{"ApiKeyAuth": []}]
        else:
            assert op["security"] == []
        in_params = {(p["name"], p["in"]) for p in op.get("parameters", [])}
        body = (op.get("requestBody") or {}).get("content", {}).get("application/json", {})
        body_props = body.get("schema", {}).get("properties", {})
        for param in route.params:
            places = set()
            if "query" in param.sources:
                places.add((param.name, "query"))
            if "path" in param.sources:
                places.add((param.name, "path"))
            assert places <= in_params, (route.path, param.name)
            if "body" in param.sources and route.method != "GET":
                assert param.name in body_props, (route.path, param.name)
                if param.type:
                    assert body_props[param.name]["type"] == param.type
            elif not places:
                pytest.fail(f"{route.path}: {param.name} appears nowhere")
        if route.action:
            assert op["x-action"] == route.action


async def test_docs_page_renders_the_document(relay: Any) -> None:
    got = await relay.call("GET", "/docs")
    assert got.status == 200
    assert got.headers["Content-Type"].startswith("text/html")
    html = got.body.decode()
    assert 'fetch("openapi.json")' in html  # beside /docs: under the base path too
    assert "x-api-key" in html
    assert "http://" not in html.replace("http://x", "") and "https://" not in html  # no CDN


async def test_probe_rate_limit(relay_factory: Any) -> None:
    relay = await relay_factory(probe_rate_limit=2)
    statuses = [(await relay.call("GET", "/api/clients/x/active")).status for _ in range(3)]
    assert statuses == [404, 404, 429]
