"""Direct links between the instances of a relay cluster: the hop of a call to a world that
another instance holds, without Redis in between.

Why a link of our own when Redis is there: a call that hopped through Redis pub/sub (published
by the caller's instance, read by the holder's pub/sub reader, its reply published back) cost
~0.5 ms of CPU over the two relays and Redis, against ~0.13 ms for a whole call on one relay
(bench/RESULTS.md, "Issue 15: --workers 2"): most of it in redis-py's command and pub/sub
machinery, which a length-prefixed message on a socket we keep open does not need. Redis keeps
everything else: which instance holds which world (the directory's entries, which carry each
holder's link address), the heartbeats that say an instance is dead, and the pub/sub channels,
still used when a link cannot be opened (`RedisDirectory` falls back to them).

- Each instance listens on one TCP port (`listen`), on the host its HTTP server binds, and on
  a Unix socket in a private temporary directory, and advertises `<secret>@<host>:<port>
  <machine> <socket path>` (`LinkAddress`) in the directory entries of its worlds. The secret is
  random per instance: only who can read the cluster's Redis can send calls to its worlds, as
  with the pub/sub channels.
- A caller opens one connection per holder on its first call there (`dial`) and keeps it: to
  the Unix socket when both run on the same machine (same boot id: `vttrelay serve --workers`),
  else (or when that fails) over TCP. A message over a Unix socket costs the two processes about
  a third of one over loopback TCP (4.9 against 13.6 us for a send and its receive, measured
  here). Its first message is the holder's secret, and the holder closes a connection whose
  first message is not it, or that has not sent it within `AUTH_TIMEOUT` seconds.
- Connections to the link port are counted (`Doorman`): at most `limit` open, the oldest one
  still without its secret closed to make room for a new one; once the relay's HTTP site serves,
  each also counts against its `--max-connections` (`listener.ConnectionGate.hold`), so idle
  sockets on the link port cannot use up the process's file descriptors (issue 20 item 6).
- `Link` is one such connection, on either end: messages both ways, each a 4-byte big-endian
  length and then the message (the same bytes a pub/sub message carries: `encode(head,
  payload)` of the directory). The holder answers on the link the request came on; when a link
  is lost, the caller fails the calls waiting on it (`on_lost`). The messages sent in one
  event-loop iteration leave in one write (`relay.link.frame_batch.WriteBatch`, as for world
  sockets): under load several calls hop in one iteration, and each write is a system call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import secrets
import shutil
import socket
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, cast
from urllib.parse import urlsplit

from vttrelay.relay.link.frame_batch import WriteBatch

log = logging.getLogger("vttrelay.relay.link")

_LENGTH: Final = struct.Struct(">I")
SECRET_BYTES: Final = 16
MAX_FIRST_MESSAGE: Final = 256  # bytes a connection may send before its secret is checked
CONNECT_TIMEOUT: Final = 2.0  # seconds to open a link before the call goes through Redis
AUTH_TIMEOUT: Final = 5.0  # seconds an accepted connection has to send the secret

OnMessage = Callable[["Link", bytes], None]
OnLost = Callable[["Link"], None]


def machine_id() -> str:
    """This machine's boot id (Linux), or its host name: instances with the same one may reach
    each other's Unix sockets."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return socket.gethostname()


@dataclass(frozen=True)
class LinkAddress:
    """Where an instance's link listens, and the secret a connection to it opens with."""

    secret: str
    host: str
    port: int
    machine: str = ""  # where the Unix socket is (machine_id()), "" without one
    path: str = ""  # the Unix socket

    def __str__(self) -> str:
        local = f" {self.machine} {self.path}" if self.machine and self.path else ""
        return f"{self.secret}@{self.host}:{self.port}{local}"

    @classmethod
    def parse(cls, text: str) -> LinkAddress | None:
        tcp, _, local = text.partition(" ")
        secret, _, hostport = tcp.partition("@")
        host, _, port = hostport.rpartition(":")
        if not secret or not host or not port.isdigit():
            return None
        machine, _, path = local.partition(" ")
        return cls(secret, host, int(port), machine if path else "", path if machine else "")


class Admission(Protocol):
    """What counts connections against the relay's connection limit (`ConnectionGate`)."""

    def hold(self) -> bool: ...

    def let_go(self) -> None: ...


class Doorman:
    """Counts the connections a `Listener` accepted (see the module docstring): at most `limit`
    open, each given `auth_timeout` seconds to send the secret; `gate` (set once the HTTP site
    serves) counts them against the relay's connection limit too."""

    def __init__(self, limit: int, auth_timeout: float = AUTH_TIMEOUT) -> None:
        self.limit = limit
        self.auth_timeout = auth_timeout
        self.gate: Admission | None = None
        self.open: dict[Link, Admission | None] = {}  # each with the gate that holds it
        self.waiting: dict[Link, asyncio.TimerHandle] = {}  # no secret yet, oldest first
        self.refused = 0
        self.timeouts = 0

    def admit(self, link: Link) -> bool:
        """Count a new connection; False: no room (it is to be closed at once)."""
        if len(self.open) >= self.limit and not self._evict_oldest_waiting():
            return self._refuse()
        gate = self.gate
        if gate is not None and not gate.hold():
            return self._refuse()
        self.open[link] = gate
        loop = asyncio.get_running_loop()
        self.waiting[link] = loop.call_later(self.auth_timeout, self._late, link)
        return True

    def _refuse(self) -> bool:
        if self.refused == 0:
            log.warning("link port: no room for a new connection, refusing new ones")
        self.refused += 1
        return False

    def _evict_oldest_waiting(self) -> bool:
        for link in self.waiting:
            self.waiting.pop(link).cancel()
            link.abort()
            self.released(link)
            return True
        return False

    def _late(self, link: Link) -> None:
        if self.waiting.pop(link, None) is not None:
            self.timeouts += 1
            log.debug("link connection closed: no secret in %.1f s", self.auth_timeout)
            link.abort()

    def authenticated(self, link: Link) -> None:
        timer = self.waiting.pop(link, None)
        if timer is not None:
            timer.cancel()

    def released(self, link: Link) -> None:
        """The connection is gone (or going): uncount it, once."""
        self.authenticated(link)
        if link in self.open:
            gate = self.open.pop(link)
            if gate is not None:
                gate.let_go()


class Link(WriteBatch, asyncio.Protocol):
    """One connection between two instances (see the module docstring). `expect` is the secret
    the first message must be (the accepting end, which `doorman` counts), `None` on the
    connecting end. What it sends leaves once per loop iteration (`WriteBatch`)."""

    def __init__(
        self,
        on_message: OnMessage,
        on_lost: OnLost,
        expect: bytes | None,
        doorman: Doorman | None = None,
    ) -> None:
        super().__init__(None)
        self.on_message = on_message
        self.on_lost = on_lost
        self._expect = expect
        self._doorman = doorman
        self._buffer = b""
        self.closed = False
        self.address = ""  # the connecting end's: the address it dialled

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        if self._doorman is not None and not self._doorman.admit(self):
            self.abort()

    def writable(self) -> bool:
        return self.transport is not None and not self.closed

    def send(self, message: bytes) -> bool:
        """Queue one message, written at the end of this loop iteration with the others queued
        meanwhile; False when the link is closed (it was not sent)."""
        if not self.writable():
            return False
        self.queue(_LENGTH.pack(len(message)), message)
        return True

    def data_received(self, data: bytes) -> None:
        if self._buffer:
            data = self._buffer + data
        offset, end = 0, len(data)
        while end - offset >= 4 and not self.closed:
            (size,) = _LENGTH.unpack_from(data, offset)
            if self._expect is not None and size > MAX_FIRST_MESSAGE:
                self.close()
                return
            if end - offset - 4 < size:
                break
            message = data[offset + 4 : offset + 4 + size]
            offset += 4 + size
            if self._expect is not None:
                if not hmac.compare_digest(message, self._expect):
                    log.warning("link connection with a wrong secret closed")
                    self.close()
                    return
                self._expect = None
                if self._doorman is not None:
                    self._doorman.authenticated(self)
                continue
            self.on_message(self, message)
        self._buffer = data[offset:]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        if self._doorman is not None:
            self._doorman.released(self)
        self.on_lost(self)

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.close()

    def abort(self) -> None:
        """Drop the connection now (unread data and all): for a peer that is not a relay."""
        if self.transport is not None and not self.closed:
            self.closed = True
            self.transport.abort()


class Listener:
    """Where this instance accepts links: a TCP port and a Unix socket (see the module
    docstring). `address` is what it advertises."""

    def __init__(
        self, servers: list[asyncio.Server], address: LinkAddress, tmp: str, doorman: Doorman
    ) -> None:
        self.servers = servers
        self.address = address
        self._tmp = tmp
        self.doorman = doorman

    async def close(self) -> None:
        for server in self.servers:
            server.close()
        for server in self.servers:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await server.wait_closed()
        shutil.rmtree(self._tmp, ignore_errors=True)


async def listen(
    bind_host: str,
    advertise_host: str,
    on_message: OnMessage,
    on_lost: OnLost,
    limit: int = 10_000,
    auth_timeout: float = AUTH_TIMEOUT,
) -> Listener:
    """Listen for links on a free port of `bind_host` and on a Unix socket; at most `limit`
    connections open, each with `auth_timeout` seconds to send the secret (`Doorman`)."""
    secret = secrets.token_hex(SECRET_BYTES)
    expect = secret.encode()
    loop = asyncio.get_running_loop()
    doorman = Doorman(limit, auth_timeout)

    def protocol() -> Link:
        return Link(on_message, on_lost, expect, doorman)

    tcp = await loop.create_server(protocol, bind_host, 0)
    port = int(tcp.sockets[0].getsockname()[1])
    tmp = tempfile.mkdtemp(prefix="vttrelay-link-")  # mode 0700: this user's only
    path = str(Path(tmp) / "link.sock")
    try:
        unix = await loop.create_unix_server(protocol, path)
    except (OSError, NotImplementedError) as exc:  # no Unix sockets here: TCP only
        log.info("no Unix socket for links (%r): TCP only", exc)
        return Listener([tcp], LinkAddress(secret, advertise_host, port), tmp, doorman)
    address = LinkAddress(secret, advertise_host, port, machine_id(), path)
    return Listener([tcp, unix], address, tmp, doorman)


async def dial(address: LinkAddress, on_message: OnMessage, on_lost: OnLost) -> Link:
    """Open a link to `address`: its Unix socket if it is on this machine, else (or when that
    fails) its TCP port (raises OSError or TimeoutError when neither can be opened)."""
    loop = asyncio.get_running_loop()

    def protocol() -> Link:
        return Link(on_message, on_lost, None)

    link: Link | None = None
    if address.path and address.machine == machine_id():
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(CONNECT_TIMEOUT):
                _, link = await loop.create_unix_connection(protocol, address.path)
    if link is None:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            _, link = await loop.create_connection(protocol, address.host, address.port)
    assert link is not None
    link.send(address.secret.encode())
    return link


def link_hosts(http_host: str, redis_url: str) -> tuple[str, str]:
    """(the host the link binds, the host it advertises) for a relay whose HTTP server binds
    `http_host`: the same address; for every interface (`0.0.0.0`, `::`, empty), the address
    this machine reaches Redis from, which the other instances (that reach Redis too) can most
    likely reach."""
    if http_host not in ("", "0.0.0.0", "::"):
        try:
            ipaddress.ip_address(http_host)
            return http_host, http_host
        except ValueError:  # a name: its first address
            found = socket.getaddrinfo(http_host, None, type=socket.SOCK_STREAM)
            address = str(found[0][4][0])
            return address, address
    return http_host or "0.0.0.0", _address_towards(redis_url)


def _address_towards(url: str) -> str:
    """The local address of the route to the Redis at `url` (no packet is sent)."""
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme == "unix" or not host:
        return "127.0.0.1"
    try:
        found = socket.getaddrinfo(host, parts.port or 6379, type=socket.SOCK_DGRAM)
        family, _, _, _, target = found[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(target)
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
