"""Auto-start of offline stored worlds end to end (issue 23, files-sheet-sessions §4.10) over real
`vttrelay serve` processes: with `--auto-start-worlds`, a REST call naming an offline stored
embedded world of the caller's account starts it (a real world process connecting back over the
relay's WebSocket) and is answered once it has connected; the world is then a session like any
other, ended when idle. Another account's world and unknown ids keep the usual offline answer,
and so does everything with auto-start off (the default)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.procs import alive
from tests.support.e2e import eventually
from tests.support.relay import stop_process

from vttrelay.relay.store import RelayStore

from .test_sessions import serve, session_pids


def bound_key(data_dir: Path, client_id: str) -> str:
    """A key of the default account allowed on `client_id` only."""
    store = RelayStore(data_dir / "relay.db")
    try:
        return store.create_key("default", ("world:info",), (client_id,), rate_per_minute=0)[1]
    finally:
        store.close()


async def test_a_request_starts_an_offline_stored_world(tmp_path: Path) -> None:
    relay = await serve(tmp_path, "--auto-start-worlds", "--session-idle", "3")
    try:
        key = relay.key()
        status, made = await relay.call("POST", "/session/worlds", key, {"name": "sleepy"})
        assert status == 201, made
        client_id = made["clientId"]
        assert session_pids(tmp_path) == []  # stored, not running

        stranger = relay.key(account="someone-else")
        status, body = await relay.call("GET", "/world-info", stranger, clientId=client_id)
        assert (status, body) == (404, {"error": "Invalid client ID"})  # not theirs to start
        assert session_pids(tmp_path) == []

        # two requests at once: the first starts the world, the second joins that start
        first, second = await asyncio.gather(
            relay.call("GET", "/world-info", key, clientId=client_id),
            relay.call("GET", "/world-info", key, clientId=client_id),
        )
        for status, info in (first, second):
            assert status == 200, info
            assert info["type"] == "world-info-result"
        (pid,) = session_pids(tmp_path)
        status, listed = await relay.call("GET", "/session", key)
        (entry,) = listed["activeSessions"]
        assert entry["clientId"] == client_id and entry["worldName"] == "sleepy"
        status, worlds = await relay.call("GET", "/session/worlds", key)
        assert [(w["name"], w["running"]) for w in worlds["worlds"]] == [("sleepy", True)]

        status, body = await relay.call("GET", "/world-info", key, clientId="nothing-000000")
        assert (status, body) == (404, {"error": "Invalid client ID"})

        # idle: ended like any session; the next request (here by a key bound to that world,
        # naming none) starts it again
        await eventually(lambda: not alive(pid), timeout=30)
        bound = bound_key(tmp_path, client_id)
        status, info = await relay.call("GET", "/world-info", bound)
        assert status == 200 and info["type"] == "world-info-result", info
        (again,) = session_pids(tmp_path)
        assert again != pid
    finally:
        await stop_process(relay.proc)
    assert session_pids(tmp_path) == []


async def test_with_auto_start_off_an_offline_world_stays_offline(tmp_path: Path) -> None:
    relay = await serve(tmp_path)
    try:
        key = relay.key()
        status, made = await relay.call("POST", "/session/worlds", key, {"name": "sleepy"})
        assert status == 201, made
        status, body = await relay.call("GET", "/world-info", key, clientId=made["clientId"])
        assert (status, body) == (404, {"error": "Invalid client ID"})
        await asyncio.sleep(0.5)
        assert session_pids(tmp_path) == []
    finally:
        await stop_process(relay.proc)
