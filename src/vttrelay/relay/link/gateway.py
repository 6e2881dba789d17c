"""Connected worlds: the `/relay` WebSocket, its connections and their pending requests.

Which worlds are live, here or on another instance, is the `backends.WorldDirectory`'s (the
gateway claims an id there and releases it when the socket ends).

A world connects to `/relay?id=<clientId>&<metadata>`, sends `{"type":"auth","token":...}` first,
and is registered under the account its connection token belongs to (wire-protocol §2). A token
connects only as the client id it was issued for, else 1008 (DESIGN §6 item 8). The
duplicate-id check happens before `auth-success` (DESIGN §6 item 3). Requests to a world are
correlated by `requestId` only; any frame whose `requestId` is pending resolves it, and a world
that goes away fails its pending requests at once (DESIGN §6 item 4).

Listeners (the event streams) are told about connects, disconnects and event frames. When a
world is replaced by a reconnect from the same host, the old connection is closed with 1000 and
`world_disconnected` is NOT called for it: the new connection's `world_connected` follows, so
streams of that client id live on (wire-protocol §2.5).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from aiohttp import WSMsgType, web

from vttrelay import protocol
from vttrelay.protocol import Close
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.link.frame_batch import FrameBatch, SocketClosed
from vttrelay.relay.preauth import PreAuthBudget
from vttrelay.relay.store import KnownClient, TokenRecord

if TYPE_CHECKING:
    from vttrelay.relay.backends.base import Store, WorldDirectory

log = logging.getLogger("vttrelay.relay")

MISSING_ID = "Missing client ID"
TOKEN_IN_URL = "Token URL parameter is not supported. Send auth as the first WebSocket message."
TOKEN_NOT_FOR_ID = "Connection token not issued for this client ID"
_PONG_FRAME = orjson.dumps({"type": protocol.PONG})
_AUTH_SUCCESS = orjson.dumps({"type": protocol.AUTH_SUCCESS})


class Reply:
    """A world's answer to a request: the frame's exact bytes, whether it is an error (a
    top-level string `error`: the reply becomes a 400) and the parsed frame, parsed on first
    use when the fast path (`peek_reply`) resolved it without parsing."""

    __slots__ = ("_frame", "is_error", "raw")

    def __init__(
        self, raw: bytes, frame: dict[str, Any] | None = None, is_error: bool | None = None
    ) -> None:
        self.raw = raw
        self._frame = frame
        if is_error is None:
            is_error = isinstance(self.frame.get("error"), str)
        self.is_error = is_error

    @property
    def frame(self) -> dict[str, Any]:
        if self._frame is None:
            try:
                parsed = orjson.loads(self.raw)
            except orjson.JSONDecodeError:
                parsed = None
            self._frame = parsed if isinstance(parsed, dict) else {}
        return self._frame


# Replies at least this long skip the parse when they can (bench.micro: orjson parses a 400-byte
# reply in ~1.4 us, less than peek_reply's checks; a 2.6 KB one in ~9 us, twice their cost).
FAST_PATH_MIN_BYTES = 1024
_HEAD = b'{"type":"'
_REQUEST_ID = b',"requestId":"'


def peek_reply(raw: bytes) -> tuple[str, bool] | None:
    """(requestId, may be an error) read without parsing, or None: parse the frame instead.

    Only for frames that begin `{"type":"<type>","requestId":"<id>"` with no escape in either
    string (the module's and our world's key order; anchored at the start, so both keys are
    top-level). The second value is False only when neither `"error"` nor a `\\u` escape (which
    could spell the key) occurs anywhere in the frame: then the frame has no top-level `error`
    and is not a 400. True means: parse it to decide. A second `"requestId"` (the parse would
    take the last) gives None. The rest of the frame is not validated as JSON.
    """
    if not raw.startswith(_HEAD):
        return None
    type_end = raw.find(b'"', 9)
    if type_end < 0 or raw.find(b"\\", 9, type_end) >= 0:
        return None
    if not raw.startswith(_REQUEST_ID, type_end + 1):
        return None
    id_start = type_end + 1 + len(_REQUEST_ID)
    id_end = raw.find(b'"', id_start)
    if id_end < 0 or raw.find(b"\\", id_start, id_end) >= 0 or not raw.rstrip().endswith(b"}"):
        return None
    try:
        request_id = raw[id_start:id_end].decode()
    except UnicodeDecodeError:
        return None
    # a backslash (memchr, fast) before the slower two-byte search for \u
    if b'"error"' in raw or (raw.find(b"\\") >= 0 and b"\\u" in raw):
        return request_id, True  # parsed in full, which also settles a second requestId
    if raw.find(b'"requestId"', id_end) >= 0:  # a second one (the last would win): parse
        return None
    return request_id, False


class WorldGone(Exception):
    """The world disconnected before replying."""


class WorldListener(Protocol):
    """Told about worlds coming and going and about their event frames."""

    def world_connected(self, world: WorldConnection) -> None: ...

    def world_disconnected(self, world: WorldConnection) -> None: ...

    def world_event(self, world: WorldConnection, frame: dict[str, Any]) -> None: ...


def now_ms() -> int:
    return int(time.time() * 1000)


class WorldConnection:
    """One authenticated world socket."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        client_id: str,
        account: str,
        metadata: dict[str, Any],
        token: TokenRecord,
        peer_host: str,
        transport: asyncio.Transport | None,
    ) -> None:
        self.ws = ws
        self.frames = FrameBatch(ws, transport)  # frames out, one write per loop iteration
        self.client_id = client_id
        self.account = account
        self.metadata = metadata
        self.token_id = token.id
        self.token_name = token.name
        self.peer_host = peer_host
        self.system_id: str = str(metadata.get("systemId") or "")
        self.users: list[dict[str, Any]] = []
        self.pending: dict[str, asyncio.Future[Reply]] = {}
        self.closed = False
        self.last_pong = time.monotonic()
        # connected to a relay before (this process or an earlier one): it may still be sending
        # channels a relay switched on before a restart (streams tell it every count, 0 included)
        self.returning = False
        self.instance_id: str | None = None  # the holding instance: None, this one
        # requests forwarded, counted per wall-clock minute (the dashboard's requests/minute)
        self._minute = 0
        self._this_minute = 0
        self._last_minute = 0
        self.last_request: float | None = None  # when a request was last forwarded (epoch s)

    def __repr__(self) -> str:
        return f"<WorldConnection {self.client_id} account={self.account}>"

    async def send(self, frame: dict[str, Any]) -> None:
        """Send one JSON text frame. Raises WorldGone if the socket is closed."""
        self.queue_frame(orjson.dumps(frame))

    def queue_frame(self, data: bytes) -> None:
        """Queue one text frame for this loop iteration's write (`frame_batch.py`). Raises
        WorldGone if the socket is closed or closing."""
        if self.closed:
            raise WorldGone()
        try:
            self.frames.send(data)
        except SocketClosed:
            raise WorldGone() from None

    async def request(self, frame: dict[str, Any], timeout: float) -> Reply:
        """Send a request frame and return the frame that answers it (same `requestId`).

        Raises `asyncio.TimeoutError` after `timeout` seconds and `WorldGone` if the world
        disconnects first.
        """
        request_id = frame["requestId"]
        self._count_request(time.time())
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Reply] = loop.create_future()
        self.pending[request_id] = future
        timer = loop.call_later(timeout, expire_reply, future)
        try:
            self.queue_frame(orjson.dumps(frame))
            return await future
        finally:
            timer.cancel()
            if self.pending.get(request_id) is future:
                del self.pending[request_id]

    def _count_request(self, now: float) -> None:
        self.last_request = now
        minute = int(now // 60)
        if minute != self._minute:
            self._last_minute = self._this_minute if minute == self._minute + 1 else 0
            self._this_minute = 0
            self._minute = minute
        self._this_minute += 1

    def requests_per_minute(self, now: float | None = None) -> int:
        """Requests forwarded over the last 60 seconds, estimated from the counts of this
        wall-clock minute and the one before (weighted by how much of it the window covers)."""
        now = time.time() if now is None else now
        minute = int(now // 60)
        if minute == self._minute:
            current, previous = self._this_minute, self._last_minute
        elif minute == self._minute + 1:
            current, previous = 0, self._this_minute
        else:
            return 0
        return round(current + previous * (1 - (now % 60) / 60))

    def resolve(self, request_id: str, raw: bytes, frame: dict[str, Any]) -> bool:
        future = self.pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(Reply(raw, frame))
        return True

    def resolve_unparsed(self, raw: bytes) -> bool:
        """Resolve a pending request from a reply's bytes alone (`peek_reply`'s fast path);
        False when the frame must be parsed (not the usual head, maybe an error, not pending,
        or small: below FAST_PATH_MIN_BYTES orjson parses faster than the checks run)."""
        if len(raw) < FAST_PATH_MIN_BYTES:
            return False
        head = peek_reply(raw)
        if head is None or head[1]:
            return False
        future = self.pending.get(head[0])
        if future is None or future.done():
            return False
        future.set_result(Reply(raw, None, False))
        return True

    def fail_pending(self) -> None:
        for future in self.pending.values():
            if not future.done():
                future.set_exception(WorldGone())
        self.pending.clear()

    async def close(self, code: int, reason: str) -> None:
        """Close the socket with a code from protocol.Close; pending requests fail at once."""
        self.closed = True
        self.fail_pending()
        with contextlib.suppress(Exception):
            await self.ws.close(code=code, message=reason.encode())

    def touch(self) -> None:
        self.metadata["lastSeen"] = now_ms()


def expire_reply(future: asyncio.Future[Reply]) -> None:
    """A request's timer ran out: its awaiting caller gets `TimeoutError` (unless answered)."""
    if not future.done():
        future.set_exception(TimeoutError())


def _ip_allowed(allow: str, host: str) -> bool:
    if not allow.strip():
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in allow.split(","):
        entry = entry.strip()
        if not entry:
            continue
        try:
            if addr in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def _public_url(origin: str | None) -> str | None:
    """The Origin header, if it is a bare http(s) origin of at most 512 characters."""
    if not origin or len(origin) > 512:
        return None
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        return None
    return origin


def _peer(request: web.Request) -> tuple[str, str]:
    """(host, "host:port") of the TCP peer (never X-Forwarded-For)."""
    peer = request.transport.get_extra_info("peername") if request.transport else None
    if isinstance(peer, tuple) and len(peer) >= 2:
        host = str(peer[0])
        shown = f"[{host}]:{peer[1]}" if ":" in host else f"{host}:{peer[1]}"
        return host, shown
    host = request.remote or ""
    return host, host


def is_world_upgrade(request: web.Request) -> bool:
    """Does this request ask for a WebSocket upgrade (for `GET /`)?"""
    return request.headers.get("Upgrade", "").lower() == "websocket"


class WorldGateway:
    """Serves `/relay`: handshake, auth, duplicates, keepalive and the frame loop."""

    def __init__(self, config: RelayConfig, store: Store, registry: WorldDirectory) -> None:
        self.config = config
        self.store = store
        self.registry = registry

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        client_id = query.get("id", "")
        if not client_id:
            return web.Response(status=400, text=MISSING_ID)
        if "token" in query:
            return web.Response(status=400, text=TOKEN_IN_URL)
        # ids checked at the door (DESIGN §6 item 11): from here on they are safe in a path, a
        # page and a log line
        if not protocol.valid_id(client_id):
            return web.Response(status=400, text=protocol.INVALID_CLIENT_ID)
        if query.get("worldId") and not protocol.valid_id(query["worldId"]):
            return web.Response(status=400, text=protocol.INVALID_WORLD_ID)
        ws = web.WebSocketResponse(
            autoping=False,
            max_msg_size=self.config.max_frame_bytes,
            timeout=self.config.close_timeout,
            compress=False,
            decode_text=False,  # text frames arrive as bytes: replies pass through untouched
        )
        await ws.prepare(request)
        budget = PreAuthBudget.install(request, self.config.preauth_bytes, "world socket")
        world = await self._authenticate(request, ws, client_id, budget)
        if world is None:
            return ws
        try:
            await self._serve(world)
        finally:
            world.closed = True
            world.fail_pending()
            if self.registry.release(world):
                log.info("world disconnected: %s (account %s)", client_id, world.account)
                self.registry.notify("world_disconnected", world)
            if not ws.closed:
                with contextlib.suppress(Exception):
                    await ws.close(code=Close.GOING_AWAY, message=b"Server shutting down")
        return ws

    async def _first_frame(self, ws: web.WebSocketResponse) -> Any:
        deadline = time.monotonic() + self.config.auth_timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError()
            msg = await ws.receive(timeout=remaining)
            if msg.type == WSMsgType.PING:
                await ws.pong(msg.data)
                continue
            if msg.type == WSMsgType.PONG:
                continue
            return msg

    async def _authenticate(
        self,
        request: web.Request,
        ws: web.WebSocketResponse,
        client_id: str,
        budget: PreAuthBudget | None,
    ) -> WorldConnection | None:
        async def refuse(code: int, reason: str) -> None:
            log.info("world %s refused: %d %s", client_id, code, reason)
            with contextlib.suppress(Exception):
                await ws.close(code=code, message=reason.encode())

        try:
            msg = await self._first_frame(ws)
        except (TimeoutError, ConnectionError, RuntimeError):
            await refuse(Close.AUTH_PROTOCOL, "Authentication timeout")
            return None
        if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
            await refuse(Close.AUTH_PROTOCOL, "Authentication timeout")
            return None
        token = _auth_token(msg)
        if token is None:
            await refuse(Close.AUTH_PROTOCOL, "Invalid auth message")
            return None
        try:
            record = await asyncio.to_thread(self.store.token_by_secret, token)
        except Exception:
            # Transient (e.g. the database is locked): never 1008/4002, the module would
            # forget its token. 1011 makes it reconnect with backoff.
            log.exception("world %s: token lookup failed", client_id)
            await refuse(Close.INTERNAL_ERROR, "Server error, try again")
            return None
        if record is None:
            await refuse(Close.AUTH_FAILED, "Authentication failed")
            return None
        if not _token_fits(record, client_id, self.config.reserved_client_ids):
            await refuse(Close.AUTH_FAILED, TOKEN_NOT_FOR_ID)
            return None
        host, shown = _peer(request)
        if not _ip_allowed(record.ip_allow, host):
            await refuse(Close.AUTH_PROTOCOL, "IP address not allowed")
            return None
        metadata: dict[str, Any] = {
            k: query_value
            for k in protocol.WORLD_QUERY_KEYS
            if k != "id" and (query_value := request.query.get(k))
        }
        metadata["ipAddress"] = shown
        public_url = _public_url(request.headers.get("Origin"))
        if public_url:
            metadata["publicUrl"] = public_url
        metadata["connectedSince"] = metadata["lastSeen"] = now_ms()
        world = WorldConnection(
            ws, client_id, record.account, metadata, record, host, request.transport
        )
        # Whether it connected before is read now: between the claim and `world_connected` there
        # must be no await but auth-success, or a subscriber arriving meanwhile has its count told
        # to the world and then again by `world_connected`.
        try:
            known = await asyncio.to_thread(self.store.known_client, client_id)
            world.returning = _connected_before(known)
        except Exception:
            log.exception("could not look up world %s", client_id)
            world.returning = True  # unknown: assume it may be sending
        # The duplicate-id rule, cluster-wide (backends.WorldDirectory.claim): the same host and
        # account replace the holder; anyone else is refused before auth-success.
        try:
            claimed = await self.registry.claim(world)
        except Exception:
            log.exception("world %s: claim failed", client_id)
            await refuse(Close.INTERNAL_ERROR, "Server error, try again")
            return None
        if not claimed:
            await refuse(Close.DUPLICATE, "Client ID already connected")
            return None
        if budget is not None:
            budget.release()  # from now on frames up to max_frame_bytes (replies can be large)
        try:
            await ws.send_frame(_AUTH_SUCCESS, WSMsgType.TEXT)
        except (ConnectionError, RuntimeError):
            return world  # the loop will see the closed socket and clean up
        log.info(
            "world connected: %s (account %s, system %s, from %s)",
            client_id,
            record.account,
            world.system_id or "?",
            shown,
        )
        self.registry.notify("world_connected", world)
        try:
            await asyncio.to_thread(
                self.store.remember_client,
                client_id,
                record.account,
                _stored_metadata(metadata),
                record.name,
            )
        except Exception:
            log.exception("could not record world %s", client_id)
        return world

    async def _serve(self, world: WorldConnection) -> None:
        ws = world.ws
        keepalive = asyncio.ensure_future(self._keepalive(world))
        try:
            while True:
                msg = await ws.receive()
                kind = msg.type
                if kind == WSMsgType.TEXT:
                    self._on_text(world, msg.data)
                elif kind == WSMsgType.PONG:
                    world.last_pong = time.monotonic()
                elif kind == WSMsgType.PING:
                    with contextlib.suppress(Exception):
                        await ws.pong(msg.data)
                elif kind == WSMsgType.BINARY:
                    log.debug("world %s sent a binary frame: dropped", world.client_id)
                else:  # CLOSE, CLOSING, CLOSED, ERROR
                    break
        finally:
            keepalive.cancel()

    def _on_text(self, world: WorldConnection, raw: bytes) -> None:
        if world.resolve_unparsed(raw):
            world.touch()
            return
        try:
            frame = orjson.loads(raw)
        except orjson.JSONDecodeError:
            log.debug("world %s sent a frame that is not JSON: dropped", world.client_id)
            return
        if not isinstance(frame, dict):
            return
        world.touch()
        request_id = frame.get("requestId")
        if isinstance(request_id, str) and world.resolve(request_id, raw, frame):
            return
        kind = frame.get("type")
        if kind == protocol.PING:
            send_quietly(world, _PONG_FRAME)
        elif kind == protocol.PLAYER_LIST:
            users = frame.get("users")
            world.users = users if isinstance(users, list) else []
            self.registry.updated(world)
        elif kind in protocol.EVENT_FRAME_CHANNEL:
            self.registry.notify("world_event", world, frame)
        else:
            log.debug("world %s sent an unhandled frame %r: dropped", world.client_id, kind)

    async def _keepalive(self, world: WorldConnection) -> None:
        """Ping every `ping_interval`; drop the world `pong_timeout` after its last pong."""
        interval = self.config.ping_interval
        limit = self.config.effective_pong_timeout
        world.last_pong = time.monotonic()
        next_ping = world.last_pong + interval
        while True:
            now = time.monotonic()
            deadline = world.last_pong + limit
            if now >= deadline:
                log.info("world %s: no pong for %.1f s, dropping it", world.client_id, limit)
                world.closed = True
                world.fail_pending()
                with contextlib.suppress(Exception):
                    await world.ws.close(code=Close.GOING_AWAY, message=b"Keepalive timeout")
                return
            if now >= next_ping:
                try:
                    await world.ws.ping(b"keepalive")
                except Exception:
                    return
                next_ping = now + interval
            await asyncio.sleep(max(0.0, min(next_ping, deadline) - time.monotonic()) + 0.001)


def send_quietly(world: WorldConnection, data: bytes) -> None:
    """Queue a frame nobody awaits an answer to (a pong, a frame relayed from another
    instance); a world that has gone just drops it."""
    with contextlib.suppress(WorldGone):
        world.queue_frame(data)


def _token_fits(record: TokenRecord, client_id: str, reserved: Mapping[str, str | None]) -> bool:
    """May this token connect as `client_id`? Only as the id it was issued for (the module always
    sends that id; DESIGN §6 item 8), and a reserved id only with the one token it is reserved
    for (`RelayConfig.reserved_client_ids`: the embedded world's)."""
    if record.client_id != client_id:
        return False
    return client_id not in reserved or reserved[client_id] == record.id


def _auth_token(msg: Any) -> str | None:
    if msg.type != WSMsgType.TEXT:
        return None
    try:
        frame = orjson.loads(msg.data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(frame, dict) or frame.get("type") != protocol.AUTH:
        return None
    token = frame.get("token")
    return token if isinstance(token, str) and token else None


def _connected_before(known: KnownClient | None) -> bool:
    """Did this world ever connect? Every connection records its peer address (`ipAddress`,
    `remember_client`); pairing and minting a token record a world without one."""
    return known is not None and "ipAddress" in known.metadata


def _stored_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k not in ("connectedSince", "lastSeen")}
