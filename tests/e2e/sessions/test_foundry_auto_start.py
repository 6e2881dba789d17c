"""Auto-start of a paired Foundry world, end to end in real Chromium (files-sheet-sessions
§4.10) over a real `vttrelay serve`: the world's owner signs in, stores a Foundry login
(`POST /auth/credentials`), links it to the paired world and turns auto-start on (`PATCH
/auth/known-clients/{id}/credential` and `/auto-start`); then an API call naming the offline
world opens a browser session with that login (here through Foundry's world list, as no world
runs on the fake server) and is answered by the world once it has connected. Before it is armed
the call gets the usual offline 404; a login that fails is a clear error and is not retried for
two minutes with that credential (no browser opened), while linking another one tries at once.
A session whose world has left (its token revoked) is ended by the next start of that world."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from bench.procs import alive

from .fake_foundry import LAUNCHED, PASSWORD
from .test_browser_sessions import CLIENT_ID, paired, relay_and_foundry
from .test_sessions import Relay, session_pids

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium"
)
OWNER = "gm@example.com"
OWNER_PASSWORD = "Correct-Horse-7-Battery"


async def as_owner(relay: Relay, method: str, path: str, session: str, json: Any = None) -> Any:
    async with (
        aiohttp.ClientSession() as http,
        http.request(
            method, relay.url + path, json=json, headers={"Authorization": f"Bearer {session}"}
        ) as answer,
    ):
        body = orjson.loads(await answer.read())
        assert answer.status in (200, 201), (path, answer.status, body)
        return body


async def test_a_call_to_an_armed_paired_world_starts_its_browser_session(
    tmp_path: Path, foundry_port: int
) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "vttrelay", "accounts", "create", OWNER, "--account", "default",
         "--password-stdin", "--data-dir", str(tmp_path)],
        input=OWNER_PASSWORD + "\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    async with relay_and_foundry(tmp_path, foundry_port, None) as (relay, foundry):
        paired(relay, CLIENT_ID, "fake-world", "Fake World")
        key = relay.key()
        async with aiohttp.ClientSession() as http:
            signed_in = await http.post(
                relay.url + "/auth/login", json={"email": OWNER, "password": OWNER_PASSWORD}
            )
            assert signed_in.status == 200
            session = (await signed_in.json())["sessionToken"]
        world = f"/auth/known-clients/{CLIENT_ID}"

        def login(password: str) -> dict[str, str]:
            return {
                "name": "home",
                "foundryUrl": f"http://127.0.0.1:{foundry_port}/",
                "foundryUsername": "Gamemaster",
                "foundryPassword": password,
            }

        wrong = (await as_owner(relay, "POST", "/auth/credentials", session, login("nope")))["id"]
        good = (await as_owner(relay, "POST", "/auth/credentials", session, login(PASSWORD)))["id"]

        # not armed yet: the usual offline answer, no browser
        status, body = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert (status, body) == (404, {"error": "Invalid client ID"})
        assert session_pids(tmp_path) == []

        # armed with a login Foundry refuses: a clear error, then the cooldown (no new browser)
        await as_owner(relay, "PATCH", world + "/credential", session, {"credentialId": wrong})
        await as_owner(relay, "PATCH", world + "/auto-start", session, {"enabled": True})
        status, body = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 408, body
        assert body["clientId"] == CLIENT_ID
        assert body["error"].startswith(
            f"Auto-start of world '{CLIENT_ID}' failed: login failed: login rejected by Foundry: "
            "Incorrect password"
        ), body
        assert session_pids(tmp_path) == []
        status, body = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 408 and "(auto-start blocked for " in body["error"], body
        assert foundry.app[LAUNCHED] == ["fake-world"]  # launched once, by the first try

        # the good login linked: the call starts the session and the world answers it
        await as_owner(relay, "PATCH", world + "/credential", session, {"credentialId": good})
        status, info = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 200, info
        assert info["data"] == {"answeredBy": "fake-foundry"}
        (pid,) = session_pids(tmp_path)
        status, listed = await relay.call("GET", "/session", key)
        (entry,) = listed["activeSessions"]
        assert (entry["kind"], entry["clientId"], entry["worldName"]) == (
            "foundry",
            CLIENT_ID,
            "Fake World",
        )

        # the world leaves while its browser stays (its connection token revoked by the owner):
        # the next call ends that session and starts a new one
        tokens = (await as_owner(relay, "GET", "/auth/connection-tokens", session))["tokens"]
        (headless,) = [t for t in tokens if t["name"].startswith("headless session ")]
        await as_owner(relay, "DELETE", f"/auth/connection-tokens/{headless['id']}", session)
        status, info = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 200, info
        assert not alive(pid)
        (again,) = session_pids(tmp_path)
        status, listed = await relay.call("GET", "/session", key)
        (entry,) = listed["activeSessions"]
        status, _ = await relay.call("DELETE", "/end-session", key, sessionId=entry["sessionId"])
        assert status == 200 and not alive(again)

        # auto-start off again: offline stays offline
        await as_owner(relay, "PATCH", world + "/auto-start", session, {"enabled": False})
        status, body = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert (status, body) == (404, {"error": "Invalid client ID"})
        assert session_pids(tmp_path) == []
