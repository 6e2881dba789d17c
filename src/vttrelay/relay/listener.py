"""How the relay listens: connection limit, header and idle timeouts, the file-descriptor limit.

Idle and slow sockets must not pile up until the process runs out of file descriptors:

- `make_runner` gives aiohttp `idle_timeout` as its keep-alive timeout: a connection with no
  request in progress is closed after that long. aiohttp's clock is not reset by incoming bytes,
  so it also bounds how long the head of a request after the first may take.
- `RelaySite` listens through a `ConnectionGate`. Each new connection must deliver the head of its
  first request (up to the blank line) within `header_timeout`, else it is closed (a socket that
  sends nothing, or drips its headers). At `max_connections` open connections, the oldest
  connection that has not sent a request head yet is closed to make room for the new one, so a
  flood of idle sockets can't lock clients out; when every open connection is active, a new one
  gets `503 {"error": "Too many connections"}` with `Connection: close` and `Retry-After: 1` and
  is closed. The first
  refusal is logged as a warning, then one line when the relay accepts connections again, with
  how many were refused meanwhile. Active connections are never touched. After its first head a
  connection talks to aiohttp directly (no per-request cost); the gate only sees it close.
- `raise_fd_limit` (called by `vttrelay serve`) raises the soft limit on open files to the hard
  limit, and `connection_limit` keeps the connection limit below it.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any

from aiohttp import web

from vttrelay.relay.accesslog import OneLineErrors
from vttrelay.relay.config import RelayConfig

log = logging.getLogger("vttrelay.relay")

TOO_MANY_CONNECTIONS = "Too many connections"
_BODY = b'{"error":"' + TOO_MANY_CONNECTIONS.encode() + b'"}'
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: " + str(len(_BODY)).encode() + b"\r\nConnection: close\r\n"
    b"Retry-After: 1\r\n"
    b"Access-Control-Allow-Origin: *\r\n\r\n" + _BODY
)
REFUSAL_GRACE = 1.0  # seconds a refused peer has to read the 503 before the socket is dropped
# After an answer that did not read the whole body (a 408 or 413), aiohttp reads and drops the
# rest for this long before closing, so the client sees the answer (its default is 10 s)
LINGERING_TIME = 2.0
FD_RESERVE = 64  # file descriptors kept for the database, logs and outgoing sockets
_HEAD_END = b"\r\n\r\n"


def make_runner(
    app: web.Application, config: RelayConfig, shutdown_timeout: float
) -> web.AppRunner:
    """The relay's AppRunner: no aiohttp access log (accesslog.py writes ours), the idle
    timeout, a short lingering close, and aiohttp's errors (malformed requests) as one line
    each."""
    return web.AppRunner(
        app,
        access_log=None,
        shutdown_timeout=shutdown_timeout,
        keepalive_timeout=config.idle_timeout,
        lingering_time=LINGERING_TIME,
        logger=OneLineErrors(logging.getLogger("aiohttp.server")),  # a bad request: one line
    )


class ConnectionGate:
    """The protocol factory in front of aiohttp's: counts open connections, refuses past
    `limit`, closes connections whose first request head is late (see the module docstring)."""

    def __init__(self, limit: int, header_timeout: float) -> None:
        self.limit = limit
        self.header_timeout = header_timeout
        self.factory: Callable[[], asyncio.Protocol] | None = None  # aiohttp's (set by RelaySite)
        self.open = 0  # counted when aiohttp's protocol is made (accepts come in batches)
        self.silent: dict[_Gated, None] = {}  # no first head yet, oldest first
        self.evicting = 0  # silent connections closed to make room, not yet gone
        self.refused = 0  # refused since the last time the relay was below its limit
        self.refused_total = 0
        self.header_timeouts = 0
        self.evicted_total = 0

    def __call__(self) -> asyncio.Protocol:
        if self.open - self.evicting >= self.limit and not self._evict_oldest_silent():
            return _Refused(self)
        assert self.factory is not None
        return _Gated(self, self.factory())

    def _evict_oldest_silent(self) -> bool:
        """At the limit, a connection that has sent no request head yet (the oldest) gives way
        to the new one, so a flood of idle sockets can't lock clients out. False: none."""
        for victim in self.silent:
            del self.silent[victim]
            self.evicting += 1
            self.evicted_total += 1
            victim.evicted = True
            victim.transport.abort()
            return True
        return False

    def hold(self) -> bool:
        """Count a connection that is not the site's (one to the link port, from another
        instance or not) against the limit; False: no room. A silent HTTP connection gives way
        first, as for a new HTTP connection. `let_go` when it ends."""
        if self.open - self.evicting >= self.limit and not self._evict_oldest_silent():
            self._refusing()
            return False
        self.open += 1
        return True

    def let_go(self) -> None:
        """A connection counted by `hold` ended."""
        self._one_less()

    def _refusing(self) -> None:
        if self.refused == 0:
            log.warning(
                "%d connections open (the limit): refusing new ones with 503 %s",
                self.open,
                TOO_MANY_CONNECTIONS,
            )
        self.refused += 1
        self.refused_total += 1

    def _closed(self, connection: _Gated) -> None:
        self.silent.pop(connection, None)
        if connection.evicted:
            self.evicting -= 1
        self._one_less()

    def _one_less(self) -> None:
        self.open -= 1
        if self.refused and self.open < self.limit:
            log.warning("accepting connections again (%d refused)", self.refused)
            self.refused = 0


class _Refused(asyncio.Protocol):
    """A connection past the limit: the 503, then the socket is closed."""

    def __init__(self, gate: ConnectionGate) -> None:
        self.gate = gate

    def connection_made(self, transport: Any) -> None:
        self.gate._refusing()
        transport.write(REFUSAL)
        # Closing at once with the peer's request unread would reset the connection before the
        # peer reads the 503: its bytes are dropped for a moment, then the socket is closed.
        if transport.can_write_eof():
            transport.write_eof()
        asyncio.get_running_loop().call_later(REFUSAL_GRACE, transport.abort)

    def data_received(self, data: bytes) -> None:
        pass

    def eof_received(self) -> bool:
        return False  # the peer is done: close


class _Gated(asyncio.Protocol):
    """One accepted connection: aiohttp's protocol behind a first-head deadline."""

    def __init__(self, gate: ConnectionGate, inner: asyncio.Protocol) -> None:
        self.gate = gate
        self.inner: Any = inner
        self.transport: Any = None
        self.timer: asyncio.TimerHandle | None = None
        self.tail = b""  # the last bytes seen, for a blank line split across reads
        self.evicted = False
        gate.open += 1

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.timer = asyncio.get_running_loop().call_later(
            self.gate.header_timeout, self._late_head
        )
        self.gate.silent[self] = None
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.timer is not None:
            seen = self.tail + data
            if _HEAD_END in seen:
                self._head_arrived()
            else:
                self.tail = seen[-3:]
        self.inner.data_received(data)

    def _head_arrived(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.tail = b""
        self.gate.silent.pop(self, None)
        # From now on the transport calls aiohttp directly (uvloop caches the method it calls,
        # hence set_protocol again); this object stays the protocol and sees the close.
        self.data_received = self.inner.data_received  # type: ignore[method-assign]
        self.transport.set_protocol(self)

    def _late_head(self) -> None:
        self.timer = None
        self.gate.silent.pop(self, None)
        self.gate.header_timeouts += 1
        log.debug("connection closed: no complete request head in %.1f s", self.gate.header_timeout)
        self.transport.abort()  # the peer is not reading either: free the socket now

    def eof_received(self) -> bool | None:
        result: bool | None = self.inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.gate._closed(self)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class RelaySite(web.BaseSite):
    """A TCP site whose connections go through a `ConnectionGate` (aiohttp's TCPSite otherwise),
    over TLS with `ssl_context` (the gate then sees the decrypted bytes).
    `port` is the bound port once started. With `reuse_port` (SO_REUSEPORT), other processes
    listen on the same port and the kernel spreads new connections over them (`--workers`)."""

    def __init__(
        self,
        runner: web.BaseRunner,
        config: RelayConfig,
        *,
        host: str | None = None,
        port: int | None = None,
        backlog: int = 128,
        max_connections: int | None = None,
        reuse_port: bool = False,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(runner, backlog=backlog, ssl_context=ssl_context)
        self.reuse_port = reuse_port  # SO_REUSEPORT: other processes listen on the same port
        self.host = config.host if host is None else host
        self.requested_port = config.port if port is None else port
        self.gate = ConnectionGate(
            max_connections if max_connections is not None else config.max_connections,
            config.header_timeout,
        )
        self.port = self.requested_port

    @property
    def name(self) -> str:
        return f"{'https' if self._ssl_context else 'http'}://{self.host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self.gate.factory = server
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self.gate,
            self.host,
            self.requested_port,
            backlog=self._backlog,
            reuse_port=self.reuse_port or None,
            ssl=self._ssl_context,
        )
        if self._server.sockets:
            self.port = int(self._server.sockets[0].getsockname()[1])


def raise_fd_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (Linux caps what it
    accepts at fs.nr_open); returns the soft limit now in force (-1 where unknown)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= target:
        return soft
    for wanted in (target, 1 << 20, 1 << 16):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, target), hard))
            return min(wanted, target)
        except (ValueError, OSError):
            continue
    return soft


def connection_limit(configured: int, fd_limit: int) -> int:
    """The connection limit in force: the configured one, below the file-descriptor limit."""
    if fd_limit <= 0:
        return configured
    return max(1, min(configured, fd_limit - FD_RESERVE))
