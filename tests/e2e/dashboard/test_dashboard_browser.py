"""The dashboard driven in a real browser (Debian's chromium through Playwright) against a real
relay with worlds connected over real WebSockets: sign in, create a key and call the API with it,
revoke it (401), approve the scripted module's pair request, watch a chat event arrive (pause,
filter, inspect), run console requests; and the two README screenshots (desktop, phone), taken
with the check that the phone-sized page needs no sideways scrolling.

Set VTTRELAY_SCREENSHOTS=docs to write the screenshots into docs/ (as committed).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import httpx
from tests.compat.test_module_double import ModuleDouble
from tests.support.dashboard import sign_in_page

from vttrelay import protocol
from vttrelay.dashboard.sessions import issue_signin_token

PHONE = {"width": 390, "height": 844}


def _chat_event(message_id: str, content: str) -> dict[str, Any]:
    message = {"id": message_id, "content": content, "speaker": {}, "whisper": [], "flags": {}}
    return {"type": "chat-event", "data": {"eventType": "create", "data": message}}


async def _until(check: Any, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def test_sign_in_create_a_key_use_it_then_revoke_it(relay: Any, browser: Any) -> None:
    await relay.world("world-1", worldTitle="Lost Mine")
    page = await browser.new_page()
    await sign_in_page(page, relay)
    assert "Lost Mine" in await page.inner_text("#live")
    await page.click("nav >> text=Keys")
    await page.fill("input[name=name]", "discord bot")
    await page.click("button[data-scopes=none]")
    for scope in ("clients:read", "world:info"):
        await page.check(f"input[name=scopes][value='{scope}']")
    await page.check("input[name=worlds][value=world-1]")
    await page.fill("input[name=rate]", "100")
    await page.fill("input[name=expires]", "30d")
    await page.click("#create")
    secret = await page.input_value("#new-secret")
    assert len(secret) == 64
    await browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=relay.url)
    await page.click("#copy-secret")
    assert await page.evaluate("navigator.clipboard.readText()") == secret
    key = relay.store.key_by_secret(secret)
    assert key.name == "discord bot" and key.scopes == ("world:info", "clients:read")
    assert key.client_ids == ("world-1",) and key.rate_per_minute == 100 and key.expires_at

    async with httpx.AsyncClient(base_url=relay.url, headers={"x-api-key": secret}) as api:
        got = await api.get("/clients")
        assert got.status_code == 200 and got.json()["clients"][0]["clientId"] == "world-1"
        got = await api.get("/world-info", params={"clientId": "world-1"})
        assert got.status_code == 200 and got.json()["type"] == "world-info-result"
        got = await api.get("/chat", params={"clientId": "world-1"})
        assert got.status_code == 403  # no chat:read
        assert got.json() == {"error": "API key lacks required scope: chat:read"}

        await page.click("nav >> text=Keys")  # the usage shows on the list
        row = page.locator(f"tr[data-key-id={key.id}]")
        assert await row.locator("td[data-label=Requests]").inner_text() == "3"
        assert "ago" in await row.locator("td[data-label='Last used']").inner_text()
        page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await row.locator("button", has_text="Revoke").click()
        await page.wait_for_url(re.compile(r"/dashboard/keys\?msg=revoked-key$"))
        assert await page.locator(f"tr[data-key-id={key.id}]").count() == 0  # hidden by default
        await page.click("#hidden-keys a")
        assert "revoked" in await page.locator(f"tr[data-key-id={key.id}]").inner_text()

        got = await api.get("/clients")
        assert got.status_code == 401 and got.json() == {"error": "API key is disabled"}


async def test_approve_the_modules_pair_request_in_the_browser(relay: Any, browser: Any) -> None:
    module = ModuleDouble(relay.url)
    module.poll_interval = 0.05
    try:
        flow = asyncio.ensure_future(module.browser_pair())
        await asyncio.wait_for(module.pair_requested.wait(), 5)
        page = await browser.new_page()
        await page.goto(module.pair_request["pairUrl"])  # the tab the module opens
        assert "Pair Foundry World" in await page.inner_text("h1")
        assert "My World" in await page.inner_text("table.details")
        await page.click("text=Sign in to approve or refuse")
        link = f"{relay.url}/dashboard/signin?token={issue_signin_token(relay.store, 'gm')}"
        await page.fill("input[name=token]", link)  # pasted from `vttrelay dashboard-link`
        await page.click("#signin")
        await page.wait_for_url(f"**/pair/{module.pair_request['code']}")
        assert "your account gm" in await page.inner_text("#approve-form")
        await page.click("#approve")
        await page.wait_for_url(re.compile(r"/pair/\w+\?msg=approved$"))
        assert await asyncio.wait_for(flow, 10) == f"Paired! Client ID: {module.client_id}"
        assert "already been exchanged" in await page.inner_text("main") or (
            "already been approved" in await page.inner_text("main")
        )

        module.start()
        await asyncio.wait_for(module.connected.wait(), 5)
        await page.goto(f"{relay.url}/dashboard/worlds")
        row = page.locator(f"tr[data-client-id={module.client_id}]")
        assert await row.get_attribute("class") == "online"
        text = await row.inner_text()
        assert "My World" in text and "Dungeons & Dragons Fifth Edition 5.1.4" in text
        assert relay.store.known_client(module.client_id).account == "gm"
    finally:
        await module.close()


async def test_watch_a_chat_event_arrive(relay: Any, browser: Any) -> None:
    world = await relay.world("world-1", worldTitle="Lost Mine")
    page = await browser.new_page()
    await sign_in_page(page, relay)  # no key to paste: the session reads the streams
    await page.click("nav >> text=Live events")
    assert await page.locator("input[type=password]").count() == 0
    await page.select_option("#ev-world", "world-1")
    await page.click("#ev-start")
    hub = relay.state.streams.hub
    await _until(lambda: hub.count("world-1", protocol.CHAT_CHANNEL) == 1)

    await page.locator("#ev-status", has_text="Watching").wait_for()
    await world.emit(_chat_event("m1", "The goblin <b>attacks</b>!"))
    arrived = page.locator("#ev-list li", has_text="The goblin attacks!")  # a readable line
    await arrived.wait_for()
    assert "chat-create" in await arrived.inner_text()
    assert await page.locator("#ev-list li", has_text="connected").count() == 0  # folded
    await arrived.click()  # the raw JSON, one click away
    payload = await page.inner_text("#ev-payload")
    assert "event: chat-create" in payload
    assert '"content": "The goblin <b>attacks</b>!"' in payload

    await page.click("#ev-pause")
    await world.emit(_chat_event("m2", "Roll for initiative"))
    await page.locator("#ev-pause", has_text="Resume (1 new)").wait_for()
    assert await page.locator("#ev-list li", has_text="Roll for initiative").count() == 0
    await page.click("#ev-pause")
    await page.locator("#ev-list li", has_text="Roll for initiative").wait_for()

    await page.fill("#ev-filter", "initiative")
    assert not await page.locator("#ev-list li", has_text="goblin").is_visible()
    assert await page.locator("#ev-list li", has_text="initiative").is_visible()

    # The worlds page shows the subscriber, live (README screenshots: desktop and phone)
    shots = Path(os.environ.get("VTTRELAY_SCREENSHOTS") or relay.config.data_dir)
    worlds = await browser.new_page()
    await worlds.goto(f"{relay.url}/dashboard/worlds")
    assert "chat-events: 1" in await worlds.inner_text("tr[data-client-id=world-1]")
    await worlds.screenshot(path=str(shots / "dashboard-desktop.png"))
    await page.set_viewport_size(PHONE)
    await page.fill("#ev-filter", "")
    await page.locator("#ev-list li", has_text="goblin").click()
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot(path=str(shots / "dashboard-phone.png"), full_page=True)
    await worlds.set_viewport_size(PHONE)
    assert await worlds.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    await page.click("#ev-start")  # Stop: the stream closes, the subscriber goes
    await _until(lambda: hub.count("world-1", protocol.CHAT_CHANNEL) == 0)


async def test_console_requests_from_the_route_table(relay: Any, browser: Any) -> None:
    world = await relay.world("world-1")
    page = await browser.new_page()
    await sign_in_page(page, relay)  # no key to paste: the session calls the routes
    await page.click("nav >> text=Try it")
    assert await page.locator("input[type=password]").count() == 0
    await page.select_option("#c-route", label="GET /chat")
    assert await page.input_value("#p-clientId") == "world-1"  # the live world, prefilled
    await page.fill("#p-limit", "5")
    await page.click("#c-send")
    await page.locator("#c-status", has_text="200 OK").wait_for()
    frame = await world.next_request()
    assert frame["type"] == "chat-messages" and frame["limit"] == 5 and frame["offset"] == 0
    reply = await page.inner_text("#c-reply")
    assert '"type": "chat-messages-result"' in reply and '"limit": 5' in reply
    assert "ms" in await page.inner_text("#c-status")
    curl = await page.inner_text("#c-curl")
    assert curl.startswith("curl -H 'x-api-key: YOUR_KEY'")
    assert "/chat?clientId=world-1&limit=5" in curl

    await page.select_option("#c-route", label="POST /chat")
    await page.fill("#p-content", "Hello <b>table</b>")
    await page.fill("#p-whisper", '["u-gm"]')
    await page.click("#c-send")
    await page.locator("#c-status", has_text="200 OK").wait_for()
    frame = await world.next_request()
    assert frame["type"] == "chat-send" and frame["content"] == "Hello <b>table</b>"
    assert frame["whisper"] == ["u-gm"]

    await page.select_option("#c-route", label="POST /chat")  # a missing required parameter
    await page.click("#c-send")
    await page.locator("#c-status", has_text="400").wait_for()
    assert "'content' is required" in await page.inner_text("#c-reply")
