"""`vttrelay world run` as a separate process against a real relay: it uses the token stored by
`world pair`, serves requests, stops cleanly on SIGTERM, and forgets a token the relay refuses."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.support.e2e import eventually
from tests.support.relay import stop_process

from vttrelay.world.link.connection import Connection, load_connection, save_connection


async def _world_run(data_dir: Path, *extra: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vttrelay",
        "world",
        "run",
        "--data-dir",
        str(data_dir),
        *extra,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_world_run_with_the_stored_token(relay: Any, api: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "run"
    token = relay.token(client_id="run-world")
    save_connection(data_dir, Connection(relay.url, token, "run-world"))
    proc = await _world_run(data_dir)
    try:
        await eventually(lambda: relay.state.registry.get("run-world") is not None, timeout=20)
        status, body = await api(relay, "GET", "/world-info", clientId="run-world")
        assert status == 200 and body["data"]["world"]["title"] == "vttrelay Demo World"
    finally:
        await stop_process(proc)
    assert proc.returncode == 0
    await eventually(lambda: relay.state.registry.get("run-world") is None)


async def test_world_run_forgets_a_refused_token(relay: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "refused"
    save_connection(data_dir, Connection(relay.url, "revoked-or-unknown", "run-world"))
    proc = await _world_run(data_dir)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 20)
    finally:
        await stop_process(proc)
    assert proc.returncode == 1
    assert b"pair again" in err
    assert load_connection(data_dir) == Connection(relay.url, "", "run-world")


async def test_world_run_without_a_token_explains_how_to_pair(tmp_path: Path) -> None:
    proc = await _world_run(tmp_path / "none", "--relay", "http://127.0.0.1:9")
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert b"vttrelay world pair CODE --relay URL" in err
