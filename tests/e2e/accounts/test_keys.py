"""Keys, connection tokens and worlds over /auth, on SQLite and PostgreSQL: every field of a
scoped key and its effect on the REST API, the refusals (which change nothing), and that one
account's session can never read or change another account's keys, tokens or worlds."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from tests.support.accounts import HEX64, Auth
from tests.support.relay import WorldDouble

from vttrelay.relay.accounts import keys, users

ALL = ["entity:read", "world:info"]


async def signed_up(auth: Auth, email: str) -> tuple[str, str]:
    """(session, account) of a new account."""
    made = await auth.register(email)
    return made["sessionToken"], made["id"]


async def create(auth: Auth, session: str, **body: Any) -> Any:
    answer = await auth.call("POST", "/auth/api-keys", session=session, json=body)
    assert answer.status == 201, answer.body
    return answer.json()


async def test_create_list_update_regenerate_delete_a_key(auth: Auth) -> None:
    session, account = await signed_up(auth, "keys@example.com")
    made = await create(
        auth,
        session,
        name="Test Scoped Key",
        scopes=["entity:read", "structure:read"],
        monthlyLimit="500",
        scopedClientIds=["w1", "w2", ""],
        scopedUserId="u0",
        scopedUserIds={"w1": "u1"},
        ratePerMinute=120,
        expiresAt="2099-01-01T00:00:00Z",
    )
    assert HEX64.match(made["key"])
    assert {k: made[k] for k in made if k not in ("key", "id", "createdAt")} == {
        "name": "Test Scoped Key",
        "scopes": ["entity:read", "structure:read"],
        "scopedClientId": "",
        "scopedClientIds": ["w1", "w2"],
        "scopedUserId": "u0",
        "scopedUserIds": {"w1": "u1"},
        "monthlyLimit": 500,
        "ratePerMinute": 120,
        "expiresAt": "2099-01-01T00:00:00Z",
        "enabled": True,
    }
    info = (await auth.relay.call("GET", "/api/key", key=made["key"])).json()
    assert info["account"] == account and info["clientIds"] == ["w1", "w2"]
    assert info["ratePerMinute"] == 120
    # stored as a hash: the secret is nowhere in the store
    assert all(
        made["key"] not in str(row) for row in auth.relay.store.db.all("SELECT * FROM api_keys")
    )
    listed = (await auth.call("GET", "/auth/api-keys", session=session)).json()["keys"]
    [entry] = listed
    assert re.fullmatch(r"^.{8}\.\.\.$", entry["key"]) and entry["key"][:8] == made["key"][:8]
    assert entry["isExpired"] is False and entry["requestsThisMonth"] == 0
    answer = await auth.call(
        "PATCH",
        f"/auth/api-keys/{made['id']}",
        session=session,
        json={"name": "Updated Scoped Key", "monthlyLimit": 1000, "scopedClientIds": None},
    )
    assert answer.status == 200
    patched = answer.json()
    assert patched["name"] == "Updated Scoped Key" and patched["monthlyLimit"] == 1000
    assert patched["scopedClientIds"] is None and patched["scopes"] == made["scopes"]
    assert "key" not in patched and "updatedAt" in patched
    # disabling takes effect at once
    off = await auth.call(
        "PATCH", f"/auth/api-keys/{made['id']}", session=session, json={"enabled": False}
    )
    assert off.json()["enabled"] is False
    refused = await auth.relay.call("GET", "/api/key", key=made["key"])
    assert (refused.status, refused.json()) == (401, {"error": "API key is disabled"})
    await auth.call(
        "PATCH", f"/auth/api-keys/{made['id']}", session=session, json={"enabled": True}
    )
    regenerated = await auth.call(
        "POST", f"/auth/api-keys/{made['id']}/regenerate", session=session
    )
    new_key = regenerated.json()["key"]
    assert HEX64.match(new_key) and new_key != made["key"]
    assert (await auth.relay.call("GET", "/api/key", key=made["key"])).status == 401
    assert (await auth.relay.call("GET", "/api/key", key=new_key)).json()["name"] == (
        "Updated Scoped Key"
    )
    deleted = await auth.call("DELETE", f"/auth/api-keys/{made['id']}", session=session)
    assert deleted.json() == {"message": "API key deleted", "success": True}
    assert (await auth.relay.call("GET", "/api/key", key=new_key)).status == 401
    for method, path in (
        ("PATCH", "/auth/api-keys/999999"),
        ("DELETE", "/auth/api-keys/999999"),
        ("POST", "/auth/api-keys/999999/regenerate"),
        ("DELETE", f"/auth/api-keys/{made['id']}"),
    ):
        answer = await auth.call(method, path, session=session, json={"name": "x"})
        assert (answer.status, answer.json()) == (404, {"error": "API key not found"})
    bad = await auth.call("DELETE", "/auth/api-keys/" + "x" * 100, session=session)
    assert (bad.status, bad.json()) == (400, {"error": "Invalid key ID"})


async def test_key_refusals_change_nothing(auth: Auth) -> None:
    session, _ = await signed_up(auth, "refusals@example.com")
    cases = [
        ({}, "Name is required"),
        ({"name": "k"}, "At least one scope is required"),
        ({"name": "k", "scopes": []}, "At least one scope is required"),
        ({"name": "k", "scopes": ["not-a-real-scope"]}, "Invalid scope: not-a-real-scope"),
        ({"name": "k", "scopes": "entity:read"}, "'scopes' must be an array of scope names"),
        ({"name": 5, "scopes": ALL}, "'name' must be a string"),
        ({"name": "k" * 200, "scopes": ALL}, "'name' must be at most 128 characters"),
        ({"name": "k", "scopes": ALL, "monthlyLimit": "lots"},
         "'monthlyLimit' must be a whole number from 0 to 9007199254740991"),
        ({"name": "k", "scopes": ALL, "monthlyLimit": -1},
         "'monthlyLimit' must be a whole number from 0 to 9007199254740991"),
        ({"name": "k", "scopes": ALL, "expiresAt": "tomorrow"},
         "'expiresAt' must be an RFC 3339 time such as 2026-12-31T23:59:59Z"),
        ({"name": "k", "scopes": ALL, "scopedClientIds": [f"w{i}" for i in range(101)]},
         "'scopedClientIds' must be at most 100 client ids"),
        ({"name": "k", "scopes": ALL, "scopedClientIds": ["../etc"]},
         "'scopedClientIds' must be at most 100 client ids"),
        ({"name": "k", "scopes": ALL, "scopedUserIds": ["u1"]},
         "'scopedUserIds' must be an object of at most 100 clientId: userId pairs"),
    ]  # fmt: skip
    for body, text in cases:
        answer = await auth.call("POST", "/auth/api-keys", session=session, json=body)
        assert (answer.status, answer.json()) == (400, {"error": text}), body
    bad = await auth.call(
        "POST", "/auth/api-keys", session=session, data=b"{", headers={"Content-Type": "x"}
    )
    assert bad.status == 400 and bad.json()["error"].startswith("invalid JSON: ")
    made = await create(auth, session, name="k", scopes=ALL)
    for body in ({"scopes": []}, {"enabled": "yes"}, {"expiresAt": 5}):
        answer = await auth.call(
            "PATCH", f"/auth/api-keys/{made['id']}", session=session, json=body
        )
        assert answer.status == 400
    [entry] = (await auth.call("GET", "/auth/api-keys", session=session)).json()["keys"]
    assert entry["scopes"] == ALL and entry["enabled"] is True and entry["expiresAt"] is None


async def test_api_keys_are_refused_on_the_account_routes(auth: Auth) -> None:
    session, account = await signed_up(auth, "nokeys@example.com")
    key = (await create(auth, session, name="k", scopes=ALL))["key"]
    for method, path in (("POST", "/auth/api-keys"), ("GET", "/auth/api-keys")):
        answer = await auth.call(method, path, key=key, json={"name": "x", "scopes": ALL})
        assert (answer.status, answer.json()) == (
            401,
            {"error": "Invalid or expired session. Please log in again."},
        )
    assert len(auth.relay.store.list_keys(account)) == 1


async def test_monthly_limit_expiry_and_forced_users_apply_to_the_rest_api(auth: Auth) -> None:
    session, account = await signed_up(auth, "limits-key@example.com")
    w1 = await auth.relay.world("w1", account=account)
    await auth.relay.world("w2", account=account)
    limited = await create(auth, session, name="k", scopes=ALL, monthlyLimit=2)
    for _ in range(2):
        assert (await auth.relay.call("GET", "/api/key", key=limited["key"])).status == 200
    over = await auth.relay.call("GET", "/api/key", key=limited["key"])
    assert (over.status, over.json()) == (
        429,
        {"error": "Scoped key monthly request limit exceeded"},
    )
    expired = await create(auth, session, name="k", scopes=ALL, expiresAt="2001-01-01T00:00:00Z")
    answer = await auth.relay.call("GET", "/api/key", key=expired["key"])
    assert (answer.status, answer.json()) == (401, {"error": "API key has expired"})
    users = await create(
        auth, session, name="k", scopes=ALL, scopedUserId="u0", scopedUserIds={"w1": "u1"}
    )
    for client_id, user in (("w1", "u1"), ("w2", "u0")):
        answer = await auth.relay.call(
            "GET", "/world-info", key=users["key"], params={"clientId": client_id, "userId": "gm"}
        )
        assert answer.status == 200
        assert answer.json()["data"]["echo"]["userId"] == user
    assert w1.received  # the world saw the call


async def test_connection_tokens_and_worlds(auth: Auth) -> None:
    session, account = await signed_up(auth, "tokens@example.com")
    minted = await auth.call("POST", "/auth/connection-tokens", session=session)
    assert minted.status == 201
    body = minted.json()
    assert len(body["code"]) == 6 and body["expiresIn"] == 600
    paired = await auth.call(
        "POST",
        "/auth/pair",
        json={"code": body["code"], "worldId": "test-world", "worldTitle": "T"},
    )
    assert paired.status == 200
    token, client_id = paired.json()["token"], paired.json()["clientId"]
    assert re.fullmatch(r"fvtt_[a-z0-9]{16}", client_id)
    listed = (await auth.call("GET", "/auth/connection-tokens", session=session)).json()
    assert listed["total"] == 1
    [entry] = listed["tokens"]
    assert entry["clientId"] == client_id and "tokenHash" not in entry and token not in str(entry)
    answer = await auth.call(
        "PATCH",
        f"/auth/connection-tokens/{entry['id']}",
        session=session,
        json={"name": "Table PC", "allowedIps": "127.0.0.1, 10.0.0.0/8"},
    )
    assert (answer.status, answer.json()) == (200, {"success": True})
    for body_, text in (
        ({"allowedIps": "nope"}, 'Invalid allowedIps: invalid IP or CIDR: "nope"'),
        ({"name": 5}, "Invalid JSON body"),
    ):
        answer = await auth.call(
            "PATCH", f"/auth/connection-tokens/{entry['id']}", session=session, json=body_
        )
        assert (answer.status, answer.json()) == (400, {"error": text})
    empty = await auth.call("PATCH", f"/auth/connection-tokens/{entry['id']}", session=session)
    assert (empty.status, empty.json()) == (400, {"error": "Invalid JSON body"})
    [entry] = (await auth.call("GET", "/auth/connection-tokens", session=session)).json()["tokens"]
    assert (entry["name"], entry["allowedIps"]) == ("Table PC", "127.0.0.1,10.0.0.0/8")
    double = WorldDouble(auth.relay.ws_url, client_id, token)
    auth.relay.worlds.append(double)
    await double.connect()
    worlds = (await auth.call("GET", "/auth/known-clients", session=session)).json()["clients"]
    assert [(w["clientId"], w["isOnline"], w["worldId"]) for w in worlds] == [
        (client_id, True, "test-world")
    ]
    # the live socket's token, as listed with the world
    assert worlds[0]["activeTokenId"] == entry["id"]
    assert [t["id"] for t in worlds[0]["tokens"]] == [entry["id"]]
    # a code bound to that world pairs it again as itself
    bound = await auth.call(
        "POST", "/auth/connection-tokens", session=session, json={"clientId": client_id}
    )
    again = await auth.call(
        "POST", "/auth/pair", json={"code": bound.json()["code"], "worldId": "other-world"}
    )
    assert again.json()["clientId"] == client_id
    revoked = await auth.call("DELETE", f"/auth/connection-tokens/{entry['id']}", session=session)
    assert revoked.json() == {
        "disconnectedClients": 1,
        "message": "Connection token revoked",
        "success": True,
    }
    assert await asyncio.wait_for(double.wait_closed(), 5) == 4002
    assert double.close_reason == "Connection token revoked"
    twice = await auth.call("DELETE", f"/auth/connection-tokens/{entry['id']}", session=session)
    assert (twice.status, twice.json()) == (404, {"error": "Token not found"})
    forgot = await auth.call("DELETE", f"/auth/known-clients/{client_id}", session=session)
    assert forgot.json() == {
        "disconnected": False,
        "message": "Known client removed",
        "success": True,
    }
    assert (await auth.call("GET", "/auth/known-clients", session=session)).json() == {
        "clients": []
    }
    assert auth.relay.store.list_tokens(account) and not [
        t for t in auth.relay.store.list_tokens(account) if t.revoked_at is None
    ]
    unknown = await auth.call(
        "POST", "/auth/connection-tokens", session=session, json={"clientId": "fvtt_nope"}
    )
    assert (unknown.status, unknown.json()) == (
        404,
        {"error": "clientId not found in your known clients"},
    )


async def test_one_account_never_reaches_anothers_keys_tokens_or_worlds(auth: Auth) -> None:
    alice, alice_account = await signed_up(auth, "alice@example.com")
    bob, _ = await signed_up(auth, "bob@example.com")
    key = await create(auth, alice, name="alice's", scopes=ALL)
    world = await auth.relay.world("alice-world", account=alice_account)
    [token] = auth.relay.store.list_tokens(alice_account)
    attempts = [
        ("PATCH", f"/auth/api-keys/{key['id']}", {"name": "mine now"}, "API key not found"),
        ("DELETE", f"/auth/api-keys/{key['id']}", None, "API key not found"),
        ("POST", f"/auth/api-keys/{key['id']}/regenerate", None, "API key not found"),
        ("PATCH", f"/auth/connection-tokens/{token.id}", {"name": "x"}, "Token not found"),
        ("DELETE", f"/auth/connection-tokens/{token.id}", None, "Token not found"),
        ("DELETE", "/auth/known-clients/alice-world", None, "Known client not found"),
        ("POST", "/auth/connection-tokens", {"clientId": "alice-world"},
         "clientId not found in your known clients"),
    ]  # fmt: skip
    for method, path, body, text in attempts:
        answer = await auth.call(method, path, session=bob, json=body)
        assert (answer.status, answer.json()) == (404, {"error": text}), path
    assert (await auth.call("GET", "/auth/api-keys", session=bob)).json() == {"keys": []}
    assert (await auth.call("GET", "/auth/connection-tokens", session=bob)).json() == {
        "tokens": [],
        "total": 0,
    }
    assert (await auth.call("GET", "/auth/known-clients", session=bob)).json() == {"clients": []}
    # everything of alice is as it was
    info = await auth.relay.call("GET", "/api/key", key=key["key"])
    assert info.status == 200 and info.json()["name"] == "alice's"
    [entry] = (await auth.call("GET", "/auth/api-keys", session=alice)).json()["keys"]
    assert entry["name"] == "alice's"
    assert [t.id for t in auth.relay.store.list_tokens(alice_account) if t.revoked_at is None] == [
        token.id
    ]
    answer = await auth.relay.call(
        "GET", "/world-info", key=key["key"], params={"clientId": "alice-world"}
    )
    assert answer.status == 200 and world.received  # the world is still connected


async def test_an_account_has_bounded_keys_codes_and_sessions(
    auth: Auth, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keys, "MAX_KEYS", 2)
    monkeypatch.setattr(keys, "MAX_OPEN_CODES", 2)
    monkeypatch.setattr(users, "MAX_SESSIONS", 2)
    session, account = await signed_up(auth, "bounded@example.com")
    for _ in range(2):
        await create(auth, session, name="k", scopes=ALL)
    over = await auth.call(
        "POST", "/auth/api-keys", session=session, json={"name": "k", "scopes": ALL}
    )
    assert (over.status, over.json()) == (400, {"error": "At most 2 API keys per account"})
    for _ in range(2):
        assert (await auth.call("POST", "/auth/connection-tokens", session=session)).status == 201
    over = await auth.call("POST", "/auth/connection-tokens", session=session)
    assert (over.status, over.json()) == (
        429,
        {"error": "At most 2 pairing codes may wait to be used"},
    )
    newer = [await auth.login("bounded@example.com") for _ in range(2)]
    assert (await auth.call("GET", "/auth/user-data", session=session)).status == 401  # oldest
    for token in newer:
        assert (await auth.call("GET", "/auth/user-data", session=token)).status == 200
    assert len(auth.relay.store.list_keys(account)) == 2


async def test_connection_logs(auth: Auth) -> None:
    alice, account = await signed_up(auth, "logs@example.com")
    bob, _ = await signed_up(auth, "nologs@example.com")
    for client_id in ("log-world-1", "log-world-2"):
        double = await auth.relay.world(client_id, account=account, worldTitle=f"T {client_id}")
        await double.close()
    for _ in range(50):
        listed = (await auth.call("GET", "/auth/connection-logs", session=alice)).json()
        if listed["total"] == 2:
            break
        await asyncio.sleep(0.05)
    assert (listed["limit"], listed["offset"], listed["total"]) == (50, 0, 2)
    assert [log["clientId"] for log in listed["logs"]] == ["log-world-2", "log-world-1"]
    first = listed["logs"][1]
    assert first["worldTitle"] == "T log-world-1" and first["ipAddress"].startswith("127.0.0.1")
    assert first["systemId"] == "dnd5e" and first["tokenName"] == "log-world-1"
    page = (await auth.call("GET", "/auth/connection-logs?limit=1&offset=1", session=alice)).json()
    assert (page["total"], [log["clientId"] for log in page["logs"]]) == (2, ["log-world-1"])
    odd = (await auth.call("GET", "/auth/connection-logs?limit=x&offset=-3", session=alice)).json()
    assert (odd["limit"], odd["offset"]) == (50, 0)
    assert (await auth.call("GET", "/auth/connection-logs", session=bob)).json() == {
        "limit": 50,
        "offset": 0,
        "total": 0,
        "logs": [],
    }
