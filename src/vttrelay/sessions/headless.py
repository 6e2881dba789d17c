"""A browser session on a real Foundry server (files-sheet-sessions §4.6): Debian's chromium,
driven with Playwright (the optional extra `vttrelay[headless]`; never a browser download).

Each session has its own chromium, started by `ProcessRegistry.spawn` (its own process group,
a pid file, reaped at the next start if the relay is killed), with a throwaway profile and a
DevTools port Playwright connects to over CDP. The steps and texts are the reference's: before
any page script the module's connection token is seeded into local storage
(`foundry-rest-api.connectionToken`); the Foundry URL opens (`navigate to Foundry: ...`); the
join form's user is found by name (`configured Foundry user not found on this server (check
credential settings)`, `... already logged in ...`); the join is posted as JSON to `/join`
(`login rejected by Foundry: ...`), every failure wrapped as `login failed: <text>`; the game
UI must appear (`game canvas did not load: ...`); then the world's module must connect to the
relay with the seeded token (`client connection timed out after <n>s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urljoin

import orjson

from vttrelay.sessions.processes import Child, ProcessRegistry

CHROMIUM: Final = "/usr/bin/chromium"
TOKEN_KEY: Final = "foundry-rest-api.connectionToken"
NAVIGATION_TIMEOUT: Final = 180.0
LOGIN_TIMEOUT: Final = 30.0
GAME_TIMEOUT: Final = 30.0
GAME_SELECTOR: Final = "#ui-left, #sidebar, #game, .vtt"
FLAGS: Final = (
    "--headless=new",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1280,800",
    "--disable-gpu",
)
JOIN_SCRIPT: Final = """async ([userid, password]) => {
  try {
    const answer = await fetch(new URL('/join', location.origin), {
      method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({action: 'join', userid, password}),
    });
    const text = await answer.text();
    let body = {};
    try { body = JSON.parse(text); } catch (e) {}
    return {ok: answer.ok, status: body.status || '', message: body.message || '',
            redirect: body.redirect || '', text: text.slice(0, 400)};
  } catch (e) {
    return {ok: false, thrown: String(e && e.message || e || 'join request failed')};
  }
}"""


class LaunchError(Exception):
    """A step of the launch failed: its text is the reference's."""


@dataclass
class Browser:
    """A running chromium and Playwright's connection to it."""

    child: Child
    profile: Path
    playwright: Any
    browser: Any

    async def close(self, registry: ProcessRegistry) -> None:
        with contextlib.suppress(Exception):
            await self.browser.close()
        with contextlib.suppress(Exception):
            await self.playwright.stop()
        await registry.stop(self.child)
        shutil.rmtree(self.profile, ignore_errors=True)


async def _devtools_port(profile: Path, child: Child, timeout: float = 20.0) -> int:
    """The DevTools port chromium writes to `DevToolsActivePort` in its profile."""
    path = profile / "DevToolsActivePort"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if not child.running:
            raise LaunchError("create isolated tab: the browser exited")
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(path.read_text().splitlines()[0])
        await asyncio.sleep(0.05)
    raise LaunchError("create isolated tab: the browser did not start")


async def open_browser(registry: ProcessRegistry, session_id: str, log_path: Path) -> Browser:
    """A chromium of its own for one session, connected over CDP."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise LaunchError("browser sessions need the optional extra vttrelay[headless]") from None
    profile = Path(tempfile.mkdtemp(prefix="vttrelay-session-"))
    # chromium refuses to run as root with its sandbox (a container's usual user)
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    argv = [CHROMIUM, *FLAGS, *sandbox, f"--user-data-dir={profile}", "about:blank"]
    child = await registry.spawn(session_id, argv, {}, log_path)
    try:
        port = await _devtools_port(profile, child)
        playwright = await async_playwright().start()
        try:
            browser = await playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        except Exception:
            await playwright.stop()
            raise
    except BaseException:
        await registry.stop(child)
        shutil.rmtree(profile, ignore_errors=True)
        raise
    return Browser(child, profile, playwright, browser)


async def log_in(browser: Browser, url: str, username: str, password: str, token: str) -> None:
    """Open Foundry at `url` with the token seeded, join as `username`, wait for the game UI."""
    context = browser.browser.contexts[0] if browser.browser.contexts else None
    context = context or await browser.browser.new_context()
    # the module's client setting holds the token as a JSON string
    value = orjson.dumps(orjson.dumps(token).decode()).decode()
    seed = f"localStorage.setItem({orjson.dumps(TOKEN_KEY).decode()}, {value});"
    await context.add_init_script(seed)
    page = await context.new_page()
    try:
        await page.goto(url, timeout=NAVIGATION_TIMEOUT * 1000)
    except Exception as exc:
        raise LaunchError(f"navigate to Foundry: {exc}") from None
    try:
        await page.wait_for_selector('input[name="password"]', timeout=LOGIN_TIMEOUT * 1000)
    except Exception as exc:
        raise LaunchError(f"login form not found: {exc}") from None
    userid = username
    options = await page.eval_on_selector_all(
        'select[name="userid"] option',
        "els => els.map(o => ({value: o.value, text: o.textContent.trim(), disabled: o.disabled}))",
    )
    if options:
        match = next((o for o in options if o["text"].casefold() == username.casefold()), None)
        if match is None:
            raise LaunchError(
                "login failed: configured Foundry user not found on this server "
                "(check credential settings)"
            )
        if match["disabled"]:
            raise LaunchError(
                "login failed: configured Foundry user is already logged in (another active "
                "session may be holding the slot)"
            )
        userid = match["value"]
    joined = await page.evaluate(JOIN_SCRIPT, [userid, password])
    if "thrown" in joined:
        raise LaunchError(f"login failed: login rejected by Foundry: {joined['thrown']}")
    if not joined["ok"]:
        text = " ".join(str(joined["text"]).split())[:120]
        raise LaunchError(f"login failed: login rejected by Foundry: {text}")
    if joined["status"] != "success":
        reason = joined["message"] or "join was not accepted"
        raise LaunchError(f"login failed: login rejected by Foundry: {reason}")
    await page.goto(urljoin(page.url, joined["redirect"] or "/game"))
    try:
        await page.wait_for_selector(GAME_SELECTOR, state="attached", timeout=GAME_TIMEOUT * 1000)
    except Exception as exc:
        raise LaunchError(f"game canvas did not load: {exc}") from None
