"""Fixtures for the canvas, playlist and user end-to-end tests (the connected demo world is the
`world` fixture of tests/e2e/conftest.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  every scope (query values that are not strings are sent as JSON text).
- `hooks` -> `async open(*names) -> SSEStream`: the `/hooks/subscribe` stream of the demo
  world filtered to those hook names, its `connected` event read, once the world emits hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID, Api, api_for, eventually
from tests.support.streams import SSEStream
from tests.support.streams import sse as sse  # noqa: F401  (the SSE reader fixture, used here)

from vttrelay.relay.routes import ALL_SCOPES


@pytest.fixture
def api(relay: Any) -> Api:
    return api_for(relay, ALL_SCOPES, rate_per_minute=0)


@pytest.fixture
def hooks(relay: Any, world: Any, sse: Any) -> Callable[..., Awaitable[SSEStream]]:
    key = relay.key(ALL_SCOPES)

    async def open_hooks(*names: str) -> SSEStream:
        stream: SSEStream = await sse(
            relay, "/hooks/subscribe", key, clientId=CLIENT_ID, hooks=",".join(names)
        )
        assert (await stream.event()).name == "connected"
        await eventually(lambda: world.world.subscribed("hooks"))
        return stream

    return open_hooks
