"""Fixtures for the dnd5e end-to-end tests: the real embedded demo world (SQLite in a tmp dir)
connected to a real relay (the `relay` fixture of tests/conftest.py) over a real WebSocket.

- `world` -> `EmbeddedWorld`, connected, stopped at teardown.
- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  the `dnd5e` scope (query values that are not strings are sent as JSON text).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld, start

CLIENT_ID = "vttrelay-demo"
FAST = {"base_delay": 0.05, "max_delay": 0.2, "duplicate_retry": 0.2, "connect_timeout": 2.0}
SCOPES = (*DEFAULT_SCOPES, "dnd5e", "chat:write")


@pytest.fixture
async def world(relay: Any, tmp_path: Path) -> AsyncIterator[EmbeddedWorld]:
    handle = await start(
        relay.ws_url,
        relay.token(client_id=CLIENT_ID),
        tmp_path / "world-data",
        wait_connected=30.0,  # returns as soon as connected; generous for a loaded machine
        client_id=CLIENT_ID,
        **FAST,
    )
    assert handle.agent.connected.is_set(), handle.agent.stopped_reason
    try:
        yield handle
    finally:
        await handle.stop()


@pytest.fixture
def api(relay: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    key = relay.key(SCOPES, rate_per_minute=0)  # the concurrency test sends 500 at once

    async def call(method: str, path: str, json: Any = None, **query: Any) -> tuple[int, Any]:
        params = {
            k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in query.items()
        }
        answer = await relay.call(method, path, key=key, json=json, params=params or None)
        return answer.status, orjson.loads(answer.body)

    return call
