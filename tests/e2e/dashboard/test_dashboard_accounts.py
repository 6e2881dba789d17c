"""Password accounts in the dashboard, in Chromium: the operator makes an invite code, a person
registers with it over REST, signs in to the dashboard with email and password (a wrong one is
refused), sees only their own account, and sets a new password with a reset link."""

from __future__ import annotations

import re
from typing import Any

from tests.support.dashboard import CHROMIUM  # noqa: F401 - the browser fixture's binary

from vttrelay.relay.accounts import users
from vttrelay.relay.accounts.settings import AccountSettings

PASSWORD = "TestPassword123!"


async def test_invite_register_sign_in_with_a_password_and_reset_it(
    relay_factory: Any, signin: Any, browser: Any
) -> None:
    relay = await relay_factory(accounts=AccountSettings(signup="invite"))
    operator = await signin(relay)
    status, page, _ = await operator.post("/dashboard/invites", {"note": "for alice"})
    assert status == 200
    found = re.search(r'id="invite-code">([0-9a-f]{64})<', page)
    assert found, page
    answer = await relay.call(
        "POST",
        "/auth/register",
        json={"email": "alice@example.com", "password": PASSWORD, "inviteCode": found.group(1)},
    )
    assert answer.status == 201
    account = answer.json()["id"]
    relay.key(account=account, name="alice's bot")
    relay.key(account="default", name="the operator's key")

    page = await browser.new_page()
    await page.goto(f"{relay.url}/dashboard/signin")
    await page.fill("#password-signin input[name=email]", "alice@example.com")
    await page.fill("#password-signin input[name=password]", "WrongPassword1")
    await page.click("#signin-password")
    assert "Wrong email or password." in await page.inner_text("body")

    await page.goto(f"{relay.url}/dashboard/signin")
    await page.fill("#password-signin input[name=email]", "Alice@Example.com")
    await page.fill("#password-signin input[name=password]", PASSWORD)
    await page.click("#signin-password")
    await page.wait_for_url("**/dashboard/worlds")
    await page.click("nav >> text=Keys")
    text = await page.inner_text("body")
    assert f"Keys of account {account}" in text
    assert "alice's bot" in text and "the operator's key" not in text
    assert await page.locator("#make-invite").count() == 0  # the operator's only

    token = users.new_reset(relay.store, account, 3600)
    await page.goto(f"{relay.url}/dashboard/reset?token={token}")
    await page.fill("input[name=password]", "alllowercase")
    await page.click("#reset")
    assert "Password must contain at least one uppercase letter." in await page.inner_text("body")
    await page.goto(f"{relay.url}/dashboard/reset?token={token}")
    await page.fill("input[name=password]", "BrandNewPassword7")
    await page.click("#reset")
    await page.wait_for_selector("#reset-done")
    login = await relay.call(
        "POST", "/auth/login", json={"email": "alice@example.com", "password": "BrandNewPassword7"}
    )
    assert login.status == 200
    await page.goto(f"{relay.url}/dashboard/reset?token={token}")
    assert await page.locator("#reset-invalid").count() == 1  # used
