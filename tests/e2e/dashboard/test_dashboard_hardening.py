"""Issue 20 (hardening, round three), the dashboard's items, over real sockets: ids in form
actions (item 8), the sign-in protected like every other form (item 3), forms read only up to
their limit (item 5), approving or refusing by guessed codes limited per account (item 12)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web
from tests.support.dashboard import Visitor, csrf_of, signin_csrf_of
from yarl import URL

from vttrelay.dashboard.sessions import issue_signin_token, redeem_signin_token
from vttrelay.relay.accounts import key_requests
from vttrelay.relay.accounts.key_requests import KeyAsk

TRAVERSAL = "z/../../keys/{key}/revoke?"


async def test_a_world_id_off_the_pattern_never_becomes_a_form_action(
    relay: Any, signin: Any
) -> None:
    """A world recorded before ids were checked (its id holds `/` and `..`) shows no button
    whose action a browser would resolve to another route (here: revoking another account's
    key)."""
    victim = relay.store.create_key("bob", ["world:info"])[0]
    bad = TRAVERSAL.format(key=victim)
    relay.store.remember_client(bad, "default", {"worldTitle": "Trap"})
    await relay.world("fvtt_0123456789abcdef")
    visitor = await signin(relay)
    status, page, _ = await visitor.get("/dashboard/worlds")
    assert status == 200
    actions = re.findall(r'action="([^"]*)"', page)
    assert "/dashboard/worlds/fvtt_0123456789abcdef/revoke" in actions
    assert not [a for a in actions if "keys" in a or ".." in a], actions
    assert relay.store.get_key(victim).enabled


# Item 3: the sign-in is protected like every other form ----------------------------------------

OPERATOR = "operator (all accounts)"
FORGED = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}


async def _label(visitor: Visitor) -> str:
    status, page, _ = await visitor.get("/dashboard/worlds")
    assert status == 200
    found = re.search(r'<span title="Signed in as">([^<]*)</span>', page)
    assert found
    return found.group(1)


async def test_a_signin_posted_from_another_site_is_refused_and_the_session_kept(
    relay: Any, signin: Any
) -> None:
    visitor = await signin(relay)  # the operator, signed in
    attacker = issue_signin_token(relay.store, "mallory")
    # a page on another site posts the attacker's token through the operator's browser
    async with visitor.http.post(
        relay.url + "/dashboard/signin", data={"token": attacker}, headers=FORGED
    ) as resp:
        assert resp.status == 403 and "CSRF check failed" in await resp.text()
        assert "vttrelay_session" not in resp.headers.get("Set-Cookie", "")
    # ... or without Origin and Sec-Fetch-Site (an older browser): no form token, no sign-in
    status, page, _ = await visitor.post("/dashboard/signin", {"token": attacker}, csrf=False)
    assert status == 403 and "CSRF check failed" in page
    # a form token of the relay's own page does not help a cross-site post either
    _, form, _ = await visitor.get("/dashboard/signin")
    fields = {"token": attacker, "signin_csrf": signin_csrf_of(form), "replace": "1"}
    async with visitor.http.post(
        relay.url + "/dashboard/signin", data=fields, headers=FORGED, allow_redirects=False
    ) as resp:
        assert resp.status == 403
    assert await _label(visitor) == OPERATOR
    assert redeem_signin_token(relay.store, attacker) is not None  # never spent


async def test_a_signin_never_replaces_a_session_silently(relay: Any, signin: Any) -> None:
    visitor = await signin(relay)
    _, form, _ = await visitor.get("/dashboard/signin")
    assert "You are already signed in as operator" in form and 'name="replace"' in form
    token = issue_signin_token(relay.store, "gm")
    fields = {"token": token, "signin_csrf": signin_csrf_of(form)}
    status, page, _ = await visitor.post("/dashboard/signin", fields, csrf=False)
    assert status == 409 and "already signed in as operator" in page
    assert await _label(visitor) == OPERATOR
    # the form said so (the visitor saw the note): the session is replaced, the old one ended
    old = visitor.http.cookie_jar.filter_cookies(URL(relay.url))["vttrelay_session"].value
    _, form, _ = await visitor.get("/dashboard/signin")
    fields = {"token": token, "signin_csrf": signin_csrf_of(form), "replace": "1"}
    status, _, _ = await visitor.post("/dashboard/signin", fields, csrf=False)
    assert status == 303
    assert await _label(visitor) == "account gm"
    async with (
        aiohttp.ClientSession() as http,
        http.get(
            relay.url + "/dashboard/worlds",
            headers={"Cookie": f"vttrelay_session={old}"},
            allow_redirects=False,
        ) as resp,
    ):
        assert resp.status == 303  # to the sign-in form: the operator's session was ended


async def test_login_csrf_from_another_site_in_chromium(relay: Any, browser: Any) -> None:
    """The attack of issue 20 item 3 in a real browser: the operator is signed in; a page on
    another site (served from `localhost`, another site than `127.0.0.1`) submits a sign-in
    form with the attacker's token. The operator stays the operator."""
    attacker = issue_signin_token(relay.store, "mallory")
    trap = (
        "<!doctype html><form id=f method=post action='"
        f"{relay.url}/dashboard/signin'><input name=token value='{attacker}'></form>"
        "<script>document.getElementById('f').submit()</script>"
    )

    async def page_(request: web.Request) -> web.Response:
        return web.Response(text=trap, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page_)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        page = await browser.new_page()
        await page.goto(f"{relay.url}/dashboard/signin?token={issue_signin_token(relay.store)}")
        await page.click("#signin")
        await page.wait_for_url("**/dashboard/worlds")
        async with page.expect_navigation(url=f"{relay.url}/dashboard/signin"):
            await page.goto(f"http://localhost:{port}/")
        assert "CSRF check failed" in await page.inner_text("main")
        await page.goto(f"{relay.url}/dashboard/worlds")
        assert await page.inner_text("span[title='Signed in as']") == OPERATOR
    finally:
        await runner.cleanup()
    assert redeem_signin_token(relay.store, attacker) is not None


# Item 5: forms are read only up to the form limit, chunked or not ------------------------------


async def _chunks(total: int) -> AsyncIterator[bytes]:
    for _ in range(total // 65536):
        yield b"token=" + b"x" * 65530


async def test_a_chunked_form_is_read_only_up_to_the_form_limit(relay: Any, signin: Any) -> None:
    visitor = await signin(relay)
    for path in ("/dashboard/signin", "/dashboard/keys"):
        async with visitor.http.post(
            relay.url + path,
            data=_chunks(32 * 1024 * 1024),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            allow_redirects=False,
        ) as resp:
            assert resp.status == 413 and "Form too large" in await resp.text()


# Item 12: deciding requests by guessed codes costs the account ----------------------------------


async def test_deciding_unknown_codes_is_limited_per_account(
    relay_factory: Any, signin: Any
) -> None:
    relay = await relay_factory(code_miss_limit=3)
    here = await signin(relay, "gm")
    for n in range(3):
        status, page, _ = await here.post(f"/dashboard/pair/ZZZZZZZ{n}/approve", {})
        assert status == 404 and "not found" in page
    # the same account from another address: its budget is the account's, already spent
    elsewhere = await _signin_from(relay, "127.0.0.2", "gm")
    made = key_requests.create_key_request(relay.store, KeyAsk("Bot", ("world:info",)))
    status, page, _ = await elsewhere.post(
        f"/dashboard/approve/{made.code}/refuse", {"scopes": "world:info"}
    )
    assert status == 429 and "Too many unknown request codes" in page
    still = key_requests.get_key_request(relay.store, made.code)
    assert still is not None and still.status == "pending"
    # another account is not charged for gm's guesses
    other = await _signin_from(relay, "127.0.0.3", "bob")
    status, _, _ = await other.post(f"/dashboard/approve/{made.code}/refuse", {})
    assert status == 303
    await elsewhere.http.close()
    await other.http.close()


async def _signin_from(relay: Any, address: str, account: str) -> Visitor:
    """A visitor whose connections come from `address` (another host to the relay)."""
    http = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(address, 0)),
        cookie_jar=aiohttp.CookieJar(unsafe=True),
    )
    visitor = Visitor(relay.url, http)
    token = issue_signin_token(relay.store, account)
    _, form, _ = await visitor.get(f"/dashboard/signin?token={token}")
    fields = {"token": token, "signin_csrf": signin_csrf_of(form)}
    status, _, _ = await visitor.post("/dashboard/signin", fields, csrf=False)
    assert status == 303
    _, page, _ = await visitor.get("/dashboard/worlds")
    visitor.csrf = csrf_of(page)
    return visitor
