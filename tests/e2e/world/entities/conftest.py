"""Fixtures for the entity and search end-to-end tests (the connected demo world is the `world`
fixture of tests/e2e/conftest.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  the entity, search and macro scopes (query values that are not strings are sent as JSON text).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.e2e import api_for

from vttrelay.relay.routes import DEFAULT_SCOPES

SCOPES = (*DEFAULT_SCOPES, "entity:write", "macro:write", "chat:write")


@pytest.fixture
def api(relay: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    return api_for(relay, SCOPES, rate_per_minute=0)  # the give test sends 200 at once
