"""Fixtures for the world's end-to-end tests (the embedded world itself comes from
`start_world` of tests/e2e/conftest.py).

- `api` -> `async call(relay, method, path, json=None, **query) -> (status, body)` with a key
  holding every scope the world endpoints need (one key per relay).
- `stop_process(proc)`: SIGTERM a subprocess the test started, SIGKILL if it lingers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.e2e import WORLD_SCOPES, call_api


@pytest.fixture
def api() -> Callable[..., Awaitable[tuple[int, Any]]]:
    keys: dict[int, str] = {}

    async def call(
        relay: Any, method: str, path: str, json: Any = None, **query: Any
    ) -> tuple[int, Any]:
        if id(relay) not in keys:
            keys[id(relay)] = relay.key(WORLD_SCOPES)
        return await call_api(relay, keys[id(relay)], method, path, json, **query)

    return call
