"""Fixtures for the file, sheet and scene-picture tests (the connected demo world is the
`world` fixture of tests/e2e/conftest.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  every scope.

The helpers these tests call (`raw`, `png`, `data_url`) are in tests/support/files.py.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from tests.support.e2e import Api

from vttrelay.relay.routes import ALL_SCOPES


@pytest.fixture
def api(relay: Any) -> Api:
    """Like tests/e2e's `api_for`, with positional-only arguments: `path` is a query value."""
    key = relay.key(ALL_SCOPES, rate_per_minute=0)

    async def call(method: str, route: str, json: Any = None, /, **query: Any) -> tuple[int, Any]:
        params = {
            k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in query.items()
        }
        answer = await relay.call(method, route, key=key, json=json, params=params)
        return answer.status, orjson.loads(answer.body)

    return call
