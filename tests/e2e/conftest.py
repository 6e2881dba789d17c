"""Fixtures for every end-to-end test (the `relay` fixture and the world double are in
tests/conftest.py).

- `start_world` -> `async start(relay, data_dir=None, client_id="vttrelay-demo", token=None,
  wait=True, **agent_options) -> EmbeddedWorld`: the real embedded world, its SQLite in a tmp
  dir, connected to `relay` over a real WebSocket (`wait`: returns once connected); stopped at
  teardown. Reconnect delays are small by default (`FAST`) so that tests stay fast.
- `world` -> `EmbeddedWorld`: the demo world so started, connected to `relay`.

The helpers the tests import (`CLIENT_ID`, `FAST`, `call_api`, `api_for`, `eventually`) are in
tests/support/e2e.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID, FAST

from vttrelay.world.embedded import EmbeddedWorld, start


@pytest.fixture
async def start_world(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[EmbeddedWorld]]]:
    running: list[EmbeddedWorld] = []

    async def _start(
        relay: Any,
        data_dir: Path | None = None,
        client_id: str = CLIENT_ID,
        token: str | None = None,
        wait: bool = True,
        **options: Any,
    ) -> EmbeddedWorld:
        token = token or relay.token(client_id=client_id)
        data_dir = data_dir or tmp_path / "world-data"
        handle = await start(
            relay.ws_url,
            token,
            data_dir,
            wait_connected=30.0 if wait else 0,  # returns as soon as connected
            client_id=client_id,
            **{**FAST, **options},
        )
        running.append(handle)
        if wait:
            assert handle.agent.connected.is_set(), handle.agent.stopped_reason
        return handle

    try:
        yield _start
    finally:
        for handle in running:
            await handle.stop()


@pytest.fixture
async def world(relay: Any, start_world: Any) -> EmbeddedWorld:
    handle: EmbeddedWorld = await start_world(relay)
    return handle
