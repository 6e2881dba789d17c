"""Known worlds over /auth on SQLite and PostgreSQL: a world's cross-world settings, its linked
credential and auto-start flag (PATCH), its users (GET .../users, kept while it is offline), the
refusals in the reference's order (which change nothing), and that one account's session can
never read or change another account's worlds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tests.support.accounts import Auth

from vttrelay.relay.accounts import worlds

CREDENTIAL = {
    "name": "Home server",
    "foundryUrl": "http://127.0.0.1:30000",
    "foundryUsername": "gm",
    "foundryPassword": "secret",
}


async def signed_up(auth: Auth, email: str) -> tuple[str, str]:
    made = await auth.register(email)
    return made["sessionToken"], made["id"]


async def listed(auth: Auth, session: str) -> dict[str, dict[str, Any]]:
    answer = await auth.call("GET", "/auth/known-clients", session=session)
    assert answer.status == 200, answer.body
    return {w["clientId"]: w for w in answer.json()["clients"]}


async def patch(auth: Auth, session: str, path: str, body: Any) -> tuple[int, Any]:
    answer = await auth.call("PATCH", path, session=session, json=body)
    return answer.status, answer.json()


async def test_cross_world_settings_are_stored_validated_and_listed(auth: Auth) -> None:
    session, account = await signed_up(auth, "cross@example.com")
    for client_id in ("cw-a", "cw-b", "cw-c"):
        await (await auth.relay.world(client_id, account=account)).close()
    fresh = (await listed(auth, session))["cw-a"]
    assert (fresh["allowedTargetClients"], fresh["remoteScopes"]) == (None, None)
    assert (fresh["remoteRequestsPerHour"], fresh["autoStartOnRemoteRequest"]) == (0, False)
    assert fresh["credentialId"] is None and fresh["activeTokenId"] == 0
    # the world itself is dropped from its targets silently
    done = await patch(
        auth,
        session,
        "/auth/known-clients/cw-a",
        {
            "allowedTargetClients": ["cw-b", "cw-a", "cw-c"],
            "remoteScopes": ["entity:read", "roll:execute"],
            "remoteRequestsPerHour": 120,
        },
    )
    assert done == (200, {"success": True})
    world = (await listed(auth, session))["cw-a"]
    assert world["allowedTargetClients"] == ["cw-b", "cw-c"]
    assert world["remoteScopes"] == ["entity:read", "roll:execute"]
    assert world["remoteRequestsPerHour"] == 120
    # absent fields are kept; [] clears
    assert (await patch(auth, session, "/auth/known-clients/cw-a", {"remoteScopes": []}))[0] == 200
    world = (await listed(auth, session))["cw-a"]
    assert world["remoteScopes"] is None and world["allowedTargetClients"] == ["cw-b", "cw-c"]
    # refusals, in order, change nothing
    cases: list[tuple[str, Any, int, str]] = [
        ("/auth/known-clients/" + "x" * 100, {}, 400, "Invalid client ID"),
        ("/auth/known-clients/cw-nope", {}, 404, "Known client not found"),
        ("/auth/known-clients/cw-a", None, 400, "Invalid JSON body"),
        ("/auth/known-clients/cw-a", [1], 400, "Invalid JSON body"),
        ("/auth/known-clients/cw-a", {"allowedTargetClients": "cw-b"}, 400, "Invalid JSON body"),
        ("/auth/known-clients/cw-a", {"remoteScopes": [1]}, 400, "Invalid JSON body"),
        ("/auth/known-clients/cw-a", {"remoteRequestsPerHour": "5"}, 400, "Invalid JSON body"),
        ("/auth/known-clients/cw-a", {"remoteRequestsPerHour": -1}, 400,
         "remoteRequestsPerHour must be between 0 and 1000000"),
        ("/auth/known-clients/cw-a", {"allowedTargetClients": ["cw-b", "cw-zzz"]}, 400,
         'allowedTargetClient "cw-zzz" not found in your known clients'),
        ("/auth/known-clients/cw-a", {"remoteScopes": ["entity:read", "not-a-scope"]}, 400,
         'unknown scope "not-a-scope"'),
        ("/auth/known-clients/cw-a", {"allowedTargetClients": ["cw-b"] * 201}, 400,
         "'allowedTargetClients' has at most 200 entries"),
    ]  # fmt: skip
    for path, body, status, text in cases:
        if body is None:
            answer = await auth.call("PATCH", path, session=session, data=b"{not json")
        else:
            answer = await auth.call("PATCH", path, session=session, json=body)
        assert (answer.status, answer.json()) == (status, {"error": text}), (path, body)
    assert (await listed(auth, session))["cw-a"] == world
    # "*" is every world; forgetting a world takes it out of its siblings' lists, not of "*"
    await patch(auth, session, "/auth/known-clients/cw-b", {"allowedTargetClients": ["*", "cw-c"]})
    forgot = await auth.call("DELETE", "/auth/known-clients/cw-c", session=session)
    assert forgot.status == 200
    after = await listed(auth, session)
    assert after["cw-a"]["allowedTargetClients"] == ["cw-b"]
    assert after["cw-b"]["allowedTargetClients"] == ["*", "cw-c"]
    # without a session
    anonymous = await auth.call("PATCH", "/auth/known-clients/cw-a", json={})
    assert (anonymous.status, anonymous.json()) == (
        401,
        {"error": "Invalid or expired session. Please log in again."},
    )


async def test_credential_link_and_auto_start(auth: Auth) -> None:
    session, account = await signed_up(auth, "autostart@example.com")
    await (await auth.relay.world("as-world", account=account)).close()
    made = await auth.call("POST", "/auth/credentials", session=session, json=CREDENTIAL)
    assert made.status == 201
    credential_id = made.json()["id"]
    path = "/auth/known-clients/as-world"
    assert await patch(auth, session, path + "/credential", {"credentialId": credential_id}) == (
        200,
        {"success": True},
    )
    assert await patch(auth, session, path + "/auto-start", {"enabled": True}) == (
        200,
        {"success": True},
    )
    world = (await listed(auth, session))["as-world"]
    assert (world["credentialId"], world["autoStartOnRemoteRequest"]) == (credential_id, True)
    # what the headless auto-start reads
    stored = worlds.world_settings(auth.relay.store, "as-world")
    assert stored is not None and stored.can_auto_start and stored.account == account
    assert [w.client_id for w in worlds.auto_start_worlds(auth.relay.store, account)] == [
        "as-world"
    ]
    # refusals change nothing
    cases: list[tuple[str, Any, int, str]] = [
        (path + "/credential", {"credentialId": "cred_nope"}, 404, "Credential not found"),
        (path + "/credential", {"credentialId": 12}, 404, "Credential not found"),
        (path + "/credential", {"credentialId": True}, 400, "Invalid JSON body"),
        (path + "/credential", {"credentialId": "x" * 65}, 404, "Credential not found"),
        (path + "/auto-start", {"enabled": "yes"}, 400, "Invalid JSON body"),
        ("/auth/known-clients/nope/auto-start", {"enabled": True}, 404, "Known client not found"),
        ("/auth/known-clients/nope/credential", {"credentialId": None}, 404,
         "Known client not found"),
        ("/auth/known-clients/" + "x" * 100 + "/credential", {}, 400, "Invalid client ID"),
    ]  # fmt: skip
    for where, body, status, text in cases:
        assert await patch(auth, session, where, body) == (status, {"error": text}), body
    empty = await auth.call("PATCH", path + "/auto-start", session=session, data=b"")
    assert (empty.status, empty.json()) == (400, {"error": "Invalid JSON body"})
    assert (await listed(auth, session))["as-world"] == world
    # `enabled` absent means off; a deleted credential is unlinked
    assert (await patch(auth, session, path + "/auto-start", {}))[0] == 200
    deleted = await auth.call("DELETE", f"/auth/credentials/{credential_id}", session=session)
    assert deleted.status == 200
    world = (await listed(auth, session))["as-world"]
    assert (world["credentialId"], world["autoStartOnRemoteRequest"]) == (None, False)
    assert worlds.auto_start_worlds(auth.relay.store) == []
    # null unlinks (nothing linked: still 200)
    assert await patch(auth, session, path + "/credential", {"credentialId": None}) == (
        200,
        {"success": True},
    )


async def test_a_worlds_users_are_kept_while_it_is_offline(auth: Auth) -> None:
    session, account = await signed_up(auth, "users@example.com")
    world = await auth.relay.world("users-world", account=account)
    users = [
        {"id": "u-gm", "name": "Zed the GM", "role": 4, "active": True},
        {"id": "u-p1", "name": "Anna", "role": 1, "active": False},
        {"id": 5, "name": "not a user"},
        "junk",
    ]
    await world.emit({"type": "player-list", "users": users})
    path = "/auth/known-clients/users-world/users"
    for _ in range(100):
        got = (await auth.call("GET", path, session=session)).json()["users"]
        if len(got) == 2:
            break
        await asyncio.sleep(0.05)
    assert [(u["userId"], u["name"], u["role"], u["knownClientId"]) for u in got] == [
        ("u-p1", "Anna", 1, "users-world"),
        ("u-gm", "Zed the GM", 4, "users-world"),
    ]
    assert all(u["createdAt"] and u["updatedAt"] for u in got)
    await world.close()
    # offline: still listed
    assert len((await auth.call("GET", path, session=session)).json()["users"]) == 2
    # a new list replaces the old one
    again = await auth.relay.world("users-world", account=account)
    await again.emit({"type": "player-list", "users": users[:1]})
    for _ in range(100):
        got = (await auth.call("GET", path, session=session)).json()["users"]
        if len(got) == 1:
            break
        await asyncio.sleep(0.05)
    assert [u["userId"] for u in got] == ["u-gm"]
    unknown = await auth.call("GET", "/auth/known-clients/nope/users", session=session)
    assert (unknown.status, unknown.json()) == (404, {"error": "Known client not found"})
    # a world that never sent a list has none
    await (await auth.relay.world("quiet-world", account=account)).close()
    quiet = await auth.call("GET", "/auth/known-clients/quiet-world/users", session=session)
    assert quiet.json() == {"users": []}
    # forgetting the world forgets its users
    await auth.call("DELETE", "/auth/known-clients/users-world", session=session)
    assert (
        auth.relay.store.db.all("SELECT * FROM known_users WHERE client_id = 'users-world'") == []
    )


async def test_one_account_never_reaches_anothers_world_settings_or_users(auth: Auth) -> None:
    alice, alice_account = await signed_up(auth, "alice-w@example.com")
    bob, bob_account = await signed_up(auth, "bob-w@example.com")
    world = await auth.relay.world("alice-only", account=alice_account)
    await world.emit({"type": "player-list", "users": [{"id": "u1", "name": "A", "role": 4}]})
    await (await auth.relay.world("bob-world", account=bob_account)).close()
    mine = await auth.call("POST", "/auth/credentials", session=alice, json=CREDENTIAL)
    alice_credential = mine.json()["id"]
    theirs = await auth.call("POST", "/auth/credentials", session=bob, json=CREDENTIAL)
    bob_credential = theirs.json()["id"]
    before = (await listed(auth, alice))["alice-only"]
    attempts: list[tuple[str, str, Any]] = [
        ("PATCH", "/auth/known-clients/alice-only", {"remoteScopes": ["entity:read"]}),
        ("PATCH", "/auth/known-clients/alice-only/credential", {"credentialId": bob_credential}),
        ("PATCH", "/auth/known-clients/alice-only/auto-start", {"enabled": True}),
        ("GET", "/auth/known-clients/alice-only/users", None),
    ]
    for method, path, body in attempts:
        answer = await auth.call(method, path, session=bob, json=body)
        assert (answer.status, answer.json()) == (404, {"error": "Known client not found"}), path
    # bob can neither link alice's credential to his world nor name her world as a target
    stolen = await patch(
        auth, bob, "/auth/known-clients/bob-world/credential", {"credentialId": alice_credential}
    )
    assert stolen == (404, {"error": "Credential not found"})
    target = await patch(
        auth, bob, "/auth/known-clients/bob-world", {"allowedTargetClients": ["alice-only"]}
    )
    assert target == (
        400,
        {"error": 'allowedTargetClient "alice-only" not found in your known clients'},
    )
    assert (await listed(auth, alice))["alice-only"] == before
    bob_world = (await listed(auth, bob))["bob-world"]
    assert bob_world["credentialId"] is None and bob_world["allowedTargetClients"] is None


async def test_the_live_token_is_listed_by_every_instance(
    make_auth: Callable[..., Awaitable[Auth]], redis_server: Any
) -> None:
    """GET /auth/known-clients on one instance gives the token of a world another instance
    holds (the Redis directory carries it), and 0 once the world is gone."""
    first = await make_auth(redis_url=redis_server.url)
    second = await make_auth(redis_url=redis_server.url, database=first.relay.config.database)
    session, account = await signed_up(first, "fleet-list@example.com")
    world = await second.relay.world("fleet-live", account=account)
    tokens = (await first.call("GET", "/auth/connection-tokens", session=session)).json()
    [token_id] = [t["id"] for t in tokens["tokens"] if t["clientId"] == "fleet-live"]

    async def active() -> Any:
        entry = (await listed(first, session))["fleet-live"]
        return entry["activeTokenId"], entry["isOnline"]

    for _ in range(100):
        if await active() == (token_id, True):
            break
        await asyncio.sleep(0.05)
    assert await active() == (token_id, True)
    await world.close()
    for _ in range(100):
        if await active() == (0, False):
            break
        await asyncio.sleep(0.05)
    assert await active() == (0, False)


async def test_a_world_asks_for_its_accounts_worlds_on_its_socket(
    make_auth: Callable[..., Awaitable[Auth]],
) -> None:
    """The module's `get-known-clients` on /relay (accounts-auth.md §7.12)."""
    auth = await make_auth(token_check_interval=3600.0)  # the revoked token is asked with
    session, account = await signed_up(auth, "list@example.com")
    _, other_account = await signed_up(auth, "other-list@example.com")
    await (await auth.relay.world("list-b", account=account, worldTitle="B")).close()
    await (await auth.relay.world("list-theirs", account=other_account)).close()
    made = await auth.call("POST", "/auth/credentials", session=session, json=CREDENTIAL)
    await patch(auth, session, "/auth/known-clients/list-b/credential",
                {"credentialId": made.json()["id"]})  # fmt: skip
    await patch(auth, session, "/auth/known-clients/list-b/auto-start", {"enabled": True})
    world = await auth.relay.world("list-a", account=account, worldTitle="A")
    await patch(
        auth, session, "/auth/known-clients/list-a",
        {"allowedTargetClients": ["list-b"], "remoteScopes": ["entity:read"]},
    )  # fmt: skip

    async def ask(request_id: str) -> dict[str, Any]:
        await world.emit({"type": "get-known-clients", "requestId": request_id})
        for _ in range(100):
            for frame in world.received:
                if frame.get("type") == "known-clients-result" and frame["requestId"] == request_id:
                    return frame
            await asyncio.sleep(0.05)
        raise AssertionError("no known-clients-result")

    result = await ask("k1")
    assert result["tokenScopes"] == ["entity:read"]
    assert result["tokenAllowedTargets"] == ["list-b"]
    clients = {c["clientId"]: c for c in result["clients"]}
    assert set(clients) == {"list-a", "list-b"}  # never another account's world
    assert clients["list-a"]["isOnline"] is True and clients["list-a"]["canAutoStart"] is False
    assert clients["list-b"]["isOnline"] is False and clients["list-b"]["canAutoStart"] is True
    assert clients["list-b"]["worldTitle"] == "B"
    assert all(isinstance(c["publicUrl"], str) for c in result["clients"])
    assert set(clients["list-b"]) == {
        "clientId", "worldTitle", "customName", "systemTitle", "systemId", "isOnline",
        "canAutoStart", "publicUrl", "activeTokenId",
    }  # fmt: skip
    # the live world's token, as GET /auth/known-clients gives it; 0 offline
    rest = await listed(auth, session)
    assert clients["list-a"]["activeTokenId"] == rest["list-a"]["activeTokenId"] != 0
    assert clients["list-b"]["activeTokenId"] == 0
    # without a request id: answered with ""
    assert (await ask(""))["clients"]
    # the world's token revoked meanwhile (the relay closes it at its next check)
    auth.relay.store.db.run(
        "UPDATE connection_tokens SET revoked_at = 1 WHERE client_id = 'list-a'"
    )
    refused = await ask("k2")
    assert (refused["clients"], refused["error"]) == ([], "connection token not found or revoked")


async def test_the_cross_world_tunnel_follows_the_worlds_settings(auth: Auth) -> None:
    """A world's own `remote-request` on /relay (the module's tunnel), gated by what its owner
    set with PATCH /auth/known-clients/{id}, and logged."""
    session, account = await signed_up(auth, "tunnel@example.com")
    _, other_account = await signed_up(auth, "other-tunnel@example.com")
    source = await auth.relay.world("tn-a", account=account)
    target = await auth.relay.world("tn-b", account=account)
    await auth.relay.world("tn-theirs", account=other_account)
    await (await auth.relay.world("tn-c", account=account)).close()

    async def remote(request_id: str, **frame: Any) -> dict[str, Any]:
        await source.emit({"type": "remote-request", "requestId": request_id, **frame})
        for _ in range(100):
            for got in source.received:
                if got.get("type") == "remote-response" and got["requestId"] == request_id:
                    return got
            await asyncio.sleep(0.05)
        raise AssertionError("no remote-response")

    info: dict[str, Any] = {"targetClientId": "tn-b", "action": "world-info", "payload": {}}
    nothing = await remote("r0", **info)  # nothing granted yet
    assert (nothing["success"], nothing["status"]) == (False, 403)
    assert nothing["error"] == "Target world not allowed: tn-b"
    await patch(
        auth, session, "/auth/known-clients/tn-a",
        {"allowedTargetClients": ["tn-b", "tn-c"], "remoteScopes": ["world:info"],
         "remoteRequestsPerHour": 2},
    )  # fmt: skip
    done = await remote("r1", **info)
    assert done["success"] is True and "error" not in done
    echoed = done["data"]["data"]["echo"]
    assert echoed["type"] == "world-info" and echoed["_scopes"] == ["world:info"]
    assert target.received[-1] == echoed  # it reached tn-b
    refusals = [
        ({**info, "targetClientId": "tn-theirs"}, 403, "Target world not allowed: tn-theirs"),
        ({**info, "targetClientId": "tn-a"}, 400, "A world cannot send a remote-request to itself"),
        ({**info, "targetClientId": None}, 400, "'targetClientId' is required"),
        ({**info, "action": "roll"}, 403,
         "Scope not allowed for cross-world requests: roll:execute"),
        ({**info, "action": "gossip"}, 400, 'Unknown action: "gossip"'),
        ({**info, "payload": [1]}, 400, "'payload' must be an object"),
    ]  # fmt: skip
    for i, (frame, status, text) in enumerate(refusals):
        refused = await remote(f"x{i}", **frame)
        assert (refused["success"], refused["status"], refused["error"]) == (False, status, text)
    # an allowed target that is offline: the request core's answer
    offline = await remote("r2", **{**info, "targetClientId": "tn-c"})
    assert (offline["success"], offline["status"]) == (False, 404)
    # two calls an hour: the third is refused
    limited = await remote("r3", **info)
    assert (limited["status"], limited["error"]) == (
        429,
        "Cross-world request limit reached for this hour",
    )
    # "*" reaches every world of the account, never another account's
    await patch(auth, session, "/auth/known-clients/tn-a",
                {"allowedTargetClients": ["*"], "remoteRequestsPerHour": 0})  # fmt: skip
    theirs = await remote("r4", **{**info, "targetClientId": "tn-theirs"})
    assert (theirs["success"], theirs["status"]) == (False, 404)
    assert all(f.get("type") != "world-info" for f in auth.relay.worlds[2].received)
    # every call is in the cross-world log, with the world's token
    [token] = [t for t in auth.relay.store.list_tokens(account) if t.client_id == "tn-a"]

    async def all_logged() -> bool:
        got = (await auth.call("GET", "/auth/remote-request-logs", session=session)).json()
        return bool(got["total"] == 11)

    for _ in range(100):
        if await all_logged():
            break
        await asyncio.sleep(0.05)
    logs = (await auth.call("GET", "/auth/remote-request-logs", session=session)).json()["logs"]
    assert len(logs) == 11 and {e["sourceClientId"] for e in logs} == {"tn-a"}
    assert {e["sourceTokenId"] for e in logs} == {token.id}
    assert [e["success"] for e in logs].count(True) == 1
