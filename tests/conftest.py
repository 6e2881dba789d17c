"""Shared fixtures: a real relay on 127.0.0.1 and a scriptable world double.

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

import asyncio
import contextlib
import glob
import inspect
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psycopg
import pytest
from aiohttp import web

from vttrelay.protocol import Close
from vttrelay.relay.app import STATE, RelayState
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.listener import RelaySite, make_runner
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.relay.store import RelayStore
from vttrelay.server.assemble import build_app

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))

# A port for a server a test starts in a subprocess: drawn below the kernel's ephemeral range,
# so no other test's bind(0) or outgoing connection takes it while that process starts.
from bench.procs import free_port  # noqa: E402

Handler = Callable[[dict[str, Any]], Any]


class WorldRefused(Exception):
    """The relay closed the world socket instead of sending auth-success."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"world refused: {code} {reason}")
        self.code = code
        self.reason = reason


def echo_handler(frame: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": f"{frame['type']}-result",
        "requestId": frame["requestId"],
        "data": {"echo": frame},
    }


@dataclass
class Answer:
    status: int
    body: bytes
    headers: Any

    def json(self) -> Any:
        return orjson.loads(self.body)


class WorldDouble:
    """A scriptable world on /relay (see the module docstring)."""

    Refused = WorldRefused

    def __init__(
        self,
        ws_url: str,
        client_id: str,
        token: str,
        *,
        system_id: str = "dnd5e",
        query: dict[str, str] | None = None,
        handler: Handler | None = echo_handler,
        session: aiohttp.ClientSession | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.ws_url = ws_url
        self.client_id = client_id
        self.token = token
        self.query = {
            "id": client_id,
            "worldId": "test-world",
            "worldTitle": "Test World",
            "foundryVersion": "13.345",
            "systemId": system_id,
            "systemTitle": system_id,
            "systemVersion": "5.1.0",
            **(query or {}),
        }
        self.handler = handler
        self.headers = headers
        self.received: list[dict[str, Any]] = []
        self.requests: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._own_session = session is None
        self._session = session
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.close_reason: str | None = None  # the relay's close reason, once closed

    async def open_socket(self) -> aiohttp.ClientWebSocketResponse:
        """Open the socket without authenticating (for handshake tests)."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        self.ws = await self._session.ws_connect(
            self.ws_url, params=self.query, max_msg_size=0, headers=self.headers
        )
        return self.ws

    async def connect(self) -> WorldDouble:
        ws = await self.open_socket()
        await ws.send_str(orjson.dumps({"type": "auth", "token": self.token}).decode())
        msg = await ws.receive(timeout=10)
        if msg.type != aiohttp.WSMsgType.TEXT:
            await self._cleanup_session()
            raise WorldRefused(ws.close_code, str(msg.extra or ""))
        frame = orjson.loads(msg.data)
        assert frame == {"type": "auth-success"}, frame
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            while True:
                msg = await self.ws.receive()
                if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSING):
                    self.close_reason = str(msg.extra or "")
                    break
                if msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    break
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                frame = orjson.loads(msg.data)
                self.received.append(frame)
                if isinstance(frame, dict) and "requestId" in frame:
                    self.requests.put_nowait(frame)
                    if self.handler is not None:
                        asyncio.ensure_future(self._answer(frame))
        finally:
            self.closed.set()

    async def _answer(self, frame: dict[str, Any]) -> None:
        assert self.handler is not None
        reply = self.handler(frame)
        if inspect.isawaitable(reply):
            reply = await reply
        if reply is None:
            return
        if isinstance(reply, dict):
            reply = orjson.dumps(reply).decode()
        elif isinstance(reply, bytes):
            reply = reply.decode()
        with contextlib.suppress(Exception):
            await self.emit_raw(reply)

    async def emit(self, frame: dict[str, Any]) -> None:
        await self.emit_raw(orjson.dumps(frame).decode())

    async def emit_raw(self, text: str) -> None:
        assert self.ws is not None
        await self.ws.send_str(text)

    async def next_request(self, timeout: float = 5.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.requests.get(), timeout)

    async def wait_closed(self, timeout: float = 5.0) -> int | None:
        await asyncio.wait_for(self.closed.wait(), timeout)
        assert self.ws is not None
        return self.ws.close_code

    @property
    def close_code(self) -> int | None:
        return self.ws.close_code if self.ws is not None else None

    async def close(self) -> None:
        if self.ws is not None and not self.ws.closed:
            await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        await self._cleanup_session()

    async def _cleanup_session(self) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None


class RelayCalls:
    """Calls any running relay answers (a `RelayServer` here, a relay process in the scale
    tests): needs `url`, `ws_url`, `store` (the relay's store, shared), `http` and `worlds`."""

    url: str
    ws_url: str
    store: RelayStore
    http: aiohttp.ClientSession
    worlds: list[WorldDouble]

    def key(self, scopes: Any = DEFAULT_SCOPES, account: str = "default", **kw: Any) -> str:
        return self.store.create_key(account, scopes, **kw)[1]

    def token(self, account: str = "default", client_id: str = "world-1") -> str:
        return self.store.create_connection_token(account, client_id, name=client_id)

    async def call(
        self,
        method: str,
        path: str,
        key: str | None = None,
        json: Any = None,
        params: Any = None,
        data: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        all_headers = dict(headers or {})
        if key is not None:
            all_headers["x-api-key"] = key
        if json is not None:
            data = orjson.dumps(json)
            all_headers.setdefault("Content-Type", "application/json")
        async with self.http.request(
            method, self.url + path, params=params, data=data, headers=all_headers
        ) as resp:
            return Answer(resp.status, await resp.read(), resp.headers)

    async def world(
        self,
        client_id: str = "world-1",
        account: str = "default",
        system_id: str = "dnd5e",
        handler: Handler | None = echo_handler,
        **query: str,
    ) -> WorldDouble:
        double = WorldDouble(
            self.ws_url,
            client_id,
            self.token(account, client_id),
            system_id=system_id,
            query=query,
            handler=handler,
        )
        self.worlds.append(double)
        await double.connect()
        return double


async def assert_duplicate_from_other_host(relay: Any, client_id: str) -> None:
    """A world connecting from another host (127.0.0.2) to `relay` (anything with `ws_url` and
    `token()`) as `client_id`, which a live socket already holds, is closed 4004 before any
    auth-success: the very first thing it receives is the close frame."""
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        token = relay.token(client_id=client_id)
        other = WorldDouble(relay.ws_url, client_id, token, session=session)
        ws = await other.open_socket()
        await ws.send_str(orjson.dumps({"type": "auth", "token": other.token}).decode())
        msg = await ws.receive(timeout=5)
        assert msg.type == aiohttp.WSMsgType.CLOSE
        assert (ws.close_code, msg.extra) == (Close.DUPLICATE, "Client ID already connected")


@dataclass
class RelayServer(RelayCalls):
    """A running relay (see the module docstring)."""

    app: web.Application
    runner: web.AppRunner
    config: RelayConfig
    store: RelayStore
    host: str
    port: int
    http: aiohttp.ClientSession
    worlds: list[WorldDouble] = field(default_factory=list)
    stopped: bool = False

    @property
    def url(self) -> str:  # type: ignore[override]
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:  # type: ignore[override]
        return f"ws://{self.host}:{self.port}/relay"

    @property
    def state(self) -> RelayState:
        return self.app[STATE]

    async def stop(self) -> None:
        """Stop the relay (idempotent): worlds get 1001, then the store is closed."""
        if self.stopped:
            return
        self.stopped = True
        for double in self.worlds:
            with contextlib.suppress(Exception):
                await double.close()
        await self.http.close()
        with contextlib.suppress(RuntimeError):  # already cleaned up by the test
            await self.runner.cleanup()
        self.store.close()


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


async def start_serve(
    data_dir: Path, port: int, *args: str, **options: Any
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """Run `vttrelay serve --port PORT --data-dir DATA_DIR *ARGS` as a real process (extra
    `asyncio.create_subprocess_exec` options such as `preexec_fn` pass through) and wait for its
    `Try: ` line; return the process and the stdout lines up to that one. The caller stops it
    with `stop_process`; if it exits before that line, it is stopped here and the test fails."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vttrelay",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        **options,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    try:
        while not lines or not lines[-1].startswith("Try: "):
            raw = await asyncio.wait_for(proc.stdout.readline(), 30)
            if not raw:
                raise AssertionError(f"serve exited early: {lines}")
            lines.append(raw.decode().rstrip("\n"))
    except BaseException:
        await stop_process(proc)
        raise
    return proc, lines


async def start_relay(data_dir: Path, **overrides: Any) -> RelayServer:
    """Start a relay on 127.0.0.1 (random port unless `port=` is given), store in `data_dir`."""
    overrides.setdefault("port", 0)
    config = RelayConfig(host="127.0.0.1", data_dir=data_dir, **overrides)
    store = RelayStore(config.store_target)
    app = build_app(config, store)
    runner = make_runner(app, config, shutdown_timeout=2)
    await runner.setup()
    site = RelaySite(runner, config)
    await site.start()
    port = site.port
    return RelayServer(app, runner, config, store, "127.0.0.1", port, aiohttp.ClientSession())


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
