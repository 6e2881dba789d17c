"""Fixtures for the scale-out tests: several relay instances sharing one Redis and one store.

- `cluster` -> `async make(n=2, **RelayConfig overrides) -> list[RelayServer]`: `n` in-process
  relays (tests/conftest.py's `RelayServer`, so `.state` can be inspected) on free ports, over the
  test's `redis_server` and one shared store (SQLite in one data dir, or the PostgreSQL database
  `database=postgres_url` names); stopped at teardown.
- `relay_processes` -> `async start(n=2, *serve_args, redis_url=None, data_dir=None,
  database=None) -> list[RelayProcess]`: `n` `vttrelay serve --no-world` PROCESSES on free ports
  of 127.0.0.1, sharing `redis_url` (default: the test's `redis_server`) and the store in
  `data_dir` (default one tmp dir), or the PostgreSQL `database` URL (`--database`);
  `serve_args` are added to every command line. Each returns once it answers /api/health.
  A `RelayProcess` has the calls of a `RelayServer` (`.key()`, `.token()`, `.call()`,
  `.world()`; keys and tokens are minted in the shared store), `.url`, `.ws_url`, `.pid`,
  `.instance_id`, `.log` (its stderr so far), `.kill()` (SIGKILL by pid) and `await .stop()`
  (SIGTERM by pid, then wait); every process is stopped at teardown.
- `balancer` -> `async make(nodes) -> Balancer`: a TCP load balancer in front of relay nodes, as
  an operator would put one: each new connection goes to the first node that accepts it (a dead
  one refuses), bytes are copied both ways, and when either side closes the other is closed.
  `.url`, `.ws_url`, `.token()` (minted in the first node's store, for `start_world`); stopped
  at teardown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from bench.procs import free_port
from tests.support.relay import RelayCalls, RelayServer, WorldDouble
from tests.support.servers import RedisServer

from vttrelay.relay.store import RelayStore


@pytest.fixture
async def cluster(
    redis_server: RedisServer,
    relay_factory: Callable[..., Awaitable[RelayServer]],
    tmp_path: Path,
) -> Callable[..., Awaitable[list[RelayServer]]]:
    async def make(n: int = 2, **overrides: Any) -> list[RelayServer]:
        overrides.setdefault("redis_url", redis_server.url)
        return [
            await relay_factory(tmp_path / "shared", instance_id=f"relay-{i}", **overrides)
            for i in range(n)
        ]

    return make


@dataclass
class RelayProcess(RelayCalls):
    """A `vttrelay serve` subprocess (see the module docstring)."""

    process: subprocess.Popen[bytes]
    port: int
    instance_id: str
    store: RelayStore
    http: aiohttp.ClientSession
    log_path: Path
    worlds: list[WorldDouble] = field(default_factory=list)

    @property
    def url(self) -> str:  # type: ignore[override]
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:  # type: ignore[override]
        return f"ws://127.0.0.1:{self.port}/relay"

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL by pid: the instance dies without releasing anything."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(5)

    async def stop(self) -> None:
        """Close the test's worlds, then SIGTERM by pid and wait (idempotent)."""
        for double in self.worlds:
            with contextlib.suppress(Exception):
                await double.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self.process.wait, 10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


async def _health(http: aiohttp.ClientSession, url: str) -> dict[str, Any] | None:
    try:
        async with http.get(url + "/api/health") as resp:
            if resp.status == 200:
                body: dict[str, Any] = await resp.json()
                return body
    except aiohttp.ClientError:
        return None
    return None


@pytest.fixture
async def relay_processes(
    redis_server: RedisServer, tmp_path: Path
) -> AsyncIterator[Callable[..., Awaitable[list[RelayProcess]]]]:
    started: list[RelayProcess] = []
    stores: list[RelayStore] = []
    sessions: list[aiohttp.ClientSession] = []

    async def start(
        n: int = 2,
        *serve_args: str,
        redis_url: str | None = None,
        data_dir: Path | None = None,
        database: str | None = None,
    ) -> list[RelayProcess]:
        data = data_dir or tmp_path / "shared"
        data.mkdir(parents=True, exist_ok=True)
        store = RelayStore(database or data / "relay.db")  # before the processes: one migration
        if database:
            serve_args = ("--database", database, *serve_args)
        stores.append(store)
        batch: list[RelayProcess] = []
        for _ in range(n):
            port = free_port()
            log_path = tmp_path / f"relay-{len(started)}.log"
            command = [
                sys.executable, "-m", "vttrelay", "serve", "--no-world",
                "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data),
                "--redis", redis_url or redis_server.url, *serve_args,
            ]  # fmt: skip
            with log_path.open("wb") as log_file:
                process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file
                )
            http = aiohttp.ClientSession()
            sessions.append(http)
            node = RelayProcess(process, port, "", store, http, log_path)
            started.append(node)
            batch.append(node)
        for node in batch:
            deadline = time.monotonic() + 20
            while (health := await _health(node.http, node.url)) is None:
                if node.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"relay process did not start:\n{node.log[-2000:]}")
                await asyncio.sleep(0.05)
            node.instance_id = str(health["instanceId"])
        return batch

    try:
        yield start
    finally:
        for node in started:
            await node.stop()
        for http in sessions:
            await http.close()
        for store in stores:
            store.close()


class Balancer:
    """A TCP load balancer on 127.0.0.1 in front of relay nodes (see the module docstring)."""

    def __init__(self, nodes: list[Any]) -> None:
        self.nodes = nodes
        self.server: asyncio.Server | None = None
        self.port = 0
        self._pipes: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/relay"

    def token(self, account: str = "default", client_id: str = "world-1") -> str:
        token: str = self.nodes[0].token(account, client_id)
        return token

    async def start(self) -> Balancer:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self.server.sockets[0].getsockname()[1])
        return self

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for node in self.nodes:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", node.port)
            except OSError:
                continue  # dead: the next one
            pipes = [
                asyncio.ensure_future(_pipe(reader, up_writer)),
                asyncio.ensure_future(_pipe(up_reader, writer)),
            ]
            self._pipes.update(pipes)
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            for task in pipes:
                task.cancel()
                self._pipes.discard(task)
            up_writer.close()
            break
        writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._pipes):
            task.cancel()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()


@pytest.fixture
async def balancer() -> AsyncIterator[Callable[[list[Any]], Awaitable[Balancer]]]:
    made: list[Balancer] = []

    async def make(nodes: list[Any]) -> Balancer:
        made.append(await Balancer(nodes).start())
        return made[-1]

    try:
        yield make
    finally:
        for one in made:
            await one.stop()


# The /ws/api client and SSE reader of the stream tests, for the same calls on other instances.
from tests.support.streams import api_ws, sse  # noqa: E402, F401
