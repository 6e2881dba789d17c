"""Key and pair requests decided with a session over /auth (the reference's key-request suite),
on SQLite and PostgreSQL: details, approve with a subset of the scopes (device flow and web flow
with its exchange code), deny; a scope not asked for is refused."""

from __future__ import annotations

from tests.support.accounts import HEX64, Auth

ASKED = ["entity:read", "roll:read", "chat:read"]


async def ask(auth: Auth, **extra: object) -> str:
    answer = await auth.call(
        "POST",
        "/auth/key-request",
        json={"appName": "Test Discord Bot", "appDescription": "rolls dice", "scopes": ASKED,
              **extra},
    )  # fmt: skip
    assert answer.status == 201
    code: str = answer.json()["code"]
    return code


async def test_key_requests_device_and_web_flow(auth: Auth) -> None:
    made = await auth.register("apps@example.com")
    session = made["sessionToken"]
    code = await ask(auth)
    status = await auth.call("GET", f"/auth/key-request/{code}/status")
    assert status.json() == {"status": "pending"}
    details = await auth.call("GET", f"/auth/key-request/{code}", session=session)
    assert details.status == 200
    assert details.json()["appName"] == "Test Discord Bot"
    assert details.json()["requestedScopes"] == ASKED
    bad = await auth.call(
        "POST",
        f"/auth/key-request/{code}/approve",
        session=session,
        json={"scopes": ["execute-js"]},
    )
    assert bad.status == 400 and "execute-js" in bad.json()["error"]
    approved = await auth.call(
        "POST",
        f"/auth/key-request/{code}/approve",
        session=session,
        json={"scopes": ["entity:read", "roll:read"], "monthlyLimit": 100},
    )
    assert approved.status == 200
    body = approved.json()
    assert body["success"] is True and body["scopes"] == ["entity:read", "roll:read"]
    polled = (await auth.call("GET", f"/auth/key-request/{code}/status")).json()
    assert polled["status"] == "approved" and HEX64.match(polled["apiKey"])
    assert "chat:read" not in polled["scopes"]
    again = (await auth.call("GET", f"/auth/key-request/{code}/status")).json()
    assert again["status"] == "exchanged" and "apiKey" not in again
    info = (await auth.relay.call("GET", "/api/key", key=polled["apiKey"])).json()
    assert info["account"] == made["id"] and info["id"] == body["keyId"]
    [key] = (await auth.call("GET", "/auth/api-keys", session=session)).json()["keys"]
    assert key["monthlyLimit"] == 100 and key["name"] == "Test Discord Bot"
    # web flow: an exchange code, once
    code = await ask(auth, callbackUrl="https://example.com/foundry/callback")
    approved = await auth.call("POST", f"/auth/key-request/{code}/approve", session=session)
    exchange = approved.json()["exchangeCode"]
    got = await auth.call("POST", "/auth/key-request/exchange", json={"code": exchange})
    assert got.status == 200 and "entity:read" in got.json()["scopes"]
    assert (
        await auth.call("POST", "/auth/key-request/exchange", json={"code": exchange})
    ).status == 410
    # deny
    code = await ask(auth)
    denied = await auth.call("POST", f"/auth/key-request/{code}/deny", session=session)
    assert denied.json() == {"message": "Key request denied", "success": True}
    assert (await auth.call("GET", f"/auth/key-request/{code}/status")).json() == {
        "status": "denied"
    }
    twice = await auth.call("POST", f"/auth/key-request/{code}/deny", session=session)
    assert (twice.status, twice.json()) == (400, {"error": "Key request is not pending"})
    for path in ("/auth/key-request/ZZZZZZ", "/auth/key-request/ZZZZZZ/approve"):
        method = "GET" if path.count("/") == 3 else "POST"
        missing = await auth.call(method, path, session=session)
        assert (missing.status, missing.json()) == (404, {"error": "Key request not found"})
    nobody = await auth.call("GET", f"/auth/key-request/{code}")
    assert nobody.status == 401


async def test_pair_requests(auth: Auth) -> None:
    made = await auth.register("pairs@example.com")
    session = made["sessionToken"]
    asked = await auth.call(
        "POST", "/auth/pair-request", json={"worldId": "asking-world", "worldTitle": "Asking"}
    )
    code = asked.json()["code"]
    details = await auth.call("GET", f"/auth/pair-request/{code}", session=session)
    assert details.json()["worldId"] == "asking-world" and details.json()["status"] == "pending"
    approved = await auth.call("POST", f"/auth/pair-request/{code}/approve", session=session)
    assert approved.json() == {"success": True}
    polled = (await auth.call("GET", f"/auth/pair-request/{code}/status")).json()
    assert polled["status"] == "approved"
    paired = await auth.call(
        "POST", "/auth/pair", json={"code": polled["pairingCode"], "worldId": "asking-world"}
    )
    assert paired.status == 200
    worlds = (await auth.call("GET", "/auth/known-clients", session=session)).json()["clients"]
    assert [w["clientId"] for w in worlds] == [paired.json()["clientId"]]
    # the cross-world permissions a new world asks for are given to it when it pairs
    asked = await auth.call(
        "POST", "/auth/pair-request",
        json={"worldId": "second-world", "requestedRemoteScopes": ["entity:read"],
              "requestedTargetClients": [paired.json()["clientId"], "fvtt_unknown00000"]},
    )  # fmt: skip
    code = asked.json()["code"]
    await auth.call("POST", f"/auth/pair-request/{code}/approve", session=session)
    polled = (await auth.call("GET", f"/auth/pair-request/{code}/status")).json()
    second = await auth.call(
        "POST", "/auth/pair", json={"code": polled["pairingCode"], "worldId": "second-world"}
    )
    listed = (await auth.call("GET", "/auth/known-clients", session=session)).json()["clients"]
    [granted] = [w for w in listed if w["clientId"] == second.json()["clientId"]]
    assert granted["remoteScopes"] == ["entity:read"]
    assert granted["allowedTargetClients"] == [paired.json()["clientId"]]  # unknown ones dropped
    asked = await auth.call("POST", "/auth/pair-request", json={"worldId": "other-world"})
    code = asked.json()["code"]
    denied = await auth.call("POST", f"/auth/pair-request/{code}/deny", session=session)
    assert denied.json() == {"message": "Pair request denied", "success": True}
