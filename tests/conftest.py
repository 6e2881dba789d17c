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

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.relay import RelayServer, WorldDouble, start_relay
from tests.support.servers import PostgresServer, RedisServer, start_postgres, start_redis_server

# pytest's own `pytester` fixture: the tests of the pytest plugin (tests/e2e/testing) run a
# user's test file against it in a pytest of its own
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `bench/` sits beside `src/`, not inside the package
    sys.path.insert(0, str(ROOT))


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


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = start_redis_server(tmp_path / "redis")
    try:
        yield server
    finally:
        server.stop()


# PostgreSQL ---------------------------------------------------------------------------------------


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
