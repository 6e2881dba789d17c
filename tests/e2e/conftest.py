"""Helpers for every end-to-end test (the `relay` fixture and the world double are in
tests/conftest.py).

- `start_world` -> `async start(relay, data_dir=None, client_id="vttrelay-demo", token=None,
  wait=True, **agent_options) -> EmbeddedWorld`: the real embedded world, its SQLite in a tmp
  dir, connected to `relay` over a real WebSocket (`wait`: returns once connected); stopped at
  teardown. Reconnect delays are small by default (`FAST`) so that tests stay fast.
- `world` -> `EmbeddedWorld`: the demo world so started, connected to `relay`.
- `call_api(relay, key, method, path, json=None, **query) -> (status, body)`: one API call;
  query values that are not strings are sent as JSON text. `api_for(relay, scopes, **key_options)`
  -> `async call(method, path, json=None, **query)`: the same with a new key of those scopes.
- `eventually(predicate, timeout=5.0)`: poll until true, else fail.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import orjson
import pytest

from vttrelay.world.embedded import EmbeddedWorld, start

CLIENT_ID = "vttrelay-demo"  # the embedded world's id, as `vttrelay serve` names it
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
