"""The world's connection to a relay, behaving like the Foundry module (wire-protocol §2).

It opens `<relay>/relay?id=...&worldId=...` with the module's metadata query, sends
`{"type": "auth", "token"}` as its first frame, drops everything until `auth-success`, then sends
`ping` and `player-list` and pings every 30 s. Requests run concurrently, one task each; replies and
events go out in order through one writer. `event-subscription-update` switches event channels on
and off; the world emits events only for channels with subscribers.

One request can't stop the world (issue 9): each reply is encoded to JSON by its own request task,
and a reply that can't be built or encoded (a number past 64 bits, nesting past orjson's limit)
is answered with an error reply to that request instead, logged in one line. The writer drops an
event it can't encode (logged) and carries on; if sending itself fails, it logs why and closes
the socket, so the agent reconnects (with backoff) instead of lingering "online" and mute.

Replies are encoded on the event loop, and sent as bytes (`send_frame`, no str round trip: a
10 MB reply's send path 24 -> 8 ms). A thread would not take the work off the loop: orjson holds
the GIL for the whole call (a 100 MB reply blocked a 1 ms ticker for 164 ms inline and 137 ms
under `asyncio.to_thread`). What bounds the cost is the relay's parameter limits (README).

Close codes, as the module: 1000 stops for good; 1008/4001/4002 stop and forget the token (the
world must be paired again); 4004 retries every 30 s; anything else (or a failed connect)
reconnects with backoff 1 s doubling to a 30 s cap, forever, logging each attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import orjson

from vttrelay import protocol
from vttrelay.world.runtime.world import World

log = logging.getLogger(__name__)

DUPLICATE_CLOSE: Final = int(protocol.Close.DUPLICATE)
NORMAL_CLOSE: Final = int(protocol.Close.NORMAL)
STOP_GRACE: Final = 5.0  # seconds stop() waits for the connection loop before cancelling it
SENDER_FAILED: Final = 1011  # close code when the writer can't send: the agent reconnects

# What the writer sends: an event or control frame (encoded by the writer), or a request's reply
# already encoded by its own task (its type, for the `sent` counter, and its JSON).
Outgoing = dict[str, Any] | tuple[str, bytes]


def relay_socket_url(relay_url: str) -> str:
    """`http(s)://host[/prefix]` or `ws(s)://host[/prefix][/relay]` -> `ws(s)://.../relay`."""
    parts = urlsplit(relay_url.strip())
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    if scheme not in ("ws", "wss"):
        raise ValueError(f"not a relay url: {relay_url!r}")
    path = parts.path.rstrip("/")
    if path.endswith("/relay"):
        path = path[: -len("/relay")]
    return urlunsplit((scheme, parts.netloc, path + "/relay", "", ""))


def relay_http_url(relay_url: str) -> str:
    """The relay's HTTP base for pairing: ws->http, wss->https, no `/relay`, no trailing /."""
    socket = urlsplit(relay_socket_url(relay_url))
    scheme = {"ws": "http", "wss": "https"}[socket.scheme]
    return urlunsplit((scheme, socket.netloc, socket.path[: -len("/relay")], "", ""))


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """The module's reconnect delay: min(cap, base * 2^(attempt - 1))."""
    return float(min(cap, base * 2 ** max(0, attempt - 1)))


@dataclass
class AgentConfig:
    relay_url: str
    token: str
    client_id: str | None = None  # defaults to the world id
    ping_interval: float = 30.0
    base_delay: float = 1.0
    max_delay: float = 30.0
    duplicate_retry: float = 30.0
    connect_timeout: float = 5.0
    on_auth_failure: Callable[[int], None] | None = None  # e.g. forget the stored token
    ssl_context: ssl.SSLContext | None = None  # for a wss:// relay_url (None: the default checks)


class Agent:
    """Runs a `World` against one relay until stopped or permanently refused."""

    def __init__(self, world: World, config: AgentConfig) -> None:
        self.world = world
        self.config = config
        self.connected = asyncio.Event()
        self.stopped_reason: str | None = None
        self.attempts = 0  # consecutive failed attempts (reset after auth-success)
        self.connections = 0  # successful authentications so far
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._outbox: asyncio.Queue[Outgoing] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.sent: Counter[str] = Counter()  # frames sent, by type (diagnostics and tests)

    # Lifecycle ------------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="vttrelay-world-agent")
        return self._task

    async def stop(self) -> None:
        """Close the connection (1000) and stop reconnecting."""
        self._stopping.set()
        ws = self._ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(Exception):
                await ws.close(code=NORMAL_CLOSE, message=b"World stopping")
        loop_task = self._task
        if loop_task is not None and not loop_task.done():
            # The loop ends by itself once the socket is closed; if it is stuck in a connect
            # attempt, cancel it.
            done, _ = await asyncio.wait({loop_task}, timeout=STOP_GRACE)
            if not done:
                loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop_task
        for task in list(self._tasks):
            task.cancel()
        self.stopped_reason = self.stopped_reason or "stopped"

    async def wait_connected(self, timeout: float) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.connected.wait()
        return self.connected.is_set()

    async def run(self) -> None:
        """Connect, serve, and reconnect as the module does, until stopped."""
        cfg = self.config
        url = relay_socket_url(cfg.relay_url)
        timeout = aiohttp.ClientTimeout(total=cfg.connect_timeout)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while not self._stopping.is_set():
                code: int | None = None
                try:
                    code = await self._serve_once(session, url)
                except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                    log.warning("world agent: cannot reach %s: %s", url, exc)
                except Exception:  # never let one bad connection end the agent silently
                    log.exception("world agent: connection to %s failed", url)
                if self._stopping.is_set():
                    break
                if code == NORMAL_CLOSE:
                    log.warning("world agent: relay closed the connection (1000); stopping")
                    self.stopped_reason = "closed by relay (1000)"
                    break
                if code in protocol.PERMANENT_CLOSE_CODES:
                    log.error(
                        "world agent: relay refused the connection token (%s); the stored "
                        "token is forgotten and the world must be paired again "
                        "(vttrelay world pair CODE --relay URL)",
                        code,
                    )
                    self.stopped_reason = f"auth failed ({code})"
                    if cfg.on_auth_failure is not None:
                        cfg.on_auth_failure(int(code))
                    break
                if code == DUPLICATE_CLOSE:
                    delay = cfg.duplicate_retry
                    log.warning(
                        "world agent: another connection holds this client id (4004); "
                        "retrying in %.1f s",
                        delay,
                    )
                else:
                    self.attempts += 1
                    delay = backoff_delay(self.attempts, cfg.base_delay, cfg.max_delay)
                    log.warning(
                        "world agent: disconnected (%s); reconnect attempt %d in %.1f s",
                        code,
                        self.attempts,
                        delay,
                    )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._stopping.wait()

    # One connection -------------------------------------------------------------------------

    async def _serve_once(self, session: aiohttp.ClientSession, url: str) -> int | None:
        cfg = self.config
        query = self.world.connection_query()
        if cfg.client_id:
            query["id"] = cfg.client_id
        ws = await session.ws_connect(
            url,
            params=query,
            timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=5.0),
            max_msg_size=0,
            autoping=True,
            ssl=cfg.ssl_context if cfg.ssl_context is not None else True,
        )
        self._ws = ws
        if self._stopping.is_set():  # stop() was called while connecting
            await ws.close(code=NORMAL_CLOSE, message=b"World stopping")
            self._ws = None
            return NORMAL_CLOSE
        pinger: asyncio.Task[None] | None = None
        writer: asyncio.Task[None] | None = None
        try:
            await ws.send_str(orjson.dumps({"type": protocol.AUTH, "token": cfg.token}).decode())
            authed = False
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    frame = orjson.loads(msg.data)
                except orjson.JSONDecodeError:
                    log.debug("world agent: dropped a non-JSON frame")
                    continue
                if not isinstance(frame, dict):
                    continue
                if not authed:
                    if frame.get("type") == protocol.AUTH_SUCCESS:
                        authed = True
                        writer, pinger = self._on_connected(ws)
                    continue  # the module drops everything before auth-success
                self._on_frame(frame)
            return ws.close_code
        finally:
            self._on_disconnected()
            for task in (pinger, writer):
                if task is not None:
                    task.cancel()
            if not ws.closed:
                await ws.close()
            self._ws = None

    def _on_connected(
        self, ws: aiohttp.ClientWebSocketResponse
    ) -> tuple[asyncio.Task[None], asyncio.Task[None]]:
        self.attempts = 0
        self.connections += 1
        outbox: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._outbox = outbox
        outbox.put_nowait({"type": protocol.PING})
        self.world.attach(
            relay_socket_url(self.config.relay_url)[: -len("/relay")], outbox.put_nowait
        )
        writer = asyncio.create_task(self._write(ws, outbox))
        pinger = asyncio.create_task(self._ping(outbox))
        self.connected.set()
        log.info("world agent: connected to %s", self.config.relay_url)
        return writer, pinger

    def _on_disconnected(self) -> None:
        self.connected.clear()
        self.world.detach()
        self._outbox = None

    async def _write(
        self, ws: aiohttp.ClientWebSocketResponse, outbox: asyncio.Queue[Outgoing]
    ) -> None:
        """Send frames in order until the connection ends. A frame that can't be encoded is
        dropped (logged); if sending fails, or anything else stops this loop, the socket is
        closed (logged), so that the agent reconnects instead of staying online and mute."""
        try:
            while True:
                item = await outbox.get()
                if isinstance(item, tuple):
                    kind, data = item
                else:
                    kind = str(item.get("type"))
                    try:
                        data = orjson.dumps(item)
                    except (orjson.JSONEncodeError, TypeError) as exc:
                        log.error(
                            "world agent: dropped a %s frame that can't be encoded: %s", kind, exc
                        )
                        continue
                await ws.send_frame(data, aiohttp.WSMsgType.TEXT)
                self.sent[kind] += 1
        except Exception as exc:  # the socket is gone or broken: reconnect, don't linger
            if not ws.closed:
                log.warning("world agent: sending failed (%r); reconnecting", exc)
                with contextlib.suppress(Exception):
                    await ws.close(code=SENDER_FAILED, message=b"World could not send")

    async def _ping(self, outbox: asyncio.Queue[Outgoing]) -> None:
        while True:
            await asyncio.sleep(self.config.ping_interval)
            outbox.put_nowait({"type": protocol.PING})

    def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == protocol.PONG:
            return
        if kind == protocol.SUBSCRIPTION_UPDATE:
            channel, count = frame.get("channel"), frame.get("count")
            if isinstance(channel, str) and isinstance(count, int | float):
                self.world.set_subscription(channel, int(count))
            return
        if isinstance(kind, str) and "requestId" in frame:
            # its time limit counts from here, however long it then waits for its turn
            task = asyncio.create_task(self._answer(frame, self.world.deadline()))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        log.debug("world agent: dropped frame of type %r", kind)

    async def _answer(self, frame: dict[str, Any], deadline: float) -> None:
        """Run one request (by `deadline`) and queue its encoded reply (`World.answer`), if the
        connection it came over is still the current one."""
        outbox = self._outbox
        reply = await self.world.answer(frame, deadline)
        if reply is not None and outbox is not None and outbox is self._outbox:
            outbox.put_nowait(reply)
