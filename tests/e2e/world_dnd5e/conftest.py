"""Fixtures for the dnd5e end-to-end tests: the real embedded demo world (SQLite in a tmp dir)
connected to a real relay (the `relay` fixture of tests/conftest.py) over a real WebSocket.

- `world` -> `EmbeddedWorld`, connected, stopped at teardown.
- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  the `dnd5e` scope (query values that are not strings are sent as JSON text).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

from ..conftest import call_api

SCOPES = (*DEFAULT_SCOPES, "dnd5e", "chat:write")


@pytest.fixture
async def world(relay: Any, start_world: Any) -> EmbeddedWorld:
    handle: EmbeddedWorld = await start_world(relay)
    return handle


@pytest.fixture
def api(relay: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    key = relay.key(SCOPES, rate_per_minute=0)  # the concurrency test sends 500 at once

    async def call(method: str, path: str, json: Any = None, **query: Any) -> tuple[int, Any]:
        return await call_api(relay, key, method, path, json, **query)

    return call
