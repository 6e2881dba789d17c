"""Shared fixtures: a real relay on 127.0.0.1 and a scriptable world double (their helpers,
imported by tests, are in tests/support/relay.py and tests/support/servers.py).

Fixtures (pytest-asyncio, function scope):

- `relay` -> `RelayServer`: a real aiohttp relay on 127.0.0.1 (random free port) with its SQLite
  store in a tmp data dir, stopped at teardown. It exposes `.url` (http base), `.ws_url` (the
  world socket, `ws://127.0.0.1:<port>/relay`), `.store` (`RelayStore`), `.app`, `.state`
  (`RelayState`), `.config`, `.http` (an aiohttp ClientSession), and helpers:
  `.key(scopes=DEFAULT_SCOPES, account="default", **create_key_kwargs) -> secret`,
  `.token(account="default", client_id="world-1") -> connection token`,
  `await .call(method, path, key=None, json=None, params=None, data=None, headers=None)
  -> Answer(status, body: bytes, headers)` with `Answer.json()`,
  `await .world(client_id="world-1", account="default", system_id="dnd5e", handler=None,
  **query) -> WorldDouble` (mints a token and connects an authenticated world double).
- `redis_server` -> `RedisServer`: a real `redis-server` (the Debian package) on a free port of
  127.0.0.1 with its files in a tmp dir, stopped by pid at teardown; `.url` (`redis://...`),
  `.port`, `.pid`, `.stop()`. `start_redis_server(directory, port=None)` starts one outside a
  fixture (with `port`, again where a stopped one was).
- `world_double` -> the `WorldDouble` class (`world_double.Refused` is `WorldRefused`).
- `postgres` (session) -> `PostgresServer`: a real PostgreSQL (Debian's package) initialised in a
  temporary directory (as the `postgres` user when the tests run as root), listening on a free
  port on 127.0.0.1, stopped by pid at the end of the session. `postgres_url` -> the URL of a
  new empty database on it, for one test.
- `store_target` -> what `RelayStore(...)` opens, once per backend (the test runs twice): a
  SQLite file in the test's tmp dir, then a new PostgreSQL database. Store tests use it.
- `relay_factory` -> `async (data_dir=None, **RelayConfig overrides) -> RelayServer`: more
  relays, or one with custom settings (small intervals, rate limits, timeouts, a fixed `port`
  and `data_dir` to restart one); all stopped at teardown.
- `await start_serve(data_dir, port, *serve_args, **subprocess_options)` -> `(process, lines)`:
  `vttrelay serve` as a real process, once it printed its `Try: ` line; `await stop_process(proc)`
  stops any subprocess a test started (SIGTERM, then SIGKILL).
- `await assert_duplicate_from_other_host(relay, client_id)`: a second world with a held id,
  from another host, gets 4004 before auth-success.

`WorldDouble` (also usable on its own: `WorldDouble(ws_url, client_id, token, ...)`, then
`await double.connect()`): connects to /relay with `id` and the module's metadata query, sends
the auth frame and waits for `auth-success` (`connect()` raises `WorldRefused(code, reason)` if the
relay closes instead). Every frame it receives after auth is appended to `.received`; request
frames (those with a `requestId`) go to `.requests` (an asyncio.Queue; `await next_request()`),
and are answered by `handler(frame)` (sync or async) which returns a dict (sent as JSON), a
str/bytes (sent verbatim as a text frame) or None (no reply). The default handler echoes
`{"type": "<type>-result", "requestId": ..., "data": {"echo": <frame>}}`. `await emit(frame)`
sends any frame (e.g. events); `await close()`; `await wait_closed()` -> close code (the reason
text is then in `.close_reason`).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.support.relay import RelayServer, WorldDouble, start_relay

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

# A port for a server a test starts in a subprocess: drawn below the kernel's ephemeral range,
# so no other test's bind(0) or outgoing connection takes it while that process starts.
from bench.procs import free_port  # noqa: E402


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[RelayServer]:
    server = await start_relay(tmp_path / "relay")
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def relay_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[RelayServer]]]:
    servers: list[RelayServer] = []

    async def make(data_dir: Path | None = None, **overrides: Any) -> RelayServer:
        server = await start_relay(data_dir or tmp_path / f"relay{len(servers)}", **overrides)
        servers.append(server)
        return server

    try:
        yield make
    finally:
        for server in servers:
            await server.stop()


@pytest.fixture
def world_double() -> type[WorldDouble]:
    """The `WorldDouble` class; `world_double.Refused` is the `WorldRefused` exception."""
    return WorldDouble


# Redis ---------------------------------------------------------------------------------------


@dataclass
class RedisServer:
    """A `redis-server` process started by `start_redis_server` (stopped by pid)."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Terminate the server by its pid and wait for it (idempotent)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis_server(directory: Path, port: int | None = None) -> RedisServer:
    """Start `redis-server` on a free port of 127.0.0.1 (or `port`: a restart), its files in
    `directory`, no persistence; returns once it answers PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    process = subprocess.Popen(
        [
            binary,
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--dir", str(directory),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--loglevel", "warning",
            "--logfile", str(directory / "redis.log"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    server = RedisServer(process, port, directory)
    deadline = time.monotonic() + 10
    while not _redis_answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            logged = directory / "redis.log"
            text = logged.read_text() if logged.exists() else ""
            raise RuntimeError(f"redis-server did not start on port {port}: {text[-500:]}")
        time.sleep(0.02)
    return server


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = start_redis_server(tmp_path / "redis")
    try:
        yield server
    finally:
        server.stop()


# PostgreSQL ---------------------------------------------------------------------------------------


def postgres_bin(name: str) -> str:
    """A PostgreSQL server program (initdb, postgres) from Debian's package, newest version."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        raise RuntimeError(f"PostgreSQL's {name} not found: install postgresql (.ci/run does)")
    return found[-1]


@dataclass
class PostgresServer:
    """A PostgreSQL server started for the test session (see the module docstring)."""

    process: subprocess.Popen[bytes]
    directory: str
    port: int

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """Create an empty database; returns its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_postgres() -> PostgresServer:
    """initdb into a new temporary directory and start the server on a free 127.0.0.1 port;
    waits until it accepts connections. Root cannot run PostgreSQL: as root, the directory is
    given to the `postgres` user and both programs run as it."""
    directory = tempfile.mkdtemp(prefix="vttrelay-pg-")
    user: str | None = None
    if os.geteuid() == 0:
        user = "postgres"
        shutil.chown(directory, user)
    data = os.path.join(directory, "data")
    subprocess.run(
        [postgres_bin("initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
         "--locale=C", "--no-sync"],
        check=True, capture_output=True, user=user,
    )  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [postgres_bin("postgres"), "-D", data, "-p", str(port), "-h", "127.0.0.1",
         "-k", directory, "-c", "fsync=off", "-c", "synchronous_commit=off",
         "-c", "full_page_writes=off", "-c", "max_connections=200"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, user=user,
    )  # fmt: skip
    server = PostgresServer(process, directory, port)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
            psycopg.connect(server.url(), connect_timeout=2).close()
            return server
        except Exception as exc:  # not listening yet, or still starting up
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start: {exc}") from exc
            time.sleep(0.1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    return postgres.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    if request.param == "sqlite":
        return tmp_path / "relay.db"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()
