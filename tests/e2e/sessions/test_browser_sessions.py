"""Browser sessions on a Foundry server, end to end in real Chromium (Debian's, driven by
Playwright over CDP): `vttrelay serve` opens the fake Foundry server of `fake_foundry.py` (only
because `--headless-allow` names it), logs in as the user with the password sent encrypted to
the handshake's RSA key, and answers once the world's page has connected to the relay with the
token it seeded; the world then answers API calls through the browser. The reference's login
failures; the session listed and ended; a relay killed with SIGKILL during a session leaves a
browser behind that the next start reaps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from bench.procs import alive
from tests.support.e2e import eventually

from vttrelay.sessions.handshake import encrypt_password

from .fake_foundry import PASSWORD, fake_foundry
from .test_sessions import Relay, serve, session_pids, stop_process

CLIENT_ID = "fake-world"
pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium"
)


async def start_foundry(relay: Relay, port: int, running: str | None = CLIENT_ID) -> web.AppRunner:
    """The fake Foundry server running world `running` (None: its setup page's world list)."""
    ws_url = relay.url.replace("http://", "ws://") + "/relay"
    runner = web.AppRunner(fake_foundry(ws_url, running))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


@contextlib.asynccontextmanager
async def relay_and_foundry(
    data_dir: Path, port: int, running: str | None = CLIENT_ID
) -> AsyncIterator[tuple[Relay, web.AppRunner]]:
    """A `vttrelay serve` allowed to open the fake Foundry server on `port` (running world
    `running`), and that server; both stopped after, and no session browser left behind."""
    relay = await serve(data_dir, "--headless-allow", f"127.0.0.1:{port}")
    foundry = await start_foundry(relay, port, running)
    try:
        yield relay, foundry
    finally:
        await stop_process(relay.proc)
        await foundry.cleanup()
        for leftover in [p for p in session_pids(data_dir) if alive(p)]:
            os.killpg(leftover, signal.SIGKILL)


def paired(relay: Relay, client_id: str = CLIENT_ID, world_id: str = "", title: str = "") -> None:
    """The world was paired with this relay once (its client id is known to the account, with
    the world id and title it sent when it connected, if given)."""
    from vttrelay.relay.store import RelayStore

    store = RelayStore(relay.data_dir / "relay.db")
    try:
        store.create_connection_token("default", client_id, name="paired from the GM's browser")
        if world_id:
            store.remember_client(client_id, "default", {"worldId": world_id, "worldTitle": title})
    finally:
        store.close()


async def start_session(
    relay: Relay, key: str, port: int, user: str, password: str, world: str = CLIENT_ID
) -> Any:
    headers = {
        "x-foundry-url": f"http://127.0.0.1:{port}/",
        "x-username": user,
        "x-world-name": world,
    }
    status, shake = await relay.call("POST", "/session-handshake", key, headers=headers)
    assert status == 200, shake
    sealed = encrypt_password(shake["publicKey"], password, shake["nonce"])
    body = {"handshakeToken": shake["token"], "encryptedPassword": sealed}
    return await relay.call("POST", "/start-session", key, body)


async def serving_session(relay: Relay, key: str, answer: Any) -> tuple[Any, Any]:
    """Check a /start-session answer of a Gamemaster browser session: 200, the world answers
    through the browser, the session is listed; its answer and its /session entry."""
    status, started = answer
    assert status == 200, started
    assert started["clientId"] == CLIENT_ID and started["success"] is True
    status, info = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
    assert (status, info["data"]) == (200, {"answeredBy": "fake-foundry"})
    status, listed = await relay.call("GET", "/session", key)
    (entry,) = listed["activeSessions"]
    assert entry["kind"] == "foundry" and entry["username"] == "Gamemaster"
    return started, entry


async def test_a_browser_logs_in_and_the_world_connects(tmp_path: Path, foundry_port: int) -> None:
    relay = await serve(tmp_path, "--headless-allow", f"127.0.0.1:{foundry_port}")
    foundry = await start_foundry(relay, foundry_port)
    try:
        paired(relay)
        key = relay.key()
        for user, password, text in [
            ("Gamemaster", "wrong", "login failed: login rejected by Foundry: Incorrect password"),
            ("Nobody", PASSWORD, "login failed: configured Foundry user not found"),
            ("Busy", PASSWORD, "login failed: configured Foundry user is already logged in"),
        ]:
            status, body = await start_session(relay, key, foundry_port, user, password)
            assert status == 408 and body["error"].startswith(text), body
            assert body["message"].startswith("Failed to start headless session")
            assert session_pids(tmp_path) == []  # its browser is gone

        # no x-world-name: the account's only paired world
        answer = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD, world="")
        started, entry = await serving_session(relay, key, answer)
        assert entry["foundryUrl"] == f"http://127.0.0.1:{foundry_port}/"
        assert entry["worldTitle"] == "Fake World"
        (pid,) = session_pids(tmp_path)
        assert alive(pid)
        status, body = await relay.call(
            "DELETE", "/end-session", key, sessionId=started["sessionId"]
        )
        assert status == 200
        assert not alive(pid)
        await eventually(lambda: True)
        status, _ = await relay.call("GET", "/world-info", key, clientId=CLIENT_ID)
        assert status == 404
    finally:
        await stop_process(relay.proc)
        await foundry.cleanup()


async def test_a_killed_relays_browser_is_reaped(tmp_path: Path, foundry_port: int) -> None:
    relay = await serve(tmp_path, "--headless-allow", f"127.0.0.1:{foundry_port}")
    foundry = await start_foundry(relay, foundry_port)
    try:
        paired(relay)
        key = relay.key()
        status, started = await start_session(relay, key, foundry_port, "Gamemaster", PASSWORD)
        assert status == 200, started
        (pid,) = session_pids(tmp_path)
        os.kill(relay.proc.pid, signal.SIGKILL)
        await relay.proc.wait()
        await asyncio.sleep(0.5)
        assert alive(pid)  # the browser outlived the killed relay ...
        again = await serve(tmp_path, "--headless-allow", f"127.0.0.1:{foundry_port}")
        try:
            await eventually(lambda: not alive(pid), timeout=10)  # ... until the next start
            assert session_pids(tmp_path) == []
        finally:
            await stop_process(again.proc)
    finally:
        await stop_process(relay.proc)
        await foundry.cleanup()
        with_pid = [p for p in session_pids(tmp_path) if alive(p)]
        for leftover in with_pid:  # never leave a browser behind, whatever failed
            os.killpg(leftover, signal.SIGKILL)


def stored_credential(relay: Relay, port: int, password: str, host: str = "127.0.0.1") -> str:
    """A credential the account keeps on the relay (as /auth/credentials stores it: the password
    sealed with AES-256-GCM under the relay's key in its data dir); its id."""
    from vttrelay.relay.accounts.credentials import Vault
    from vttrelay.relay.store import RelayStore

    store = RelayStore(relay.data_dir / "relay.db")
    try:
        vault = Vault(store, None, relay.data_dir)
        url = f"http://{host}:{port}/"
        made = vault.create("default", "my foundry", url, "Gamemaster", password, CLIENT_ID)
        assert made is not None
        return made.id
    finally:
        store.close()


async def test_a_stored_credential_starts_a_session_without_a_password(
    tmp_path: Path, foundry_port: int
) -> None:
    relay = await serve(tmp_path, "--headless-allow", f"127.0.0.1:{foundry_port}")
    foundry = await start_foundry(relay, foundry_port)
    try:
        paired(relay)
        key = relay.key()
        stranger = relay.key(account="someone-else")
        good = stored_credential(relay, foundry_port, PASSWORD)
        wrong = stored_credential(relay, foundry_port, "wrong")
        elsewhere = stored_credential(relay, foundry_port, PASSWORD, host="localhost")

        status, body = await relay.call("POST", "/start-session", stranger, {"credentialId": good})
        assert (status, body) == (404, {"error": f"credential not found: {good}"})
        status, body = await relay.call("POST", "/start-session", key, {"credentialId": elsewhere})
        assert status == 403 and "--headless-allow" in body["error"]
        status, body = await relay.call("POST", "/start-session", key, {"credentialId": wrong})
        assert status == 408, body
        assert body["error"].startswith("login failed: login rejected by Foundry")
        assert session_pids(tmp_path) == []

        answer = await relay.call("POST", "/start-session", key, {"credentialId": good})
        started, _ = await serving_session(relay, key, answer)
        (pid,) = session_pids(tmp_path)
        status, _ = await relay.call("DELETE", "/end-session", key, sessionId=started["sessionId"])
        assert status == 200 and not alive(pid)
    finally:
        await stop_process(relay.proc)
        await foundry.cleanup()
        for leftover in [p for p in session_pids(tmp_path) if alive(p)]:
            os.killpg(leftover, signal.SIGKILL)
