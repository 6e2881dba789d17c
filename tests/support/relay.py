"""A real relay on 127.0.0.1 and a scriptable world double, for the tests (the `relay`,
`relay_factory` and `world_double` fixtures of tests/conftest.py are built on them).

- `RelayServer` (from `await start_relay(data_dir, **RelayConfig overrides)`): a real aiohttp
  relay; `.url`, `.ws_url`, `.store`, `.app`, `.state`, `.config`, `.http` and the calls of
  `RelayCalls` (`.key`, `.token`, `await .call(...) -> Answer`, `await .world(...) -> WorldDouble`).
- `WorldDouble(ws_url, client_id, token, ...)`, then `await double.connect()` (raises
  `WorldRefused(code, reason)` if the relay closes instead of sending auth-success); the default
  handler `echo_handler` echoes each request.
- `await start_serve(data_dir, port, *serve_args, **subprocess_options)` -> `(process, lines)`:
  `vttrelay serve` as a real process, once it printed its `Try: ` line; `await stop_process(proc)`
  stops any subprocess a test started (SIGTERM, then SIGKILL); `await run_vttrelay(*args)` ->
  `(exit code, stdout, stderr)` of a `vttrelay` command run to its end.
- `await start_serve_ready(data_dir, *serve_args, env=None)` -> `(process, ready)`: `vttrelay
  serve --port 0 --ready-file` as a real process, once its ready file is written (`ready`: the
  file's JSON: url, port, pid, version, clientId, apiKey, seed).
- `await assert_duplicate_from_other_host(relay, client_id)`: a second world with a held id,
  from another host, gets 4004 before auth-success.

tests/conftest.py describes each in full.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from vttrelay.protocol import Close
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.listener import RelaySite, make_runner
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.relay.sessions_api import SessionService
from vttrelay.relay.state import STATE, RelayState
from vttrelay.relay.store import RelayStore
from vttrelay.server.assemble import build_app

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


async def run_vttrelay(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str = ""
) -> tuple[int, str, str]:
    """`vttrelay ARGS` run to its end as a real process (in `cwd`, with `env` as its whole
    environment when given, `stdin` its input): its exit code, stdout and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), 60)
    return proc.returncode or 0, out.decode(), err.decode()


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


async def _spawn_serve(
    data_dir: Path, port: int, args: tuple[str, ...], **options: Any
) -> asyncio.subprocess.Process:
    """`vttrelay serve --port PORT --data-dir DATA_DIR *ARGS` started (its stderr discarded
    unless `options`, which go to `asyncio.create_subprocess_exec`, say otherwise)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vttrelay",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *args,
        **{"stderr": asyncio.subprocess.DEVNULL, **options},
    )


async def start_serve(
    data_dir: Path, port: int, *args: str, **options: Any
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """Run `vttrelay serve --port PORT --data-dir DATA_DIR *ARGS` as a real process (extra
    `asyncio.create_subprocess_exec` options such as `preexec_fn` pass through) and wait for its
    `Try: ` line; return the process and the stdout lines up to that one. The caller stops it
    with `stop_process`; if it exits before that line, it is stopped here and the test fails."""
    proc = await _spawn_serve(
        data_dir,
        port,
        args,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        **options,
    )
    return proc, await serve_lines(proc, "Try: ")


async def serve_lines(proc: asyncio.subprocess.Process, last: str) -> list[str]:
    """The stdout lines of a started `vttrelay serve` (stdout a pipe, unbuffered) up to the first
    that starts with `last`, that one included; if it exits before, or something fails, it is
    stopped here and the test fails."""
    lines: list[str] = []
    assert proc.stdout is not None
    try:
        while not lines or not lines[-1].startswith(last):
            raw = await asyncio.wait_for(proc.stdout.readline(), 30)
            if not raw:
                raise AssertionError(f"serve exited early: {lines}")
            lines.append(raw.decode().rstrip("\n"))
    except BaseException:
        await stop_process(proc)
        raise
    return lines


async def start_serve_ready(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
    """Run `vttrelay serve --port 0 --data-dir DATA_DIR --ready-file ... *ARGS` (environment
    plus `env`) and wait for its ready file (the one naming its pid); the process and the file's
    JSON. The caller stops it with `stop_process`; if it exits first, the test fails."""
    ready = Path(data_dir).with_name(Path(data_dir).name + ".ready")
    proc = await _spawn_serve(
        data_dir,
        0,
        ("--ready-file", str(ready), *args),
        stdout=asyncio.subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        for _ in range(600):
            if ready.exists():  # and not a file an earlier run left (another pid)
                info: dict[str, Any] = orjson.loads(ready.read_bytes())
                if info.get("pid") == proc.pid:
                    return proc, info
            if proc.returncode is not None:
                raise AssertionError(f"serve exited early with {proc.returncode}")
            await asyncio.sleep(0.05)
        raise AssertionError("serve wrote no ready file in 30 s")
    except BaseException:
        await stop_process(proc)
        raise


async def start_relay(
    data_dir: Path, sessions: SessionService | None = None, **overrides: Any
) -> RelayServer:
    """Start a relay on 127.0.0.1 (random port unless `port=` is given), store in `data_dir`;
    with `sessions`, its session routes use that manager (as `vttrelay serve` gives it)."""
    overrides.setdefault("port", 0)
    config = RelayConfig(host="127.0.0.1", data_dir=data_dir, **overrides)
    store = RelayStore(config.store_target)
    app = build_app(config, store, sessions=sessions)
    runner = make_runner(app, config, shutdown_timeout=2)
    await runner.setup()
    site = RelaySite(runner, config)
    await site.start()
    port = site.port
    return RelayServer(app, runner, config, store, "127.0.0.1", port, aiohttp.ClientSession())
