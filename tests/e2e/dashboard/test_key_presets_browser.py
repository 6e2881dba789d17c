"""The key form's preset buttons (`routes.SCOPE_PRESETS`) in a real browser: each ticks exactly
its preset's scopes, and the key created after "Game master" holds the gm preset."""

from __future__ import annotations

from typing import Any

from tests.support.dashboard import sign_in_page

from vttrelay.relay.routes import GM_SCOPES, SCOPE_PRESETS


async def test_preset_buttons_tick_their_scopes_and_a_gm_key_is_made(
    relay: Any, browser: Any
) -> None:
    page = await browser.new_page()
    await sign_in_page(page, relay)
    await page.click("nav >> text=Keys")
    ticked = "[...document.querySelectorAll('input[name=scopes]:checked')].map(b => b.value)"
    for preset in SCOPE_PRESETS:
        await page.click(f"button[data-scopes={preset.name}]")
        assert sorted(await page.evaluate(ticked)) == sorted(preset.scopes), preset.name
    await page.click("button[data-scopes=none]")
    assert await page.evaluate(ticked) == []
    await page.click("button:text-is('Game master')")
    await page.fill("input[name=name]", "gm tools")
    await page.click("#create")
    secret = await page.input_value("#new-secret")
    key = relay.store.key_by_secret(secret)
    assert key is not None and key.name == "gm tools"
    assert sorted(key.scopes) == sorted(GM_SCOPES)
