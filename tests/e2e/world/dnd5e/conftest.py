"""Fixtures for the dnd5e end-to-end tests (the connected demo world is the `world` fixture of
tests/e2e/conftest.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  the `dnd5e` scope (query values that are not strings are sent as JSON text).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.e2e import api_for

from vttrelay.relay.routes import DEFAULT_SCOPES

SCOPES = (*DEFAULT_SCOPES, "dnd5e", "chat:write")


@pytest.fixture
def api(relay: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    return api_for(relay, SCOPES, rate_per_minute=0)  # the concurrency test sends 500 at once
