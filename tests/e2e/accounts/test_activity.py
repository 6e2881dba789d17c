"""An account's audit logs over /auth on SQLite and PostgreSQL: GET /auth/remote-request-logs
(the cross-world requests a /ws/api socket of one world sends to another world of the account)
and GET /auth/activity (connections, cross-world requests and API calls in one feed, with its
filters and pages); what one account sees of another's: nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
from tests.support.accounts import Auth


async def signed_up(auth: Auth, email: str) -> tuple[str, str]:
    made = await auth.register(email)
    return made["sessionToken"], made["id"]


async def remote_requests(relay: Any, key: str, source: str, targets: list[str]) -> list[Any]:
    """Send one `remote-request` (world-info) per target over /ws/api bound to `source`."""
    answers = []
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(relay.url + "/ws/api")
        await ws.send_str(orjson.dumps({"type": "auth", "token": key, "clientId": source}).decode())
        hello = orjson.loads((await ws.receive(timeout=5)).data)
        assert hello["type"] == "connected", hello
        for i, target in enumerate(targets):
            frame = {"type": "remote-request", "requestId": f"r{i}", "targetClientId": target,
                     "action": "world-info", "payload": {}}  # fmt: skip
            await ws.send_str(orjson.dumps(frame).decode())
            answers.append(orjson.loads((await ws.receive(timeout=5)).data))
        await ws.close()
    return answers


async def until(check: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within 5 s")


async def test_remote_request_logs_and_the_activity_feed(
    make_auth: Callable[..., Awaitable[Auth]],
) -> None:
    auth = await make_auth(activity_flush_interval=0.1)
    alice, account = await signed_up(auth, "feed@example.com")
    bob, bob_account = await signed_up(auth, "other-feed@example.com")
    made = await auth.call(
        "POST", "/auth/api-keys", session=alice,
        json={"name": "bot", "scopes": ["world:info"]},
    )  # fmt: skip
    key = made.json()["key"]
    await auth.relay.world("feed-1", account=account, worldTitle="One")
    await auth.relay.world("feed-2", account=account, worldTitle="Two")
    await auth.relay.world("bob-1", account=bob_account)
    ok = await auth.relay.call("GET", "/world-info", key=key, params={"clientId": "feed-1"})
    missing = await auth.relay.call("GET", "/world-info", key=key, params={"clientId": "nope"})
    assert (ok.status, missing.status) == (200, 404)
    answers = await remote_requests(auth.relay, key, "feed-1", ["feed-2", "bob-1"])
    assert [a["success"] for a in answers] == [True, False]

    async def logged() -> bool:
        got = (await auth.call("GET", "/auth/remote-request-logs", session=alice)).json()
        return bool(got["total"] == 2)

    await until(logged)
    logs = (await auth.call("GET", "/auth/remote-request-logs", session=alice)).json()
    assert (logs["limit"], logs["offset"], logs["total"]) == (50, 0, 2)
    failed, done = logs["logs"]
    assert {k: done[k] for k in ("sourceClientId", "targetClientId", "action", "success")} == {
        "sourceClientId": "feed-1",
        "targetClientId": "feed-2",
        "action": "world-info",
        "success": True,
    }
    assert done["errorMessage"] == "" and done["sourceIp"].startswith("127.0.0.1")
    assert done["sourceTokenId"] == made.json()["id"]
    assert (failed["targetClientId"], failed["success"]) == ("bob-1", False)
    assert failed["errorMessage"] == "Invalid API key for this client ID"
    one = await auth.call("GET", "/auth/remote-request-logs?limit=1&offset=1", session=alice)
    assert [e["targetClientId"] for e in one.json()["logs"]] == ["feed-2"]

    async def feed(query: str = "", session: str = alice) -> Any:
        answer = await auth.call("GET", "/auth/activity" + query, session=session)
        assert answer.status == 200, answer.body
        return answer.json()

    async def calls_recorded() -> bool:
        return len((await feed("?type=api_request"))["events"]) >= 2

    await until(calls_recorded)
    everything = await feed()
    kinds = [e["type"] for e in everything["events"]]
    assert kinds.count("connection") == 2 and kinds.count("remote_request") == 2
    assert kinds.count("api_request") >= 2 and everything["total"] == len(kinds)
    times = [e["createdAt"] for e in everything["events"]]
    assert times == sorted(times, reverse=True)
    connection = next(e for e in everything["events"] if e["type"] == "connection")
    assert connection["eventSubtype"] == "connect" and connection["userId"] == account
    assert connection["worldTitle"] in ("One", "Two") and "action" not in connection
    calls = (await feed("?type=api_request&action=/world-info"))["events"]
    assert {(c["clientId"], c["success"]) for c in calls} == {("feed-1", True), ("nope", False)}
    assert all(c["tokenName"] == "bot" and c["description"].startswith("GET /world-info")
               for c in calls)  # fmt: skip
    # filters
    # `success` and `action` apply to cross-world and API rows, not to connections (as in the
    # reference: a connection has neither)
    failures = (await feed("?success=false"))["events"]
    assert {(e["type"], e["clientId"]) for e in failures} == {
        ("remote_request", "feed-1"),
        ("api_request", "nope"),
        ("connection", "feed-1"),
        ("connection", "feed-2"),
    }
    tunnel = (await feed("?action=world-info"))["events"]
    assert sorted(e["type"] for e in tunnel) == ["connection"] * 2 + ["remote_request"] * 2
    world_2 = (await feed("?world=feed-2"))["events"]
    assert sorted(e["type"] for e in world_2) == ["connection", "remote_request"]
    assert (await feed("?since=2999-01-01T00:00:00Z"))["events"] == []
    assert (await feed("?until=2000-01-01T00:00:00Z"))["total"] == 0
    assert (await feed("?since=yesterday"))["total"] == everything["total"]  # ignored
    assert (await feed("?type=module_event"))["events"] == []
    # pages are right at any offset; total counts every match
    total = everything["total"]
    pages = [await feed(f"?limit=2&offset={offset}") for offset in range(0, total, 2)]
    assert [e["id"] for p in pages for e in p["events"]] == [e["id"] for e in everything["events"]]
    assert {p["total"] for p in pages} == {total}
    odd = await feed("?limit=0&offset=-5")
    assert (odd["limit"], odd["offset"]) == (50, 0)
    # refusals
    bad = await auth.call("GET", "/auth/activity?type=gossip", session=alice)
    assert (bad.status, bad.json()) == (
        400,
        {"error": "type must be one of connection, remote_request, module_event, api_request"},
    )
    long = await auth.call("GET", "/auth/activity?world=" + "x" * 300, session=alice)
    assert (long.status, long.json()) == (
        400,
        {"error": "'world' is too long (at most 256 characters)"},
    )
    for path in ("/auth/activity", "/auth/remote-request-logs"):
        anonymous = await auth.call("GET", path)
        assert anonymous.status == 401
        with_key = await auth.call("GET", path, key=key)
        assert with_key.status == 401
    # bob sees only his own world's connection, nothing of alice's
    bobs = await feed(session=bob)
    assert [(e["type"], e["clientId"]) for e in bobs["events"]] == [("connection", "bob-1")]
    assert (await auth.call("GET", "/auth/remote-request-logs", session=bob)).json()["total"] == 0


async def test_an_account_can_turn_the_cross_world_log_off(auth: Auth) -> None:
    session, account = await signed_up(auth, "nolog@example.com")
    put = await auth.call(
        "PUT", "/auth/notification-settings", session=session,
        json={"logCrossWorldRequests": False},
    )  # fmt: skip
    assert put.status == 200
    key = auth.relay.key(["world:info"], account=account)
    await auth.relay.world("quiet-1", account=account)
    await auth.relay.world("quiet-2", account=account)
    answers = await remote_requests(auth.relay, key, "quiet-1", ["quiet-2"])
    assert answers[0]["success"] is True
    await asyncio.sleep(0.3)
    logs = (await auth.call("GET", "/auth/remote-request-logs", session=session)).json()
    assert (logs["total"], logs["logs"]) == (0, [])


async def test_module_events_a_world_reports_are_listed_in_the_activity_feed(auth: Auth) -> None:
    alice, account = await signed_up(auth, "modules@example.com")
    bob, bob_account = await signed_up(auth, "other-modules@example.com")
    world = await auth.relay.world("mod-1", account=account, worldTitle="Mod World")
    bobs_world = await auth.relay.world("bob-mod", account=bob_account)
    notify = {"type": "module-notify", "event": "settings-change", "actor": "Gamemaster",
              "details": "core.time changed", "world": "Friday Game"}  # fmt: skip
    await world.emit(notify)
    # dropped, the socket staying open: not JSON, a missing or malformed event, oversized or
    # wrongly typed fields
    await world.emit_raw('{"type": "module-notify", "event": ')
    for bad in (
        {"event": None},
        {"event": 5},
        {"event": "x" * 65},
        {"event": "bad event"},
        {"details": "d" * 2001},
        {"details": ["a", "list"]},
        {"actor": {"name": "GM"}},
        {"actor": "a" * 257},
        {"world": 7},
    ):
        await world.emit({**notify, **bad})
    # details may be a JSON object; without `world` the world's known title is used
    await world.emit({"type": "module-notify", "event": "macro-execute",
                      "details": {"macro": "Heal"}})  # fmt: skip
    await bobs_world.emit({**notify, "actor": "Bob"})

    async def feed(query: str = "", session: str = alice) -> Any:
        answer = await auth.call("GET", "/auth/activity" + query, session=session)
        assert answer.status == 200, answer.body
        return answer.json()

    async def both_logged() -> bool:
        return bool((await feed("?type=module_event"))["total"] == 2)

    await until(both_logged)
    await asyncio.sleep(0.2)  # nothing more comes
    events = (await feed("?type=module_event"))["events"]
    assert len(events) == 2 and world.close_code is None
    macro, setting = events
    assert {k: v for k, v in setting.items() if k not in ("id", "createdAt")} == {
        "type": "module_event",
        "clientId": "mod-1",
        "worldTitle": "Friday Game",
        "action": "settings-change",
        "actor": "Gamemaster",
        "description": "core.time changed",
        "userId": account,
    }
    assert setting["id"].startswith("me_") and setting["id"] != macro["id"]
    assert (macro["action"], macro["worldTitle"]) == ("macro-execute", "Mod World")
    assert macro["description"] == '{"macro":"Heal"}' and "actor" not in macro
    # filters: action is the event type; success does not apply to module events
    settings = (await feed("?type=module_event&action=settings-change"))["events"]
    assert [e["id"] for e in settings] == [setting["id"]]
    assert [e["id"] for e in (await feed("?type=module_event&success=false"))["events"]] == [
        macro["id"],
        setting["id"],
    ]
    assert (await feed("?type=module_event&world=other"))["total"] == 0
    assert (await feed("?type=module_event&since=2999-01-01T00:00:00Z"))["total"] == 0
    everything = (await feed())["events"]
    assert sorted(e["type"] for e in everything) == ["connection", "module_event", "module_event"]
    # each account sees its own worlds' events only
    [bobs] = (await feed("?type=module_event", session=bob))["events"]
    assert (bobs["clientId"], bobs["actor"]) == ("bob-mod", "Bob")
