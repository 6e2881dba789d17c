"""Fixtures for the world's end-to-end tests: the real embedded world connected to a real relay
(the `relay` fixture of tests/conftest.py) over a real WebSocket, with its SQLite in a tmp dir.

- `start_world` -> `async start(relay, data_dir=None, client_id="vttrelay-demo", token=None,
  **agent_options) -> EmbeddedWorld` (connected; stopped at teardown). Reconnect delays are
  small by default so that tests stay fast.
- `api` -> `async call(relay, method, path, json=None, **query) -> (status, body)` with a key
  holding every scope the world endpoints need.
- `eventually(predicate, timeout)`: poll until true, else fail.
- `stop_process(proc)`: SIGTERM a subprocess the test started, SIGKILL if it lingers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld, start

CLIENT_ID = "vttrelay-demo"
FAST: dict[str, Any] = {
    "base_delay": 0.05,
    "max_delay": 0.2,
    "duplicate_retry": 0.2,
    "connect_timeout": 2.0,
}
SCOPES = (*DEFAULT_SCOPES, "chat:write")


async def eventually(predicate: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def stop_process(proc: asyncio.subprocess.Process) -> None:
    """Stop a subprocess the test started: SIGTERM, then SIGKILL after 10 s."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            os.kill(proc.pid, signal.SIGKILL)
            await proc.wait()


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
            await handle.agent.stop()
            handle.world.close()


@pytest.fixture
def api() -> Callable[..., Awaitable[tuple[int, Any]]]:
    keys: dict[int, str] = {}

    async def call(relay: Any, method: str, path: str, json: Any = None, **query: Any) -> Any:
        if id(relay) not in keys:
            keys[id(relay)] = relay.key(SCOPES)
        params = {
            k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in query.items()
        }
        answer = await relay.call(method, path, key=keys[id(relay)], json=json, params=params)
        return answer.status, orjson.loads(answer.body)

    return call
