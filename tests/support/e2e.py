"""Helpers for the end-to-end tests: the demo world's id, the fast reconnect delays the
`start_world` fixture (tests/e2e/conftest.py) uses, polling and API calls.

- `CLIENT_ID`: the embedded world's id, as `vttrelay serve` names it; `FAST`: small reconnect
  delays so that tests stay fast; `WORLD_SCOPES`: every scope the world endpoints' tests need.
- `call_api(relay, key, method, path, json=None, **query) -> (status, body)`: one API call;
  query values that are not strings are sent as JSON text. `api_for(relay, scopes, **key_options)`
  -> `async call(method, path, json=None, **query)`: the same with a new key of those scopes.
- `eventually(predicate, timeout=5.0)`: poll until true, else fail.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import orjson

from vttrelay.relay.routes import DEFAULT_SCOPES

# What the `api` fixtures of the files and tabletop tests give: `async call(method, path, json=None,
# **query) -> (status, body)`.
Api = Callable[..., Awaitable[tuple[int, Any]]]

CLIENT_ID = "vttrelay-demo"  # the embedded world's id, as `vttrelay serve` names it
WORLD_SCOPES = (*DEFAULT_SCOPES, "chat:write")
FAST: dict[str, Any] = {
    "base_delay": 0.05,
    "max_delay": 0.2,
    "duplicate_retry": 0.2,
    "connect_timeout": 2.0,
}


async def eventually(predicate: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def call_api(
    relay: Any, key: str, method: str, path: str, json: Any = None, **query: Any
) -> tuple[int, Any]:
    params = {k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in query.items()}
    answer = await relay.call(method, path, key=key, json=json, params=params)
    return answer.status, orjson.loads(answer.body)


def api_for(
    relay: Any, scopes: tuple[str, ...], **key_options: Any
) -> Callable[..., Coroutine[Any, Any, tuple[int, Any]]]:
    key = relay.key(scopes, **key_options)

    async def call(method: str, path: str, json: Any = None, **query: Any) -> tuple[int, Any]:
        return await call_api(relay, key, method, path, json, **query)

    return call
