"""Fixtures for the end-to-end tests of the encounter and scene routes (the connected demo world
is the `world` fixture of tests/e2e/conftest.py; `sse` is the stream reader of
tests/support/streams.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  every scope (query values that are not strings are sent as JSON text).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.e2e import api_for
from tests.support.streams import sse

from vttrelay.relay.routes import ALL_SCOPES

__all__ = ["sse"]


@pytest.fixture
def api(relay: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    return api_for(relay, ALL_SCOPES, rate_per_minute=0)
