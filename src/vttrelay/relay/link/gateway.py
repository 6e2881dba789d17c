"""The aiohttp adapter of `/relay`: the socket's handshake, frame loop and keepalive.

`WorldGateway.handle` upgrades the request, runs the handshake's steps (`handshake.py`: the auth
frame, the token, the client id, the peer's address) around its two awaits (the token look-up in
a thread, the directory's claim), and registers the world under the account its token belongs to
(wire-protocol §2). The duplicate-id check happens before `auth-success` (DESIGN §6 item 3). Then
it reads frames until the socket ends and hands each to the world's session (`session.py`),
doing what the session says: send the pong, tell the directory the world's users changed, pass
an event to the listeners. A world that goes away fails its pending requests at once (DESIGN §6
item 4).

Which worlds are live, here or on another instance, is the `backends.WorldDirectory`'s (the
gateway claims an id there and releases it when the socket ends). Listeners (the event streams)
are told about connects, disconnects and event frames. When a world is replaced by a reconnect
from the same host, the old connection is closed with 1000 and `world_disconnected` is NOT called
for it: the new connection's `world_connected` follows, so streams of that client id live on
(wire-protocol §2.5).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
from aiohttp import WSMessage, WSMsgType, web

from vttrelay import protocol
from vttrelay.protocol import KNOWN_CLIENTS_FAILED, Close
from vttrelay.relay.accounts.preauth import PreAuthBudget
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.link import handshake
from vttrelay.relay.link.connection import WorldConnection, send_quietly
from vttrelay.relay.link.handshake import MISSING_ID, TOKEN_IN_URL, Refusal
from vttrelay.relay.link.session import (
    Beat,
    EventReceived,
    Keepalive,
    KnownClientsAsked,
    ModuleNotified,
    Received,
    RemoteAsked,
    now_ms,
)

if TYPE_CHECKING:
    from vttrelay.relay.backends.ports import Store, WorldDirectory

log = logging.getLogger("vttrelay.relay")

_ENDED = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR)


class Peer(NamedTuple):
    """Where a world connects from: `host` is `request.remote` (behind a trusted proxy the
    client's address the proxy names, `forwarded.py`; otherwise the TCP peer), for the token's
    IP allow-list and the duplicate-host rule; `shown` is the metadata's `ipAddress` (the TCP
    peer as `host:port`, or the forwarded address); `via` the proxy's `host:port` ("" direct),
    for the connection log."""

    host: str
    shown: str
    via: str


def _peer(request: web.Request) -> Peer:
    host = request.remote or ""
    peer = request.transport.get_extra_info("peername") if request.transport else None
    if not (isinstance(peer, tuple) and len(peer) >= 2):
        return Peer(host, host, "")
    tcp_host = str(peer[0])
    tcp = f"[{tcp_host}]:{peer[1]}" if ":" in tcp_host else f"{tcp_host}:{peer[1]}"
    if not host or host == tcp_host:
        return Peer(tcp_host, tcp, "")
    return Peer(host, host, tcp)


def is_world_upgrade(request: web.Request) -> bool:
    """Does this request ask for a WebSocket upgrade (for `GET /`)?"""
    return request.headers.get("Upgrade", "").lower() == "websocket"


# (client id, account, token id, request id) -> the `known-clients-result` frame
KnownClientsAnswer = Callable[[str, str, str, str], Awaitable[dict[str, Any]]]
# (the asking world, its remote-request frame) -> the `remote-response` frame
RemoteAnswer = Callable[[WorldConnection, dict[str, Any]], Awaitable[dict[str, Any]]]
MAX_REMOTE_IN_FLIGHT = 20  # a world's remote-requests answered at once


class WorldGateway:
    """Serves `/relay`: handshake, auth, duplicates, keepalive and the frame loop."""

    def __init__(self, config: RelayConfig, store: Store, registry: WorldDirectory) -> None:
        self.config = config
        self.store = store
        self.registry = registry
        # told each world's users when it sends a player-list (the account services keep them)
        self.users_changed: Callable[[str, str, list[Any]], None] | None = None
        # answers a world's get-known-clients (the account services: accounts/world_list.py)
        self.known_clients: KnownClientsAnswer | None = None
        self._asking: dict[str, asyncio.Task[None]] = {}  # one question per world at a time
        # answers a world's remote-request (the cross-world tunnel: accounts/tunnel.py)
        self.remote_request: RemoteAnswer | None = None
        self._remote: dict[str, set[asyncio.Task[None]]] = {}  # per world: calls in flight
        # logs a world's module-notify: (account, client id, world title, frame) (the account
        # services: accounts/module_events.py)
        self.module_notify: Callable[[str, str, str, dict[str, Any]], None] | None = None

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

    async def _first_frame(self, ws: web.WebSocketResponse) -> WSMessage:
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
        async def refuse(refusal: Refusal) -> None:
            log.info("world %s refused: %d %s", client_id, refusal.code, refusal.reason)
            with contextlib.suppress(Exception):
                await ws.close(code=refusal.code, message=refusal.reason.encode())

        try:
            msg = await self._first_frame(ws)
        except (TimeoutError, ConnectionError, RuntimeError):
            await refuse(handshake.AUTH_TIMEOUT)
            return None
        if msg.type in _ENDED:
            await refuse(handshake.AUTH_TIMEOUT)
            return None
        token = handshake.auth_token(msg.data) if msg.type == WSMsgType.TEXT else None
        if token is None:
            await refuse(handshake.INVALID_AUTH)
            return None
        try:
            record = await asyncio.to_thread(self.store.token_by_secret, token)
        except Exception:
            # Transient (e.g. the database is locked): never 1008/4002, the module would
            # forget its token. 1011 makes it reconnect with backoff.
            log.exception("world %s: token lookup failed", client_id)
            await refuse(handshake.TRY_AGAIN)
            return None
        host, shown, via = _peer(request)
        refusal = handshake.check_token(record, client_id, self.config.reserved_client_ids, host)
        if refusal is not None or record is None:
            await refuse(refusal or handshake.AUTH_FAILED)
            return None
        metadata = handshake.world_metadata(
            request.query, shown, request.headers.get("Origin"), now_ms()
        )
        world = WorldConnection(
            ws, client_id, record.account, metadata, record, host, request.transport
        )
        # Whether it connected before is read now: between the claim and `world_connected` there
        # must be no await but auth-success, or a subscriber arriving meanwhile has its count told
        # to the world and then again by `world_connected`.
        try:
            known = await asyncio.to_thread(self.store.known_client, client_id)
            world.returning = handshake.connected_before(known)
        except Exception:
            log.exception("could not look up world %s", client_id)
            world.returning = True  # unknown: assume it may be sending
        # The duplicate-id rule, cluster-wide (backends.WorldDirectory.claim): the same host and
        # account replace the holder; anyone else is refused before auth-success.
        try:
            claimed = await self.registry.claim(world)
        except Exception:
            log.exception("world %s: claim failed", client_id)
            await refuse(handshake.TRY_AGAIN)
            return None
        if not claimed:
            await refuse(handshake.DUPLICATE)
            return None
        if budget is not None:
            budget.release()  # from now on frames up to max_frame_bytes (replies can be large)
        try:
            await ws.send_frame(handshake.AUTH_SUCCESS, WSMsgType.TEXT)
        except (ConnectionError, RuntimeError):
            return world  # the loop will see the closed socket and clean up
        log.info(
            "world connected: %s (account %s, system %s, from %s%s)",
            client_id,
            record.account,
            world.system_id or "?",
            shown,
            f" via {via}" if via else "",
        )
        self.registry.notify("world_connected", world)
        try:
            await asyncio.to_thread(
                self.store.remember_client,
                client_id,
                record.account,
                handshake.stored_metadata(metadata),
                record.name,
            )
        except Exception:
            log.exception("could not record world %s", client_id)
        return world

    async def _serve(self, world: WorldConnection) -> None:
        """Read the world's frames until its socket ends; each text frame goes to its session,
        and what the session answers is done here."""
        ws = world.ws
        keepalive = Keepalive(
            self.config.ping_interval, self.config.effective_pong_timeout, time.monotonic()
        )
        pinger = asyncio.ensure_future(self._keepalive(world, keepalive))
        try:
            while True:
                msg = await ws.receive()
                kind = msg.type
                if kind == WSMsgType.TEXT:
                    received = world.receive(msg.data)
                    if received is not None:
                        self._act(world, received)
                elif kind == WSMsgType.PONG:
                    keepalive.pong(time.monotonic())
                elif kind == WSMsgType.PING:
                    with contextlib.suppress(Exception):
                        await ws.pong(msg.data)
                elif kind == WSMsgType.BINARY:
                    log.debug("world %s sent a binary frame: dropped", world.client_id)
                else:  # CLOSE, CLOSING, CLOSED, ERROR
                    break
        finally:
            pinger.cancel()

    def _act(self, world: WorldConnection, received: Received) -> None:
        """Do what the session made of a frame: answer it, or tell the directory."""
        if isinstance(received, bytes):
            send_quietly(world, received)
        elif isinstance(received, EventReceived):
            self.registry.notify("world_event", world, received.frame)
        elif isinstance(received, KnownClientsAsked):
            self._ask_known_clients(world, received.request_id)
        elif isinstance(received, RemoteAsked):
            self._call_remote(world, received.frame)
        elif isinstance(received, ModuleNotified):
            if self.module_notify is not None:
                title = str(world.metadata.get("worldTitle") or "")
                self.module_notify(world.account, world.client_id, title, received.frame)
        else:
            self.registry.updated(world)
            if self.users_changed is not None:
                self.users_changed(world.client_id, world.account, world.users)

    def _ask_known_clients(self, world: WorldConnection, request_id: str) -> None:
        """Answer a world's `get-known-clients` in a task, one at a time per world (a second
        question while one is answered gets an error result at once)."""
        answer = self.known_clients
        if answer is None:
            return
        if world.client_id in self._asking:
            busy = protocol.KNOWN_CLIENTS_BUSY
            send_quietly(world, orjson.dumps(protocol.known_clients_error(request_id, busy)))
            return

        async def reply() -> None:
            try:
                frame = await answer(world.client_id, world.account, world.token_id, request_id)
                send_quietly(world, orjson.dumps(frame))
            except Exception:
                log.exception("world %s: could not list its known clients", world.client_id)
                failed = protocol.known_clients_error(request_id, KNOWN_CLIENTS_FAILED)
                send_quietly(world, orjson.dumps(failed))
            finally:
                del self._asking[world.client_id]

        self._asking[world.client_id] = asyncio.ensure_future(reply())

    def _call_remote(self, world: WorldConnection, frame: dict[str, Any]) -> None:
        """Answer a world's `remote-request` in a task: at most MAX_REMOTE_IN_FLIGHT per world
        (past that it is refused at once, 429)."""
        answer = self.remote_request
        if answer is None:
            return
        running = self._remote.setdefault(world.client_id, set())
        if len(running) >= MAX_REMOTE_IN_FLIGHT:
            request_id = frame.get("requestId")
            busy = {
                "type": protocol.REMOTE_RESPONSE,
                "requestId": request_id if isinstance(request_id, str) else "",
                "success": False,
                "error": "Too many remote requests in flight; try again shortly",
                "status": 429,
            }
            send_quietly(world, orjson.dumps(busy))
            return

        async def reply() -> None:
            try:
                send_quietly(world, orjson.dumps(await answer(world, frame)))
            except Exception:
                log.exception("world %s: remote-request failed", world.client_id)

        task = asyncio.ensure_future(reply())
        running.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            running.discard(finished)
            if not running:
                self._remote.pop(world.client_id, None)

        task.add_done_callback(done)

    async def _keepalive(self, world: WorldConnection, keepalive: Keepalive) -> None:
        """Ping every `ping_interval`; drop the world `pong_timeout` after its last pong."""
        while True:
            beat = keepalive.step(time.monotonic())
            if beat is Beat.DROP:
                log.info(
                    "world %s: no pong for %.1f s, dropping it", world.client_id, keepalive.limit
                )
                world.closed = True
                world.fail_pending()
                with contextlib.suppress(Exception):
                    await world.ws.close(code=Close.GOING_AWAY, message=b"Keepalive timeout")
                return
            if beat is Beat.PING:
                try:
                    await world.ws.ping(b"keepalive")
                except Exception:
                    return
            await asyncio.sleep(max(0.0, keepalive.wake_at - time.monotonic()) + 0.001)
