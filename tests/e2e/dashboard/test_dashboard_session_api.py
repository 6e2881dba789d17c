"""The API as a signed-in dashboard session calls it (`/dashboard/api/...`,
`/dashboard/streams/...`) over real HTTP against a real relay and the real embedded world: no
key, but the session; a change needs the session's CSRF token and the dashboard's own origin; a
session reaches only its account's worlds (the operator names one); its calls count against the
rate limit and its streams against the stream slots like any key's, and are recorded in the
activity log.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
from tests.support.e2e import CLIENT_ID, api_for

from vttrelay.dashboard.calls import SESSION_KEY_NAME
from vttrelay.relay import activity
from vttrelay.relay.app import STATE


async def call(
    visitor: Any,
    method: str,
    path: str,
    body: Any = None,
    csrf: bool = True,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    sent = dict(headers or {})
    if csrf:
        sent["X-CSRF-Token"] = visitor.csrf
    data = None
    if body is not None:
        data = orjson.dumps(body)
        sent["content-type"] = "application/json"
    url = f"{visitor.url}/dashboard/api{path}"
    async with visitor.http.request(method, url, data=data, headers=sent) as resp:
        raw = await resp.read()
        return resp.status, orjson.loads(raw) if raw[:1] == b"{" else raw


async def test_a_session_calls_without_a_key_and_changes_only_with_its_csrf_token(
    relay: Any, world: Any, signin: Any
) -> None:
    gm = await signin(relay, "default")
    status, info = await call(gm, "GET", f"/world-info?clientId={CLIENT_ID}", csrf=False)
    assert status == 200 and info["data"]["world"]["title"] == "vttrelay Demo World"
    status, got = await call(gm, "POST", "/chat", {"content": "hi"}, csrf=False)
    assert status == 403 and "CSRF" in got["error"]
    status, got = await call(
        gm, "POST", "/chat", {"content": "hi"}, headers={"Origin": "http://evil.example"}
    )
    assert status == 403
    status, got = await call(
        gm, "POST", "/chat", {"content": "hi"}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert status == 403
    status, got = await call(gm, "POST", "/chat", {"content": "hi"})
    assert status == 200 and got["data"]["content"] == "hi"
    status, got = await call(gm, "POST", "/chat", {})
    assert status == 400 and got == {"error": "'content' is required"}  # as over REST

    # no session: 401, whatever the token
    async with aiohttp.ClientSession() as anonymous:
        url = f"{relay.url}/dashboard/api/world-info"
        async with anonymous.get(url, headers={"X-CSRF-Token": gm.csrf}) as resp:
            assert resp.status == 401
        url = f"{relay.url}/dashboard/streams/{CLIENT_ID}?channel=chat-events"
        async with anonymous.get(url) as resp:
            assert resp.status == 401

    # local routes read a key themselves: not offered; unknown routes: 404
    status, got = await call(gm, "GET", "/clients", csrf=False)
    assert status == 404
    status, got = await call(gm, "GET", "/no-such-route", csrf=False)
    assert status == 404

    # the scene picture, through the core like the rest
    status, png = await call(
        gm, "GET", f"/scene/image?clientId={CLIENT_ID}&active=true", csrf=False
    )
    assert status == 200 and png[:8] == b"\x89PNG\r\n\x1a\n"

    # each call is in the activity log as the session's, on the account, never the body
    state = relay.app[STATE]
    await asyncio.to_thread(state.activity.flush)
    rows = activity.find(relay.store.db, "default", activity.Filter(route="/chat"))
    assert [(r.method, r.status) for r in rows] == [("POST", 400), ("POST", 200)]
    assert {(r.key_name, r.world) for r in rows} == {(SESSION_KEY_NAME, "")}


async def test_a_session_reaches_only_its_accounts_worlds(
    relay: Any, world: Any, signin: Any
) -> None:
    bob = await signin(relay, "bob")
    status, got = await call(bob, "GET", f"/world-info?clientId={CLIENT_ID}", csrf=False)
    assert status == 401 and got["error"] == "Invalid API key for this client ID"
    status, got = await call(bob, "GET", "/world-info", csrf=False)
    assert status == 404 and got["error"] == "No connected Foundry clients found"
    status, _, _ = await bob.get(f"/dashboard/worlds/{CLIENT_ID}")
    assert status == 404
    url = f"{relay.url}/dashboard/streams/{CLIENT_ID}?channel=chat-events"
    async with bob.http.get(url) as resp:
        assert resp.status == 401

    operator = await signin(relay)
    status, got = await call(operator, "GET", "/world-info", csrf=False)
    assert status == 400 and "Choose a world" in got["error"]
    status, got = await call(operator, "GET", f"/world-info?clientId={CLIENT_ID}", csrf=False)
    assert status == 200


async def read_events(resp: aiohttp.ClientResponse, count: int) -> list[dict[str, Any]]:
    """The next `count` data events of a session stream (after `connected`)."""
    found: list[dict[str, Any]] = []
    async for raw in resp.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("data: ") and '"channel"' in line:
            found.append(orjson.loads(line[6:]))
            if len(found) == count:
                return found
    return found


async def test_a_session_stream_brings_readable_lines_and_counts_against_the_slots(
    relay_factory: Any, start_world: Any, signin: Any
) -> None:
    relay = await relay_factory(max_streams_per_channel=2, rate_per_minute=20)
    await start_world(relay)
    gm = await signin(relay, "default")
    url = f"{relay.url}/dashboard/streams/{CLIENT_ID}?channel=chat-events&channel=roll-events"
    first = await gm.http.get(url)
    second = await gm.http.get(url)
    try:
        assert first.status == second.status == 200
        async with gm.http.get(url) as third:  # the account's sessions hold both slots
            assert third.status == 429
            assert "Too many streams" in (await third.json())["error"]
        api = api_for(relay, ("dnd5e",))
        status, _ = await api(
            "POST", "/dnd5e/skill-check", {"actorUuid": "Actor.pipMonk000000001", "skill": "ste"}
        )
        assert status == 200
        events = await asyncio.wait_for(read_events(first, 2), 10)
        by_channel = {e["channel"]: e for e in events}
        roll = by_channel["roll-events"]
        assert roll["event"] == "roll"
        assert roll["line"]["speaker"] == "Pip Tealeaf" and roll["line"]["text"] == "Stealth"
        assert roll["line"]["total"] == str(roll["data"]["rollTotal"])  # raw data beside it
        chat = by_channel["chat-events"]
        assert chat["event"] == "chat-create" and chat["line"]["kind"] == "roll"
    finally:
        first.close()
        second.close()

    # a session's calls share the account's rate budget (20 a minute here)
    codes = [
        (await call(gm, "GET", f"/world-info?clientId={CLIENT_ID}", csrf=False))[0]
        for _ in range(25)
    ]
    assert codes.count(429) > 0 and codes[0] == 200
    url = f"{relay.url}/dashboard/streams/{CLIENT_ID}?channel=nope"
    async with gm.http.get(url) as bad:
        assert bad.status == 400

    # the streams are in the activity log as SSE routes are: the refused one at once
    await asyncio.to_thread(relay.app[STATE].activity.flush)
    found = activity.Filter(route="/chat/subscribe", status_class="4xx")
    refused = activity.find(relay.store.db, "default", found)
    assert [(r.status, r.key_name, r.world) for r in refused] == [
        (429, SESSION_KEY_NAME, CLIENT_ID)
    ]
