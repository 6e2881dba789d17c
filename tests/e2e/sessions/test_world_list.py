"""Foundry's world list in browser sessions, end to end in real Chromium (files-sheet-sessions
§4.6 step 10): when the Foundry server runs no world it shows its setup page instead of a join
page; the relay's browser clicks away the notification that covers the list, launches the named
world from it (found by its title or id, any case), then logs in and the world connects. A world
missing from the list ends in the login step's refusal after its 30 s; a server running another
world than the paired one is refused as the reference's auto-start refuses it, and a game page
that never shows the game UI is refused after its 30 s and saved as a PNG for the operator."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from .fake_foundry import LAUNCHED, PASSWORD
from .test_browser_sessions import (
    CLIENT_ID,
    paired,
    relay_and_foundry,
    serving_session,
    start_session,
)
from .test_sessions import session_pids

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium"
)


async def test_the_named_world_is_launched_from_foundrys_world_list(
    tmp_path: Path, foundry_port: int
) -> None:
    async with relay_and_foundry(tmp_path, foundry_port, None) as (relay, foundry):
        paired(relay, CLIENT_ID, "fake-world", "Fake World")
        paired(relay, "lost-world", "lost-world", "Lost World")
        key = relay.key()

        # two paired worlds: one must be named
        status, body = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD, "")
        assert status == 400 and body["error"].startswith("x-world-name is required"), body

        # a paired world the server does not have: nothing is launched, no login form appears
        status, body = await start_session(
            relay, key, foundry_port, "Gamemaster", PASSWORD, "Lost World"
        )
        assert status == 408, body
        assert body["error"].startswith("login form not found: "), body
        assert foundry.app[LAUNCHED] == []
        assert session_pids(tmp_path) == []

        # named by its title in another case: launched from the list, then the usual login
        answer = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD, "fake WORLD")
        started, entry = await serving_session(relay, key, answer)
        assert foundry.app[LAUNCHED] == ["fake-world"]
        assert entry["worldName"] == "fake WORLD" and entry["worldId"] == "fake-world"
        status, _ = await relay.call("DELETE", "/end-session", key, sessionId=started["sessionId"])
        assert status == 200
    assert session_pids(tmp_path) == []


async def test_a_server_running_another_world_is_refused(tmp_path: Path, foundry_port: int) -> None:
    async with relay_and_foundry(tmp_path, foundry_port, "other-world") as (relay, foundry):
        paired(relay, CLIENT_ID, "fake-world", "Fake World")
        key = relay.key()
        status, body = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD)
        assert status == 408, body
        assert body["error"] == (
            'wrong world loaded: server is running "other-world", expected "fake-world"'
        )
        assert session_pids(tmp_path) == []  # its browser is gone
        status, listed = await relay.call("GET", "/session", key)
        assert listed == {"activeSessions": []}


async def test_a_game_page_that_never_loads_is_saved_for_the_operator(
    tmp_path: Path, foundry_port: int
) -> None:
    async with relay_and_foundry(tmp_path, foundry_port, "broken-world") as (relay, foundry):
        paired(relay, "broken-world", "broken-world", "Broken World")
        key = relay.key()
        status, body = await start_session(
            relay, key, foundry_port, "Gamemaster", PASSWORD, "Broken World"
        )
        assert status == 408, body
        assert body["error"].startswith("game canvas did not load: "), body
        (picture,) = (tmp_path / "sessions" / "logs").glob("*.png")
        with Image.open(picture) as image:
            assert image.size == (1280, 800)
            extrema = image.convert("L").getextrema()  # (darkest, lightest) of one band
            assert isinstance(extrema[0], int) and isinstance(extrema[1], int)
            assert extrema[0] < 100 < extrema[1]  # the page's text on its background, not blank
        assert session_pids(tmp_path) == []
