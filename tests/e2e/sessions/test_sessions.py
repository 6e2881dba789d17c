"""Sessions end to end (files-sheet-sessions §4, DESIGN §7a) over real `vttrelay serve`
processes: embedded worlds an account keeps on the relay, created with `vttrelay world create`
and over REST, started by /start-session (a real world process connecting back over the
relay's WebSocket), listed and ended only by their own account, ended when idle; the RSA
handshake (the operator's Foundry host list); the routes with sessions turned off; and a relay
killed with SIGKILL during a session, whose orphaned world the next start reaps."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from bench.procs import alive, free_port
from tests.support.e2e import eventually
from tests.support.relay import start_serve, stop_process

from vttrelay.relay.store import RelayStore
from vttrelay.sessions.handshake import encrypt_password

SCOPE = ("session:manage", "world:info")


class Relay:
    """A `vttrelay serve` process and calls to it."""

    def __init__(self, proc: Any, port: int, data_dir: Path) -> None:
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"
        self.data_dir = data_dir

    def key(self, scopes: tuple[str, ...] = SCOPE, account: str = "default") -> str:
        store = RelayStore(self.data_dir / "relay.db")
        try:
            return store.create_key(account, scopes, rate_per_minute=0)[1]
        finally:
            store.close()

    async def call(
        self, method: str, path: str, key: str, json: Any = None, headers: Any = None, **query: str
    ) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.request(
                method,
                self.url + path,
                json=json,
                params=query,
                headers={"x-api-key": key, **(headers or {})},
            ) as answer,
        ):
            return answer.status, orjson.loads(await answer.read())


async def serve(data_dir: Path, *args: str) -> Relay:
    port = free_port()
    proc, _ = await start_serve(data_dir, port, "--no-world", *args)
    return Relay(proc, port, data_dir)


def session_pids(data_dir: Path) -> list[int]:
    return [
        int(orjson.loads(p.read_bytes())["pid"])
        for p in (data_dir / "sessions" / "run").glob("*.json")
    ]


async def test_stored_worlds_start_list_and_end(tmp_path: Path) -> None:
    data = tmp_path / "relay"
    data.mkdir()
    made = subprocess.run(
        [sys.executable, "-m", "vttrelay", "world", "create", "camp", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    assert "Created world 'camp'" in made.stdout
    relay = await serve(data)
    try:
        key = relay.key()
        status, body = await relay.call("POST", "/session/worlds", key, {"name": "keep"})
        assert status == 201 and body["name"] == "keep"
        status, body = await relay.call("POST", "/session/worlds", key, {"name": "../x"})
        assert status == 400
        status, body = await relay.call("GET", "/session/worlds", key)
        assert [(w["name"], w["running"]) for w in body["worlds"]] == [
            ("camp", False),
            ("keep", False),
        ]
        status, started = await relay.call("POST", "/start-session", key, {"worldName": "camp"})
        assert status == 200, started
        assert list(started) == ["clientId", "sessionId", "success"] and started["success"]
        client_id = started["clientId"]
        status, info = await relay.call("GET", "/world-info", key, clientId=client_id)
        assert status == 200 and info["type"] == "world-info-result", info
        status, again = await relay.call("POST", "/start-session", key, {"worldName": "camp"})
        assert again["existingSession"] is True and again["sessionId"] == started["sessionId"]

        status, listed = await relay.call("GET", "/session", key)
        assert status == 200
        (entry,) = listed["activeSessions"]
        assert entry["sessionId"] == started["sessionId"] and entry["clientId"] == client_id
        assert entry["worldName"] == "camp" and entry["systemId"] == "dnd5e"
        assert entry["lastActivity"] >= entry["startedAt"]
        assert list(entry) == sorted(entry)

        stranger = relay.key(account="someone-else")
        status, theirs = await relay.call("GET", "/session", stranger)
        assert theirs == {"activeSessions": []}
        status, body = await relay.call(
            "DELETE", "/end-session", stranger, sessionId=started["sessionId"]
        )
        assert (status, body) == (404, {"error": f"session not found: {started['sessionId']}"})
        status, body = await relay.call("POST", "/start-session", stranger, {"worldName": "camp"})
        assert status == 404  # its own catalog has no "camp"

        (pid,) = session_pids(data)
        assert alive(pid)
        status, body = await relay.call(
            "DELETE", "/end-session", key, sessionId=started["sessionId"]
        )
        assert (status, body) == (200, {"message": "Session ended", "status": "ok"})
        assert not alive(pid) and session_pids(data) == []
        status, body = await relay.call("GET", "/world-info", key, clientId=client_id)
        assert status == 404  # the world is gone
        status, body = await relay.call("DELETE", "/end-session", key)
        assert (status, body) == (400, {"error": "sessionId is required"})
    finally:
        await stop_process(relay.proc)
    assert session_pids(data) == []


async def test_an_idle_session_ends(tmp_path: Path) -> None:
    relay = await serve(tmp_path, "--session-idle", "2")
    try:
        key = relay.key()
        assert (await relay.call("POST", "/session/worlds", key, {"name": "quiet"}))[0] == 201
        status, started = await relay.call("POST", "/start-session", key, {"worldName": "quiet"})
        assert status == 200, started
        for _ in range(4):  # requests keep it alive past its idle time
            await asyncio.sleep(0.8)
            status, _ = await relay.call("GET", "/world-info", key, clientId=started["clientId"])
            assert status == 200
        (pid,) = session_pids(tmp_path)

        async def ended() -> bool:
            status, listed = await relay.call("GET", "/session", key)
            return listed["activeSessions"] == []

        for _ in range(100):
            if await ended():
                break
            await asyncio.sleep(0.1)
        assert await ended()
        await eventually(lambda: not alive(pid), timeout=10)
    finally:
        await stop_process(relay.proc)


async def test_a_killed_relays_orphan_is_reaped_at_the_next_start(tmp_path: Path) -> None:
    relay = await serve(tmp_path)
    key = relay.key()
    try:
        assert (await relay.call("POST", "/session/worlds", key, {"name": "orphan"}))[0] == 201
        status, started = await relay.call("POST", "/start-session", key, {"worldName": "orphan"})
        assert status == 200, started
        (pid,) = session_pids(tmp_path)
        os.kill(relay.proc.pid, signal.SIGKILL)
        await relay.proc.wait()
        await asyncio.sleep(0.5)
        assert alive(pid)  # its own process group: the kill did not reach it
    finally:
        await stop_process(relay.proc)
    again = await serve(tmp_path)
    try:
        await eventually(lambda: not alive(pid), timeout=10)
        assert session_pids(tmp_path) == []
        status, listed = await again.call("GET", "/session", key)
        assert listed == {"activeSessions": []}
    finally:
        await stop_process(again.proc)


async def test_the_handshake_and_the_foundry_host_list(tmp_path: Path) -> None:
    relay = await serve(tmp_path, "--headless-allow", "foundry.example:30000")
    try:
        key = relay.key()
        headers = {"x-foundry-url": "http://foundry.example:30000", "x-username": "Gamemaster"}
        status, body = await relay.call(
            "POST", "/session-handshake", key, headers={"x-username": "gm"}
        )
        assert (status, body) == (
            400,
            {"error": "x-foundry-url and x-username headers are required"},
        )
        elsewhere = {**headers, "x-foundry-url": "http://169.254.169.254/latest"}
        status, body = await relay.call("POST", "/session-handshake", key, headers=elsewhere)
        assert status == 403
        status, shake = await relay.call("POST", "/session-handshake", key, headers=headers)
        assert status == 200, shake
        assert list(shake) == sorted(shake) and shake["username"] == "Gamemaster"
        wrong = encrypt_password(shake["publicKey"], "pw", "0" * 32)
        status, body = await relay.call(
            "POST",
            "/start-session",
            key,
            {"handshakeToken": shake["token"], "encryptedPassword": wrong},
        )
        assert (status, body) == (401, {"error": "Nonce mismatch"})
        status, body = await relay.call(  # single use: gone after the failed attempt
            "POST",
            "/start-session",
            key,
            {"handshakeToken": shake["token"], "encryptedPassword": wrong},
        )
        assert (status, body) == (400, {"error": "Invalid or expired handshake token"})
        status, body = await relay.call("POST", "/start-session", key, {"handshakeToken": "x"})
        assert (status, body) == (
            400,
            {"error": "handshakeToken and encryptedPassword are required"},
        )
        no_scope = relay.key(("world:info",))
        status, body = await relay.call("GET", "/session", no_scope)
        assert (status, body) == (403, {"error": "API key lacks required scope: session:manage"})
    finally:
        await stop_process(relay.proc)


async def test_sessions_turned_off_answer_as_the_reference(relay: Any) -> None:
    """The relay fixture has no session manager: the reference's ALLOW_HEADLESS=false."""
    key = relay.key(SCOPE)
    answer = await relay.call("POST", "/session-handshake", key=key)
    assert answer.status == 503
    assert answer.json() == {
        "docsUrl": "https://foundryrestapi.com/docs/installation",
        "error": "Headless sessions are not available on this relay",
        "message": "The operator has disabled headless sessions. To use headless sessions, "
        "self-host your own relay instance.",
    }
    answer = await relay.call("POST", "/start-session", key=key, json={"handshakeToken": "t"})
    assert answer.json() == {"error": "handshakeToken and encryptedPassword are required"}
    answer = await relay.call(
        "POST", "/start-session", key=key, json={"handshakeToken": "t", "encryptedPassword": "p"}
    )
    assert answer.json() == {"error": "Invalid or expired handshake token"}
    answer = await relay.call("DELETE", "/end-session", key=key, params={"sessionId": "abc"})
    assert (answer.status, answer.json()) == (200, {"status": "ok"})
    answer = await relay.call("DELETE", "/end-session", key=key)
    assert (answer.status, answer.json()) == (400, {"error": "sessionId is required"})
    answer = await relay.call("GET", "/session", key=key)
    assert (answer.status, answer.json()) == (200, {"activeSessions": []})
    answer = await relay.call("GET", "/api/status")
    assert answer.json()["headlessEnabled"] is False
