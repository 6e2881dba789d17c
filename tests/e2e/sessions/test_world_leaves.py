"""A session ends as soon as its world leaves the relay (files-sheet-sessions §4.7), not at the
next 30-s sweep, over real `vttrelay serve` processes: a browser session in real Chromium whose
Foundry world is shut down (its game page leaves, closing the module's socket) is gone from
`GET /session` within a second, its browser process with it, and the world relaunched gets a
new session; a stored embedded world whose process dies is gone as quickly. (Its slot freed at
once: `tests/unit/sessions/test_world_left.py`.)"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import aiohttp
import pytest
from bench.procs import alive
from tests.support.e2e import eventually

from .fake_foundry import PASSWORD
from .test_browser_sessions import CLIENT_ID, paired, relay_and_foundry, start_session
from .test_sessions import Relay, serve, session_pids, stop_process


async def listed_until_gone(relay: Relay, key: str, limit: float) -> float:
    """Poll `GET /session` until the account lists no session; the seconds it took (fails past
    `limit`)."""
    began = time.monotonic()
    while True:
        status, listed = await relay.call("GET", "/session", key)
        assert status == 200
        if listed == {"activeSessions": []}:
            return time.monotonic() - began
        assert time.monotonic() - began < limit, f"still listed after {limit} s: {listed}"


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
async def test_a_browser_session_ends_when_its_world_shuts_down(
    tmp_path: Path, foundry_port: int
) -> None:
    async with relay_and_foundry(tmp_path, foundry_port) as (relay, foundry):
        paired(relay)
        key = relay.key()
        status, started = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD)
        assert status == 200, started
        (browser,) = session_pids(tmp_path)
        assert alive(browser)
        foundry_url = f"http://127.0.0.1:{foundry_port}"

        async with aiohttp.ClientSession() as http:  # the GM returns to setup
            shut = await http.post(f"{foundry_url}/setup", json={"shutdown": True})
            assert shut.status == 200
        unlisted = await listed_until_gone(relay, key, limit=1.0)
        status, _ = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 404  # the world has left indeed
        began = time.monotonic()
        await eventually(lambda: not alive(browser) and session_pids(tmp_path) == [], timeout=5)
        stopped = unlisted + time.monotonic() - began
        print(f"after the shutdown: unlisted in {unlisted:.3f} s, browser gone in {stopped:.3f} s")

        # the world comes back (the GM launches it again): a new session logs in and serves
        async with aiohttp.ClientSession() as http:
            launched = await http.post(
                f"{foundry_url}/setup", json={"action": "launchWorld", "world": CLIENT_ID}
            )
            assert launched.status == 200
        status, again = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD)
        assert status == 200 and again["sessionId"] != started["sessionId"], again
        status, info = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert (status, info["data"]) == (200, {"answeredBy": "fake-foundry"})


async def test_a_stored_world_session_ends_when_its_process_dies(tmp_path: Path) -> None:
    relay = await serve(tmp_path)
    try:
        key = relay.key(("session:manage", "world:info"))
        status, body = await relay.call("POST", "/session/worlds", key, {"name": "camp"})
        assert status == 201, body
        status, started = await relay.call("POST", "/start-session", key, {"worldName": "camp"})
        assert status == 200, started
        (world,) = session_pids(tmp_path)
        os.killpg(world, signal.SIGKILL)  # the world's process dies: its socket closes
        await listed_until_gone(relay, key, limit=1.0)
        await eventually(lambda: session_pids(tmp_path) == [], timeout=5)  # its record too
        status, again = await relay.call("POST", "/start-session", key, {"worldName": "camp"})
        assert status == 200 and again["sessionId"] != started["sessionId"], again
    finally:
        await stop_process(relay.proc)
        for leftover in [p for p in session_pids(tmp_path) if alive(p)]:
            os.killpg(leftover, signal.SIGKILL)
