"""Issue 26's layout and copy fixes, in Debian's chromium against a real relay: the worlds table
fits its card at 1366 px with a long system name on one line; revoked keys are hidden until
asked for; only scopes with a route behind them are offered; the pairing copy names a command
that exists; key requests are approved or refused inline; `/favicon.ico` is served."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import httpx
from tests.support.dashboard import sign_in_page

from vttrelay.cli import build_parser
from vttrelay.dashboard.scopes import routes_by_scope
from vttrelay.relay.accounts import key_requests

DESKTOP = {"width": 1366, "height": 900}
SYSTEM = "Dungeons & Dragons Fifth Edition"


async def test_worlds_table_fits_and_key_requests_are_decided_inline(
    relay: Any, browser: Any
) -> None:
    for n in (1, 2):
        await relay.world(
            f"world-{n}", worldTitle=f"Curse of the Long Title {n}", systemTitle=SYSTEM,
            systemVersion="4.0.4",
        )  # fmt: skip
    code = await _new_key_request(relay)
    page = await browser.new_page()
    await page.set_viewport_size(DESKTOP)
    await sign_in_page(page, relay)
    await page.screenshot(
        path=str(
            Path(os.environ.get("VTTRELAY_SCREENSHOTS") or relay.config.data_dir)
            / "worlds-1366.png"
        ),
        full_page=True,
    )
    table = page.locator("table.worlds")
    card = page.locator("#live")
    assert (await table.bounding_box())["width"] <= (await card.bounding_box())["width"]
    system = page.locator("table.worlds td.system").first
    assert SYSTEM in await system.inner_text()
    lines = await system.evaluate(
        "e => { const r = document.createRange(); r.selectNodeContents(e);"
        " return new Set([...r.getClientRects()].map(c => Math.round(c.top))).size }"
    )
    assert lines == 1  # the system's name on one line
    revoke = page.locator("table.worlds button.danger").first
    revoke_box = await revoke.bounding_box()
    card_box = await card.bounding_box()
    assert revoke_box["x"] + revoke_box["width"] <= card_box["x"] + card_box["width"]

    assert "vttrelay world pair CODE --relay URL" in await page.inner_text("main")
    await page.click("#mint-code")
    command = await page.inner_text("#pair-command")
    minted = await page.inner_text("#pairing-code")
    assert command == f"vttrelay world pair {minted} --relay {relay.url}"
    words = command.split()[1:4] + ["--relay", relay.url]
    parsed = build_parser().parse_args(words)  # the command exists, as written
    assert isinstance(parsed, argparse.Namespace) and parsed.code == minted

    await page.goto(f"{relay.url}/dashboard/worlds")
    inline = page.locator(f"form.decide[data-code='{code}']")
    await inline.locator("button.primary").click()
    await page.wait_for_url(f"**/approve/{code}?msg=approved")
    decided = key_requests.get_key_request(relay.store, code)
    assert decided is not None and decided.status == "approved", decided


async def _new_key_request(relay: Any) -> str:
    async with httpx.AsyncClient(base_url=relay.url) as http:
        got = await http.post(
            "/auth/key-request", json={"appName": "Table bot", "scopes": ["clients:read"]}
        )
        assert got.status_code in (200, 201), got.text
        return str(got.json()["code"])


async def test_revoked_keys_hidden_scopes_offered_and_favicon(relay: Any, browser: Any) -> None:
    live_id, _ = relay.store.create_key("default", ["clients:read"], name="live key")
    for n in range(3):
        key_id, _ = relay.store.create_key("default", ["clients:read"], name=f"old key {n}")
        relay.store.revoke_key(key_id)
    page = await browser.new_page()
    await sign_in_page(page, relay)
    await page.goto(f"{relay.url}/dashboard/keys")
    rows = page.locator("table.keys tbody tr")
    assert await rows.count() == 1
    assert await rows.first.get_attribute("data-key-id") == live_id
    assert "3 revoked or expired keys hidden" in await page.inner_text("#hidden-keys")
    await page.click("#hidden-keys a")
    await page.wait_for_url("**/keys?all=1")
    assert await rows.count() == 4

    offered = await page.eval_on_selector_all("input[name=scopes]", "els => els.map(e => e.value)")
    behind = routes_by_scope()
    assert offered and all(behind.get(s) for s in offered)
    assert set(offered) == set(behind)

    async with httpx.AsyncClient(base_url=relay.url) as http:
        icon = await http.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert await page.get_attribute("link[rel=icon]", "href") == "/favicon.ico"
