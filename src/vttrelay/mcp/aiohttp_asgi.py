"""`/mcp` on the relay: the MCP streamable HTTP transport, authenticated by API key.

Which SDK layer, and why an adapter: the `mcp` SDK implements the streamable HTTP transport
(sessions and their ids, a POST answered as JSON or as an SSE stream, the standalone GET stream
for server notifications, DELETE, the idle timeout, the session limit) in
`StreamableHTTPSessionManager`, and that is the lowest layer that implements it: below it there
are only the JSON-RPC dispatcher and in-memory stream pairs, over which we would have to write
the transport again by hand. The manager speaks ASGI (`handle_request(scope, receive, send)`)
and the relay is aiohttp, so `asgi_bridge` runs one aiohttp request as one ASGI `http` call:

- scope: method, path, query, headers (lower-cased bytes), client and server addresses, and
  `user`, an `AuthenticatedUser` for the API key, which the manager uses to bind a session to the
  key that opened it (another key gets 404 for that session id);
- receive: the request body in chunks, then `http.disconnect` once the response has ended or the
  client went away (checked every `DISCONNECT_POLL` seconds: aiohttp has no disconnect event
  for a handler that has read its body, so the relay's SSE streams poll the same way);
- send: `http.response.start` becomes an aiohttp `StreamResponse` with the status and headers,
  each `http.response.body` is written as it comes (so SSE events are not buffered), and the
  last one ends the response; once the client has gone, writes are dropped (as uvicorn does:
  an MCP client closes a POST's SSE stream as soon as it has its answer).

The API key comes in `x-api-key` (as for every relay endpoint) or `Authorization: Bearer <key>`
(what MCP clients send). A missing or bad key is 401 in the relay's error shape before the SDK is
even loaded (`lazy.py`). `/mcp?clientId=ID` names the world a session plays in when the key reaches
several (`worlds`; an id off `protocol.ID_PATTERN` is 400 at the door). The tools then call the
relay through `vttrelay.client` with the caller's key, over loopback to the address the request came
in on, so every rule of the relay (scopes, allowed worlds, forced userId, rate limits, access log)
holds for MCP calls as for any other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from vttrelay.mcp import worlds
from vttrelay.mcp.limits import SessionLimits
from vttrelay.mcp.server import Caller, build_server
from vttrelay.mcp.worlds import RelayClients
from vttrelay.relay import peer_limits
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.core import error
from vttrelay.relay.forward import add_cors
from vttrelay.relay.store import KeyRecord

DISCONNECT_POLL = 1.0
SESSION_HEADER = "mcp-session-id"
TOO_MANY_SESSIONS = "Too many MCP sessions for this API key, please try again later"
KEY_SCOPE = "vttrelay.key"  # the KeyRecord, in the ASGI scope
BASE_SCOPE = "vttrelay.base_url"  # where the tools reach this relay, in the ASGI scope


def loopback_url(request: web.Request) -> str:
    """This relay as seen from itself: the local address the request arrived on."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if not sockname:
        return f"{request.scheme}://{request.host}"
    host, port = sockname[0], sockname[1]
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def asgi_scope(request: web.Request, key: KeyRecord, secret: str) -> dict[str, Any]:
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    peer = request.transport.get_extra_info("peername") if request.transport else None
    token = AccessToken(token=secret, client_id=key.id, scopes=list(key.scopes))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in request.headers.items()],
        "server": tuple(sock[:2]) if sock else None,
        "client": tuple(peer[:2]) if peer else None,
        "user": AuthenticatedUser(token),
        "state": {},
        KEY_SCOPE: key,
        BASE_SCOPE: loopback_url(request),
    }


async def asgi_bridge(request: web.Request, app: Any, scope: dict[str, Any]) -> web.StreamResponse:
    """Run the ASGI `app` for one aiohttp request; returns the response it sent."""
    response: web.StreamResponse | None = None
    ended = asyncio.Event()
    body_done = False

    async def receive() -> dict[str, Any]:
        nonlocal body_done
        if not body_done:
            chunk = await request.content.read(64 * 1024)
            body_done = request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not body_done}
        while not ended.is_set():
            transport = request.transport
            if transport is None or transport.is_closing():
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DISCONNECT_POLL):
                    await ended.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers") or []:
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            response.headers.popall("transfer-encoding", None)  # aiohttp frames the body
            add_cors(response.headers)
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            if ended.is_set():
                return  # the client went away: later writes are dropped, as ASGI servers do
            try:
                if message.get("body"):
                    await response.write(message["body"])
                if not message.get("more_body"):
                    await response.write_eof()
                    ended.set()
            except ConnectionResetError:
                ended.set()

    try:
        await app(scope, receive, send)
    finally:
        ended.set()
    if response is None:  # the app answered nothing: not expected of the SDK
        raise error(500, "MCP transport sent no response")
    return response


class HttpCallers:
    """`server.Callers` for `/mcp`: each request's key and a relay client for it and the world
    the session plays in (`?clientId=` on the URL, or what `choose_world` chose), kept per key
    and world (bounded) so a session's calls reuse one connection pool."""

    def __init__(self, clients: RelayClients) -> None:
        self.clients = clients

    async def __call__(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        scope = ctx.request.scope if ctx.request is not None else {}
        key: KeyRecord | None = scope.get(KEY_SCOPE)
        user = scope.get("user")
        if key is None or not isinstance(user, AuthenticatedUser):
            raise RuntimeError("an /mcp request without its API key")
        given = parse_qs(scope.get("query_string", b"").decode()).get(worlds.QUERY)
        world = worlds.session_world(ctx, given[0] if given else None)
        client = await self.clients.get(scope[BASE_SCOPE], user.access_token.token, world)
        return Caller(client, key.name or key.id, tuple(key.scopes), world)


class McpEndpoint:
    """The MCP server behind `/mcp`: the SDK's session manager, run in a task of its own (its
    anyio task group must be entered and left by the same task), and the relay clients of the
    tools. Built and started by `vttrelay.mcp.lazy` on the first `/mcp` request; `stop()` at the
    relay's shutdown, before aiohttp waits for open requests: that ends every session, so a
    client's open GET stream doesn't hold the relay's exit."""

    def __init__(
        self, keys: Any, counters: Counters | None = None, limits: SessionLimits | None = None
    ) -> None:
        self.keys = keys  # the relay's KeyCache
        self.counters = counters
        self.limits = limits = limits or SessionLimits()
        self.clients = RelayClients()
        self.manager = StreamableHTTPSessionManager(
            app=build_server(HttpCallers(self.clients)),
            max_sessions=limits.total,
            session_idle_timeout=limits.idle_timeout,
        )
        self.opening: Counter[str] = Counter()  # requests opening a session now, per holder
        self.account_of: dict[str, str] = {}  # key id -> account, for the keys that opened one
        self.stopping = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def _run(self, up: asyncio.Event) -> None:
        async with self.manager.run():
            up.set()
            await self.stopping.wait()

    async def start(self) -> None:
        """Run the session manager; returns once it accepts requests (raises what stopped it)."""
        up = asyncio.Event()
        self.task = asyncio.create_task(self._run(up))
        waiter = asyncio.create_task(up.wait())
        await asyncio.wait([self.task, waiter], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.task.done():
            self.task.result()

    async def handle(self, request: web.Request, key: KeyRecord, secret: str) -> web.StreamResponse:
        """One `/mcp` request (POST, GET or DELETE) by a valid key (`lazy.LazyMcp` checked it).
        A request that opens a session (no session id) is first held to the key's and its
        account's limits."""
        scope = asgi_scope(request, key, secret)
        if request.method != "POST" or SESSION_HEADER in request.headers:
            return await asgi_bridge(request, self.manager.handle_request, scope)
        await self._admit(key)
        holders = (f"key:{key.id}", f"account:{key.account}")
        for holder in holders:
            self.opening[holder] += 1
        try:
            return await asgi_bridge(request, self.manager.handle_request, scope)
        finally:
            for holder in holders:
                self.opening[holder] -= 1
                if not self.opening[holder]:
                    del self.opening[holder]

    async def _admit(self, key: KeyRecord) -> None:
        """429 when the key holds `per_key` sessions or its account `per_account` (open, or
        opening now), or the key opened `per_minute` in the last minute."""
        limits = self.limits
        self.account_of[key.id] = key.account
        by_key, by_account = self.sessions_of(key.id, key.account)
        if (
            by_key + self.opening[f"key:{key.id}"] >= limits.per_key
            or by_account + self.opening[f"account:{key.account}"] >= limits.per_account
        ):
            raise error(429, TOO_MANY_SESSIONS)
        if self.counters is not None and not await peer_limits.take_named(
            self.counters, f"mcp:sessions:{key.id}", limits.per_minute, 60.0
        ):
            raise error(429, TOO_MANY_SESSIONS)

    def sessions_of(self, key_id: str, account: str) -> tuple[int, int]:
        """Open sessions of the key and of its account (the SDK's record of each session's
        owner: the `client_id` of the key's `AccessToken`, `asgi_scope`)."""
        owners = getattr(self.manager, "_session_owners", {})
        by_key = by_account = 0
        for owner in owners.values():
            owner_key = owner.get("client_id")
            by_key += owner_key == key_id
            by_account += self.account_of.get(owner_key) == account
        return by_key, by_account

    async def stop(self) -> None:
        """End every session and the manager's task (idempotent)."""
        self.stopping.set()
        if self.task is not None:
            await asyncio.shield(self.task)

    async def close(self) -> None:
        """After `stop()`: close the tools' relay clients."""
        await self.stop()
        await self.clients.close()
