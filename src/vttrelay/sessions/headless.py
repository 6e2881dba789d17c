"""A browser session on a real Foundry server (files-sheet-sessions §4.6): Debian's chromium,
driven with Playwright (the optional extra `vttrelay[headless]`; never a browser download).

Each session has its own chromium, started by `ProcessRegistry.spawn` (its own process group,
a pid file, reaped at the next start if the relay is killed), with a throwaway profile and a
DevTools port Playwright connects to over CDP. The steps and texts are the reference's: before
any page script the module's connection token is seeded into local storage
(`foundry-rest-api.connectionToken`); the Foundry URL opens (`navigate to Foundry: ...`) and
its notifications are clicked away; when Foundry shows its world list instead of a join page
(no world is running), the named world is launched from it (`choose_world`, the reference's
step 10: its failures are only logged, and the login step then says that it found no form);
the join form's user is found by name (`configured Foundry user not found on this server (check
credential settings)`, `... already logged in ...`); the join is posted as JSON to `/join`
(`login rejected by Foundry: ...`), every failure wrapped as `login failed: <text>`; the game UI
must appear (`game canvas did not load: ...`, the page then saved as a PNG beside the session's
log), running the world expected (`wrong world loaded: server is running "<id>", expected
"<id>"`); then the world's module must connect to the relay with the seeded token (`client
connection timed out after <n>s`). Pages are 1280 x 800 (the window and the emulated viewport,
as the reference's defaults).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urljoin

import orjson

from vttrelay.sessions.processes import Child, ProcessRegistry
from vttrelay.sessions.webgl import WEBGL_SHIM

log = logging.getLogger(__name__)

CHROMIUM: Final = "/usr/bin/chromium"
TOKEN_KEY: Final = "foundry-rest-api.connectionToken"
VIEWPORT: Final = {"width": 1280, "height": 800}
NAVIGATION_TIMEOUT: Final = 180.0
LOGIN_TIMEOUT: Final = 30.0
GAME_TIMEOUT: Final = 30.0
GAME_SELECTOR: Final = "#ui-left, #sidebar, #game, .vtt"
# The world-list step (reference step 10): what the page is, polled every 0.3 s for 15 s; the
# list's entries visible within 10 s; 2 s after the click for the world to launch.
DETECT_TIMEOUT: Final = 15.0
DETECT_INTERVAL: Final = 0.3
WORLD_LIST_TIMEOUT: Final = 10.0
LAUNCH_WAIT: Final = 2.0
WORLD_ENTRY: Final = "li.package.world"
PLAY_CONTROL: Final = "a.control.play, button.control.play"
DETECT_SCRIPT: Final = """() => {
  if (document.querySelector('input[name="password"]')) return 'login';
  if (document.querySelector('li.package.world')) return 'worldList';
  if (document.querySelector('#ui-left, #sidebar, #game')) return 'game';
  return '';
}"""
# The first entry whose trimmed title or package id is one of the names (lower-cased): its index
ENTRY_SCRIPT: Final = """(names) => [...document.querySelectorAll('li.package.world')].findIndex(
  (li) => {
    const title = (li.querySelector('.package-title')?.textContent || '').trim().toLowerCase();
    const id = (li.dataset.packageId || '').toLowerCase();
    return names.includes(title) || names.includes(id);
  })"""
# Foundry's notifications (an update is available, ...) may lie over the page: clicked away
CLOSE_NOTIFICATIONS: Final = """() => {
  for (const close of document.querySelectorAll('#notifications .close')) close.click();
}"""
WORLD_ID_SCRIPT: Final = "() => globalThis.game?.world?.id ?? null"
WORLD_ID_TIMEOUT: Final = 5.0  # for the game page to say which world it runs
FLAGS: Final = (
    "--headless=new",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1280,800",  # = VIEWPORT
    "--disable-gpu",
    # a page left for another (Foundry's world shut down: back to setup) must close the module's
    # socket; kept in the back/forward cache it would stay open, frozen, the world seemingly live
    "--disable-back-forward-cache",
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


@dataclass(frozen=True)
class WorldChoice:
    """The world a session is for: the names to find it by in Foundry's world list (its title
    or package id, any case) and, when known from its last connection, the world id its game
    page must run."""

    names: tuple[str, ...]
    world_id: str = ""


async def _page_kind(page: Any) -> str:
    """`login`, `worldList` or `game` once the page is one of them (polled every 0.3 s for up
    to 15 s); '' if it is none by then."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DETECT_TIMEOUT
    while True:
        with contextlib.suppress(Exception):  # the page may be navigating
            kind = await page.evaluate(DETECT_SCRIPT)
            if kind:
                return str(kind)
        if loop.time() >= deadline:
            return ""
        await asyncio.sleep(DETECT_INTERVAL)


async def close_notifications(page: Any) -> None:
    """Click away Foundry's notifications (reference step 9): they may cover what is clicked."""
    with contextlib.suppress(Exception):  # the page may be navigating
        await page.evaluate(CLOSE_NOTIFICATIONS)


async def choose_world(page: Any, world: WorldChoice) -> None:
    """Foundry's world list (no world running): launch the named world with its play control
    (reference step 10). Only logged when it fails: the login step after it then finds no form
    and says so."""
    names = [n.casefold() for n in world.names if n]
    if not names:
        return
    try:
        kind = await _page_kind(page)
        if kind != "worldList":
            return
        await page.wait_for_selector(
            WORLD_ENTRY, state="visible", timeout=WORLD_LIST_TIMEOUT * 1000
        )
        await close_notifications(page)
        index = await page.evaluate(ENTRY_SCRIPT, names)
        if not isinstance(index, int) or index < 0:
            raise LaunchError(f"no world named {world.names[0]!r} in Foundry's world list")
        play = page.locator(WORLD_ENTRY).nth(index).locator(PLAY_CONTROL).first
        await play.click(timeout=WORLD_LIST_TIMEOUT * 1000)
        log.info("launched world %r from Foundry's world list", world.names[0])
        await asyncio.sleep(LAUNCH_WAIT)
    except Exception as exc:
        log.warning("World selection failed, continuing: %s", exc)


async def _running_world(page: Any) -> str:
    """The id of the world the game page runs (`game.world.id`), '' if it does not say."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WORLD_ID_TIMEOUT
    while True:
        with contextlib.suppress(Exception):
            found = await page.evaluate(WORLD_ID_SCRIPT)
            if isinstance(found, str) and found:
                return found
        if loop.time() >= deadline:
            return ""
        await asyncio.sleep(DETECT_INTERVAL)


async def log_in(
    browser: Browser,
    url: str,
    username: str,
    password: str,
    token: str,
    world: WorldChoice,
    screenshot: Path | None = None,
) -> None:
    """Open Foundry at `url` with the token seeded, launch the world from Foundry's world list
    if it shows one, join as `username`, wait for the game UI of the expected world. When the
    game UI does not come, the page is saved as a PNG at `screenshot` for the operator (the
    reference's debug screenshot)."""
    context = browser.browser.contexts[0] if browser.browser.contexts else None
    context = context or await browser.browser.new_context()
    # the module's client setting holds the token as a JSON string
    value = orjson.dumps(orjson.dumps(token).decode()).decode()
    seed = f"localStorage.setItem({orjson.dumps(TOKEN_KEY).decode()}, {value});"
    await context.add_init_script(WEBGL_SHIM)  # before any page script, as the token seed
    await context.add_init_script(seed)
    page = await context.new_page()
    await page.set_viewport_size(VIEWPORT)
    try:
        await page.goto(url, timeout=NAVIGATION_TIMEOUT * 1000)
    except Exception as exc:
        raise LaunchError(f"navigate to Foundry: {exc}") from None
    await close_notifications(page)
    await choose_world(page, world)
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
        if screenshot is not None:
            with contextlib.suppress(Exception):
                await page.screenshot(path=str(screenshot), timeout=10_000)
        raise LaunchError(f"game canvas did not load: {exc}") from None
    if world.world_id:
        running = await _running_world(page)
        if running and running != world.world_id:
            raise LaunchError(
                f'wrong world loaded: server is running "{running}", expected "{world.world_id}"'
            )
