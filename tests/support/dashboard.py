"""Helpers and fixtures of the dashboard tests (the fixtures offered by the conftests that import
them, tests/e2e/dashboard/conftest.py first): a signed-in browser-like HTTP session, a real browser.

- `signin(relay, account=None) -> Visitor`: an aiohttp session with its own cookie jar, signed in
  as a browser does (the form, then `POST /dashboard/signin` with its CSRF token) with a fresh
  one-time token (operator for None); `.csrf` is
  the session's CSRF token read from a page; `.get(path)` / `.post(path, data, csrf=True)` return
  `(status, text, headers)` without following redirects.
- `sign_in_with_link(base, link) -> status`: a printed sign-in link followed as a browser does.
- `browser` -> a Playwright browser context on Debian's chromium (`/usr/bin/chromium`,
  headless, its own temporary profile), closed at teardown. `.ci/run` installs chromium.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from vttrelay.dashboard.sessions import issue_signin_token

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Visitor:
    """A dashboard visitor over plain HTTP (cookies kept, redirects not followed)."""

    url: str
    http: aiohttp.ClientSession
    csrf: str = ""

    async def get(self, path: str) -> tuple[int, str, Any]:
        async with self.http.get(self.url + path, allow_redirects=False) as resp:
            return resp.status, await resp.text(), resp.headers

    async def post(
        self, path: str, data: dict[str, Any] | list[tuple[str, str]], csrf: bool = True
    ) -> tuple[int, str, Any]:
        fields = list(data.items()) if isinstance(data, dict) else list(data)
        if csrf:
            fields.append(("csrf", self.csrf))
        async with self.http.post(self.url + path, data=fields, allow_redirects=False) as resp:
            return resp.status, await resp.text(), resp.headers


async def sign_in_with_link(base: str, link: str) -> int:
    """Follow a printed sign-in link as a browser does (its form, then POST with its CSRF) and
    return the POST's status: 303 when it signed in (the worlds page then answers 200 in that
    session, checked here), 401 for a link this relay does not know."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(link) as page:
            assert page.status == 200
            found = re.search(r'name="signin_csrf" value="([^"]+)"', await page.text())
            assert found
        token = link.split("token=", 1)[1]
        async with http.post(
            base + "/dashboard/signin",
            data={"token": token, "signin_csrf": found.group(1)},
            headers={"Origin": base},
            allow_redirects=False,
        ) as signed:
            status = signed.status
        if status == 303:
            async with http.get(base + "/dashboard/worlds", allow_redirects=False) as worlds:
                assert worlds.status == 200, worlds.status
        return status


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


async def sign_in_page(page: Any, relay: Any, account: str | None = None) -> None:
    """Open a one-time sign-in link in a browser page and press Sign in, as a user of
    `vttrelay serve` does (operator for None)."""
    token = issue_signin_token(relay.store, account)
    await page.goto(f"{relay.url}/dashboard/signin?token={token}")
    await page.click("#signin")
    await page.wait_for_url("**/dashboard/worlds")


def signin_csrf_of(page: str) -> str:
    """The sign-in form's CSRF token (its cookie came with the page)."""
    found = re.search(r'name="signin_csrf" value="([^"]+)"', page)
    assert found, "no sign-in CSRF field on the page"
    return found.group(1)


@pytest.fixture
async def signin() -> AsyncIterator[Any]:
    sessions: list[aiohttp.ClientSession] = []

    async def sign_in(relay: Any, account: str | None = None) -> Visitor:
        http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        sessions.append(http)
        visitor = Visitor(relay.url, http)  # a proxy in front would strip base_path
        token = issue_signin_token(relay.store, account)
        status, form, _ = await visitor.get(f"/dashboard/signin?token={token}")
        assert status == 200
        fields = {"token": token, "signin_csrf": signin_csrf_of(form)}
        status, _, headers = await visitor.post("/dashboard/signin", fields, csrf=False)
        assert status == 303, "sign-in refused"
        status, page, _ = await visitor.get("/dashboard/worlds")
        assert status == 200
        visitor.csrf = csrf_of(page)
        return visitor

    yield sign_in
    for http in sessions:
        await http.close()


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install chromium"
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(10_000)
        try:
            yield context
        finally:
            await context.close()
