"""The activity log end to end: API calls over real HTTP against a real relay (its store a real
SQLite file), then the dashboard's Activity page in Debian's chromium: the owner filters to
failures and finds the 403 made a moment before, with its key, world, route and address, and
sees the key's usage chart; another account's owner sees none of it. The rows are written in
batches (RelayConfig.activity_flush_interval), never a secret or a query string.

Set VTTRELAY_SCREENSHOTS=docs to write the README's activity screenshots into docs/.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.dashboard import sign_in_page

from vttrelay.relay import activity

PHONE = {"width": 390, "height": 844}


async def test_failures_only_finds_the_403_made_a_moment_before(relay: Any, browser: Any) -> None:
    await relay.world("world-1", worldTitle="Lost Mine", account="alice")
    key_id, secret = relay.store.create_key("alice", ["world:info"], name="table bot")
    async with httpx.AsyncClient(base_url=relay.url, headers={"x-api-key": secret}) as api:
        for _ in range(3):
            got = await api.get("/world-info", params={"clientId": "world-1"})
            assert got.status_code == 200
        got = await api.get("/chat", params={"clientId": "world-1", "secretish": "xyz"})
        assert got.status_code == 403  # no chat:read

    page = await browser.new_page()
    await page.set_viewport_size({"width": 1366, "height": 900})
    await sign_in_page(page, relay, "alice")
    await page.click("nav >> text=Activity")
    rows = page.locator("table.activity tbody tr")
    assert await rows.count() == 4  # the page reads what is still pending, too
    await page.check("#failures-only")
    await page.click("#apply-filter")
    await page.wait_for_url("**failures=1**")
    assert await rows.count() == 1
    row = rows.first
    assert await row.get_attribute("data-status") == "403"
    text = await row.inner_text()
    for fact in ("table bot", "world-1", "GET /chat", "403", "127.0.0.1"):
        assert fact in text, (fact, text)
    html = await page.content()
    assert secret not in html and "secretish" not in html and "xyz" not in html
    charts = page.locator("table.usage svg.bars")
    assert await charts.count() == 2  # the key: per hour, per day
    bars = page.locator("table.usage tbody tr").first.locator("svg.bars").first.locator("rect")
    assert await bars.count() == 24
    assert await bars.last.locator("title").text_content() == "4"  # this hour's four calls

    # by status class and route, through the form
    await page.uncheck("#failures-only")
    await page.select_option("select[name=status]", "2xx")
    await page.select_option("select[name=key]", key_id)
    await page.fill("input[name=route]", "/world-info")
    await page.click("#apply-filter")
    await page.wait_for_url("**status=2xx**")
    assert await rows.count() == 3

    shots = Path(os.environ.get("VTTRELAY_SCREENSHOTS") or relay.config.data_dir)
    shots.mkdir(parents=True, exist_ok=True)
    await page.goto(f"{relay.url}/dashboard/activity")
    await page.screenshot(path=str(shots / "activity-desktop.png"), full_page=True)
    await page.set_viewport_size(PHONE)
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await page.screenshot(path=str(shots / "activity-phone.png"), full_page=True)

    other = await browser.new_page()
    await sign_in_page(other, relay, "bob")
    await other.goto(f"{relay.url}/dashboard/activity")
    assert await other.locator("table.activity tbody tr").count() == 0


async def test_rows_are_written_in_batches_and_pruned(relay: Any) -> None:
    db = relay.store.db
    key_id, secret = relay.store.create_key("alice", ["clients:read"], name="k")
    async with httpx.AsyncClient(base_url=relay.url, headers={"x-api-key": secret}) as api:
        for _ in range(5):
            assert (await api.get("/clients")).status_code == 200
        assert (await api.get("/clients", headers={"x-api-key": "nope"})).status_code == 401
    found: list[activity.Activity] = []
    for _ in range(100):
        found = activity.find(db, None, activity.Filter())
        if len(found) == 6:
            break
        await asyncio.sleep(0.05)
    assert len(found) == 6
    unknown = activity.find(db, None, activity.Filter(failures=True))
    assert [(a.status, a.key_id, a.account, a.route) for a in unknown] == [
        (401, "", "", "/clients")
    ]
    mine = activity.find(db, "alice", activity.Filter(key_id=key_id))
    assert len(mine) == 5 and {a.key_name for a in mine} == {"k"}

    # pruning: past the size bound, the oldest go; past the kept time, all of them
    log = relay.state.activity
    log.max_rows = 2
    log.prune(time.time())
    kept = activity.find(db, None, activity.Filter())
    assert 0 < len(kept) <= 2 and kept[0].status == 401  # whole batches go, the oldest first
    log.prune(time.time() + log.keep_seconds + 1)
    assert activity.find(db, None, activity.Filter()) == []
