"""The dashboard over plain HTTP against a real relay: sign-in tokens (once, expiry, rate
limit), the session cookie, CSRF refusal on every change, an account owner kept to their own
account, the path prefix, and the pair and key request pages."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
from tests.support.dashboard import signin_csrf_of

from vttrelay import cli
from vttrelay.dashboard.sessions import issue_signin_token
from vttrelay.relay import peer_limits
from vttrelay.relay.accounts import key_requests, pair_requests
from vttrelay.relay.accounts.key_requests import KeyAsk
from vttrelay.relay.accounts.pair_requests import PairAsk


async def _post_token(relay: Any, token: str, base: str = "") -> tuple[int, str, Any]:
    """Sign in as a browser does: the form (its CSRF cookie and field), then the POST."""
    url = relay.url + base + "/dashboard/signin"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(url) as resp:
            fields = {"token": token, "signin_csrf": signin_csrf_of(await resp.text())}
        async with http.post(url, data=fields, allow_redirects=False) as resp:
            return resp.status, await resp.text(), resp.headers


async def test_a_signin_token_works_once_and_sets_a_guarded_cookie(relay: Any) -> None:
    token = issue_signin_token(relay.store)
    status, _, headers = await _post_token(relay, token)
    assert status == 303 and headers["Location"] == "/dashboard/worlds"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith("vttrelay_session=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert (
        "Secure" not in cookie
    )  # plain http here; behind https (a trusted proxy's X-Forwarded-Proto) it is
    status, page, _ = await _post_token(relay, token)  # the same link again
    assert status == 401 and "already used, has expired" in page
    assert "Set-Cookie" not in _


async def test_an_expired_signin_token_is_refused(relay: Any, signin: Any) -> None:
    token = issue_signin_token(relay.store, None, ttl=60, now=time.time() - 61)
    status, page, headers = await _post_token(relay, token)
    assert status == 401 and "has expired" in page and "Set-Cookie" not in headers
    # no session: pages send you to sign in
    assert await _redirect(relay, "/dashboard/keys") == "/dashboard/signin?next=/dashboard/keys"


async def test_signin_attempts_are_rate_limited_per_ip(relay_factory: Any) -> None:
    relay = await relay_factory(signin_rate_limit=3)
    for _ in range(3):
        assert (await _post_token(relay, "guessed-token"))[0] == 401
    good = issue_signin_token(relay.store)
    status, page, _ = await _post_token(relay, good)
    assert status == 429 and "Too many sign-in attempts" in page
    # the refused attempt did not use the token up: once the quarter hour is over, it works
    relay.state.counters.forget(peer_limits.bucket(peer_limits.SIGNIN, "127.0.0.1"))
    assert (await _post_token(relay, good))[0] == 303


async def test_every_change_needs_the_csrf_token(relay: Any, signin: Any) -> None:
    world = await relay.world("world-1")
    visitor = await signin(relay)
    relay.key()  # one key to try to revoke
    key_id = relay.store.list_keys()[0].id
    changes: list[tuple[str, dict[str, str]]] = [
        ("/dashboard/keys", {"name": "k", "scopes": "world:info"}),
        (f"/dashboard/keys/{key_id}/revoke", {}),
        ("/dashboard/worlds/world-1/disconnect", {}),
        ("/dashboard/worlds/world-1/revoke", {}),
        ("/dashboard/pairing-codes", {}),
        ("/dashboard/signout", {}),
    ]
    for path, data in changes:
        status, page, _ = await visitor.post(path, data, csrf=False)
        assert status == 403 and "CSRF check failed" in page, path
        status, page, _ = await visitor.post(path, [*data.items(), ("csrf", "forged")], False)
        assert status == 403, path
    # nothing changed: one key, still enabled; the world still connected, its token live
    assert [(k.id, k.enabled) for k in relay.store.list_keys()] == [(key_id, True)]
    assert relay.state.registry.get("world-1") is not None and world.close_code is None
    assert all(t.revoked_at is None for t in relay.store.list_tokens())
    assert (await visitor.get("/dashboard/worlds"))[0] == 200  # still signed in
    # the header form of the token works too (the page's scripts use it)
    async with visitor.http.post(
        visitor.url + "/dashboard/keys",
        data={"name": "by header", "scopes": "world:info"},
        headers={"X-CSRF-Token": visitor.csrf},
    ) as resp:
        assert resp.status == 200 and "Key created" in await resp.text()


async def test_an_account_owner_sees_and_manages_only_their_account(
    relay: Any, signin: Any
) -> None:
    await relay.world("w-alice", account="alice", worldTitle="Alice World")
    await relay.world("w-bob", account="bob", worldTitle="Bob World")
    alice_key = relay.key(account="alice", name="alice bot")
    relay.key(account="bob", name="bob bot")
    alice_id = relay.store.key_by_secret(alice_key).id
    bob = await signin(relay, "bob")

    _, page, _ = await bob.get("/dashboard/worlds")
    assert "Bob World" in page and "Alice World" not in page and "w-alice" not in page
    _, page, _ = await bob.get("/dashboard/keys")
    assert "bob bot" in page and "alice bot" not in page and alice_id not in page
    _, page, _ = await bob.get("/dashboard/events")
    assert "w-bob" in page and "w-alice" not in page

    assert (await bob.post(f"/dashboard/keys/{alice_id}/revoke", {}))[0] == 404
    assert (await bob.post("/dashboard/worlds/w-alice/disconnect", {}))[0] == 404
    assert (await bob.post("/dashboard/worlds/w-alice/revoke", {}))[0] == 404
    status, page, _ = await bob.post(
        "/dashboard/keys", {"scopes": "world:info", "account": "alice"}
    )
    assert status == 403 and "only manage your own account" in page
    status, page, _ = await bob.post(
        "/dashboard/keys", {"scopes": "world:info", "worlds": "w-alice"}
    )
    assert status == 400 and "not a world of account bob" in page
    status, page, _ = await bob.post("/dashboard/pairing-codes", {"account": "alice"})
    assert status == 403
    assert relay.store.get_key(alice_id).enabled
    assert relay.state.registry.get("w-alice") is not None
    assert [k.account for k in relay.store.list_keys()] == ["alice", "bob"]

    # what bob may do, he can: a key of his own, a pairing code of his account
    status, page, _ = await bob.post("/dashboard/keys", {"scopes": "world:info", "worlds": "w-bob"})
    assert status == 200 and "Key created" in page
    assert relay.store.list_keys("bob")[-1].client_ids == ("w-bob",)
    status, page, _ = await bob.post("/dashboard/pairing-codes", {})
    assert status == 200 and "For account <strong>bob</strong>" in page

    operator = await signin(relay)
    _, page, _ = await operator.get("/dashboard/worlds")
    assert "Alice World" in page and "Bob World" in page
    _, page, _ = await operator.get("/dashboard/keys")
    assert "alice bot" in page and "bob bot" in page
    assert (await operator.post("/dashboard/worlds/w-alice/disconnect", {}))[0] == 303
    for _ in range(50):
        if relay.state.registry.get("w-alice") is None:
            break
        await asyncio.sleep(0.02)
    assert relay.state.registry.get("w-alice") is None


async def test_revoking_a_world_token_disconnects_it_for_good(relay: Any, signin: Any) -> None:
    world = await relay.world("world-1")
    visitor = await signin(relay)
    status, _, headers = await visitor.post("/dashboard/worlds/world-1/revoke", {})
    assert status == 303 and headers["Location"] == "/dashboard/worlds?msg=revoked-world"
    assert await world.wait_closed() == 4002
    assert all(t.revoked_at is not None for t in relay.store.list_tokens())
    _, page, _ = await visitor.get("/dashboard/worlds?msg=revoked-world")
    assert "can no longer connect" in page


async def test_pages_behind_a_path_prefix(relay_factory: Any) -> None:
    """With --base-path /vtt (the proxy serves the relay under /vtt and strips it), every link,
    redirect and the cookie's path carry the prefix."""
    relay = await relay_factory(base_path="/vtt", trusted_proxies=("127.0.0.1",))
    status, _, headers = await _post_token(relay, issue_signin_token(relay.store))
    assert status == 303 and headers["Location"] == "/vtt/dashboard/worlds"
    assert "Path=/vtt" in headers["Set-Cookie"]
    cookie = {"Cookie": "vttrelay_session=" + _cookie_value(headers["Set-Cookie"])}
    page = (await relay.call("GET", "/dashboard/keys", headers=cookie)).body.decode()
    assert 'href="/vtt/dashboard/static/dashboard.css' in page
    assert 'action="/vtt/dashboard/keys"' in page and 'data-base="/vtt"' in page
    signin = "/vtt/dashboard/signin?next=/dashboard/keys"
    assert await _redirect(relay, "/dashboard/keys") == signin
    got = await relay.call(
        "POST",
        "/auth/pair-request",
        json={"worldId": "w"},
        headers={"Host": "games.example", "X-Forwarded-Proto": "https"},
    )
    assert got.json()["pairUrl"].startswith("https://games.example/vtt/pair/")
    code = relay.store.create_pairing_code()
    got = await relay.call("POST", "/auth/pair", json={"code": code, "worldId": "w"})
    assert got.json()["relayUrl"] == f"ws://127.0.0.1:{relay.port}/vtt/relay"


async def test_pair_page_asks_to_sign_in_then_approves(relay: Any, signin: Any) -> None:
    made = pair_requests.create_pair_request(
        relay.store, PairAsk("my-world", "My <World>", "dnd5e", "D&D", "5.1.4", "14.363")
    )
    status, page, _ = await _get(relay, f"/pair/{made.code}")
    assert status == 200 and "My &lt;World&gt;" in page and "D&amp;D v5.1.4" in page
    assert f"/dashboard/signin?next=/pair/{made.code}" in page
    assert f"vttrelay pair approve {made.code}" in page
    owner = await signin(relay, "gm")
    _, page, _ = await owner.get(f"/pair/{made.code}")
    assert "Approve" in page and "your account <strong>gm</strong>" in page
    assert f'action="/dashboard/pair/{made.code}/approve"' in page
    assert f'formaction="/dashboard/pair/{made.code}/refuse"' in page
    status, _, headers = await owner.post(f"/dashboard/pair/{made.code}/approve", {})
    assert status == 303 and headers["Location"] == f"/pair/{made.code}?msg=approved"
    decided = pair_requests.get_pair_request(relay.store, made.code)
    assert decided is not None and decided.account == "gm" and decided.pairing_code
    _, page, _ = await owner.get(f"/pair/{made.code}?msg=approved")
    assert "already been approved" in page
    status, page, _ = await owner.post(f"/dashboard/pair/{made.code}/refuse", {})
    assert status == 400 and "Pair request is not pending" in page


async def test_key_request_page_grants_the_chosen_scopes(relay: Any, signin: Any) -> None:
    made = key_requests.create_key_request(
        relay.store, KeyAsk("Dice Bot", ("world:info", "chat:read", "roll:execute"))
    )
    operator = await signin(relay)
    _, page, _ = await operator.get(f"/approve/{made.code}")
    assert "Dice Bot" in page and 'value="roll:execute" checked' in page
    assert f'action="/dashboard/approve/{made.code}/approve"' in page
    status, _, _ = await operator.post(
        f"/dashboard/approve/{made.code}/approve",
        [("account", "team"), ("scopes", "world:info"), ("scopes", "chat:read")],
    )
    assert status == 303
    status, body = key_requests.key_status(relay.store, made.code)
    assert body["scopes"] == ["world:info", "chat:read"]
    assert relay.store.key_by_secret(body["apiKey"]).account == "team"


async def test_dashboard_link_command(relay_factory: Any, tmp_path: Any, capsys: Any) -> None:
    data = tmp_path / "shared"
    relay = await relay_factory(data_dir=data)
    args = ["dashboard-link", "--data-dir", str(data), "--account", "alice", "--url", relay.url]
    assert await asyncio.to_thread(cli.main, args) == 0
    out, err = capsys.readouterr()
    link = out.strip()
    assert "owner of account alice" in err
    assert link.startswith(relay.url + "/dashboard/signin?token=")
    status, _, headers = await _post_token(relay, link)  # the whole link pasted works too
    assert status == 303
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        http.cookie_jar.update_cookies({"vttrelay_session": _cookie_value(headers["Set-Cookie"])})
        async with http.get(relay.url + "/dashboard/keys") as resp:
            assert "account alice" in await resp.text()


async def _redirect(relay: Any, path: str) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.get(relay.url + path, allow_redirects=False) as resp,
    ):
        assert resp.status == 303
        return resp.headers.get("Location", "")


def _cookie_value(header: str) -> str:
    return header.split(";", 1)[0].split("=", 1)[1]


async def _get(relay: Any, path: str) -> tuple[int, str, Any]:
    got = await relay.call("GET", path)
    return got.status, got.body.decode(), got.headers


async def test_the_operator_decides_pending_requests_from_the_worlds_page(
    relay: Any, signin: Any
) -> None:
    made = pair_requests.create_pair_request(relay.store, PairAsk("friday", "Friday Game", "dnd5e"))
    asked = key_requests.create_key_request(relay.store, KeyAsk("Dice Bot", ("world:info",)))
    owner = await signin(relay, "gm")
    _, page, _ = await owner.get("/dashboard/worlds")
    assert made.code not in page and "Dice Bot" not in page  # not bound to an account yet
    operator = await signin(relay)
    _, page, _ = await operator.get("/dashboard/worlds")
    assert "Friday Game" in page and f'href="/approve/{asked.code}"' in page
    action = f"/dashboard/pair/{made.code}/approve"
    assert f'action="{action}"' in page
    status, _, _ = await operator.post(action, {"account": "fridays"})
    assert status == 303
    decided = pair_requests.get_pair_request(relay.store, made.code)
    assert decided is not None and decided.account == "fridays"
    _, page, _ = await operator.get("/dashboard/worlds")
    assert "Friday Game" not in page  # no longer waiting


async def test_live_events_page_lists_the_streams_and_their_filters(
    relay: Any, signin: Any
) -> None:
    await relay.world("world-1")
    visitor = await signin(relay)
    _, page, _ = await visitor.get("/dashboard/events")
    assert 'value="chat-events"' in page and 'value="roll-events"' in page
    assert "<code>/chat/subscribe</code>: speaker, type, whisperOnly, userId" in page
