"""Builds the relay's aiohttp application from the route table and the parts beside it.

`create_app(config)` wires: the world WebSocket (`/relay`, `/relay/`, and `/` with an Upgrade
header), one handler per route of `routes.ROUTES` (forward routes through `forward.py`, local
routes by their `handler` name below, stream routes and `/ws/api` through `events/`),
CORS on every response (wire-protocol §8), the body limit (413), and the background usage
flusher, key-cache refresh and token checks. `relay_middleware` also writes one line per request
(method, path, status, ms) to the app's `AccessLog` (accesslog.py). The store is read and written
in worker threads (`asyncio.to_thread`): it may be a PostgreSQL server, and the event loop never
waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import StreamReader, web
from aiohttp.typedefs import Middleware
from prometheus_client import CollectorRegistry

from vttrelay import __version__, protocol
from vttrelay.protocol import Close
from vttrelay.relay import files, forwarded, openapi, peer_limits, sessions_api, sheets
from vttrelay.relay.accesslog import (
    AccessLog,
    LoggingAccessLog,
    RequestRecord,
    describe_error,
    escape,
)
from vttrelay.relay.accounts import http as accounts_http
from vttrelay.relay.accounts import keys_http as accounts_keys
from vttrelay.relay.accounts import pairing
from vttrelay.relay.accounts import requests_http as accounts_requests
from vttrelay.relay.accounts import services as accounts_services
from vttrelay.relay.accounts import settings_http as accounts_settings
from vttrelay.relay.accounts import worlds_http as accounts_worlds
from vttrelay.relay.accounts.key_cache import TOO_MANY_UNKNOWN_KEYS, KeyCache, UsageCounter
from vttrelay.relay.activity import ActivityLog
from vttrelay.relay.backends import Backends, Counters, WorldDirectory, backends_for
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import Gate, RelayError, admitted, error
from vttrelay.relay.events.streams import Streams
from vttrelay.relay.forward import (
    API_KEY_HEADER,
    BODY_TOO_LARGE,
    CORS_HEADERS,
    add_cors,
    admit_request,
    error_response,
    forward,
    forward_image,
    read_body,
)
from vttrelay.relay.link.gateway import WorldGateway, is_world_upgrade
from vttrelay.relay.metrics import (
    RelayCollector,
    RequestMetrics,
    make_registry,
    metrics_response,
)
from vttrelay.relay.routes import ROUTES, Route
from vttrelay.relay.sessions_api import SessionService
from vttrelay.relay.store import PairingError, RelayStore

log = logging.getLogger("vttrelay.relay")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PREFLIGHT_HEADERS = {
    **CORS_HEADERS,
    "Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS, PATCH",
    "Access-Control-Allow-Headers": "Accept, Authorization, Content-Type, X-API-Key",
    "Access-Control-Max-Age": "300",
}
PAIR_WINDOW = 15 * 60.0
BODY_TIMEOUT = "Request body not received in time"  # 408 after RelayConfig.body_timeout
INTERNAL_ERROR = "Internal server error"  # the body of a 500 (a bug; logged in one line)


@dataclass
class RelayState:
    """The application's parts; one per application (`app[STATE]`). The request core's
    adapters (forward routes, SSE, /ws/api) get only its `gate`."""

    config: RelayConfig
    store: RelayStore
    backends: Backends
    registry: WorldDirectory  # backends.directory: where each world lives
    keys: KeyCache
    usage: UsageCounter
    counters: Counters  # backends.counters: the per-key rate budgets
    gateway: WorldGateway
    access: AccessLog
    gate: Gate  # the request core (core.py): what a keyed call may use
    activity: ActivityLog  # every API call's facts, written in batches (activity.py)
    streams: Streams = field(init=False)  # set by create_app: it needs the state
    metrics: RequestMetrics = field(default_factory=RequestMetrics)
    prometheus: CollectorRegistry = field(init=False)  # what /metrics exposes (metrics.py)
    started_at: float = field(default_factory=time.time)
    owns_store: bool = False
    sessions: SessionService | None = None  # the session routes' manager; None: turned off
    # the route-table path of each resource the app serves (what the activity log records)
    api_routes: dict[Any, str] = field(default_factory=dict)


STATE = web.AppKey("vttrelay_state", RelayState)


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def _json_body(raw: bytes) -> dict[str, Any] | None:
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


# Local handlers (route.handler names) --------------------------------------------------------


async def h_health(request: web.Request, route: Route, state: RelayState) -> web.Response:
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return json_response(
        {"status": "ok", "timestamp": stamp, "instanceId": state.config.instance_id}
    )


async def h_status(request: web.Request, route: Route, state: RelayState) -> web.Response:
    """The reference relay's status, plus which instance answered and how many instances are
    alive (by their heartbeat in the world directory; 1 for a single process)."""
    return json_response(
        {
            "status": "ok",
            "version": __version__,
            "websocket": "/relay",
            "billingEnabled": False,
            "headlessEnabled": state.sessions is not None,
            "instanceId": state.config.instance_id,
            "instancesAlive": len(state.registry.instances()),
        }
    )


# The world metadata `/clients` shows: the /relay query keys (but `id`, shown as `clientId`),
# then what the relay learnt from the connection itself.
CLIENT_FIELDS = (
    *(k for k in protocol.WORLD_QUERY_KEYS if k != "id"),
    "publicUrl",
    "ipAddress",
)


async def h_clients(request: web.Request, route: Route, state: RelayState) -> web.Response:
    key = await admitted(admit_request(request, route, state.gate))
    allowed = set(key.client_ids)
    clients: list[dict[str, Any]] = []
    live_ids: set[str] = set()
    for world in sorted(state.registry.for_account(key.account), key=lambda w: w.client_id):
        if allowed and world.client_id not in allowed:
            continue
        live_ids.add(world.client_id)
        entry: dict[str, Any] = {
            "clientId": world.client_id,
            "instanceId": world.instance_id or state.config.instance_id,
            "lastSeen": world.metadata.get("lastSeen", 0),
            "connectedSince": world.metadata.get("connectedSince", 0),
        }
        entry.update({k: world.metadata[k] for k in CLIENT_FIELDS if world.metadata.get(k)})
        if world.token_name:
            entry["tokenName"] = world.token_name
        entry["isOnline"] = True
        clients.append(entry)
    for known in await asyncio.to_thread(state.store.known_clients, key.account):
        if known.client_id in live_ids or (allowed and known.client_id not in allowed):
            continue
        entry = {"clientId": known.client_id, "lastSeen": 0, "connectedSince": 0}  # as §4.10
        entry.update({k: known.metadata[k] for k in CLIENT_FIELDS if known.metadata.get(k)})
        if known.token_name:
            entry["tokenName"] = known.token_name
        entry["isOnline"] = False
        clients.append(entry)
    return json_response({"total": len(clients), "clients": clients})


async def h_key_info(request: web.Request, route: Route, state: RelayState) -> web.Response:
    """GET /api/key: what the calling key may do, so a client (the MCP server) can offer only
    that. Authenticated and rate limited like any keyed call; no scope needed."""
    key = await admitted(admit_request(request, route, state.gate))
    return json_response(
        {
            "id": key.id,
            "name": key.name,
            "account": key.account,
            "scopes": list(key.scopes),
            "clientIds": list(key.client_ids),
            "userId": key.user_id,
            "expiresAt": key.expires_at,
            "ratePerMinute": key.rate_per_minute,
        }
    )


def _relay_url(request: web.Request, base_path: str) -> str:
    scheme, _, rest = pairing.public_base(request, base_path).partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/relay"


async def h_pair(request: web.Request, route: Route, state: RelayState) -> web.Response:
    limit = state.config.pair_rate_limit
    if not await peer_limits.take(state.counters, peer_limits.PAIR, request, limit, PAIR_WINDOW):
        raise error(429, "Too many pairing attempts, please try again later")
    body = _json_body(await read_body(request, route)) or {}
    code = body.get("code")
    if not isinstance(code, str) or not code.strip():
        raise error(400, "Code is required")
    world_id = body.get("worldId")
    if not isinstance(world_id, str) or not world_id.strip():
        raise error(400, "worldId is required")
    if not protocol.valid_id(world_id):
        raise error(400, protocol.INVALID_WORLD_ID)
    existing = body.get("existingClientId")
    if existing is not None and existing != "" and not protocol.valid_id(existing):
        raise error(400, protocol.INVALID_CLIENT_ID)  # checked before the code is spent
    if not existing or existing in state.config.reserved_client_ids:
        existing = None  # none, or the embedded world's id: never handed out (token_fits)
    metadata = {k: v for k in ("worldId", "worldTitle") if isinstance(v := body.get(k), str) and v}
    if len(metadata.get("worldTitle", "")) > pairing.MAX_TEXT:
        raise error(400, f"worldTitle is too long (at most {pairing.MAX_TEXT} characters)")
    live = existing is not None and state.registry.get(existing) is not None
    result = await asyncio.to_thread(
        state.store.redeem_pairing_code, code.strip(), existing, metadata, live
    )
    if isinstance(result, PairingError):
        raise error(404 if result is PairingError.INVALID else 410, result.value)
    log.info("paired world %s (account %s)", result.client_id, escape(result.account))
    return json_response(
        {
            "token": result.token,
            "clientId": result.client_id,
            "relayUrl": _relay_url(request, state.config.base_path),
        }
    )


async def h_client_active(request: web.Request, route: Route, state: RelayState) -> web.Response:
    limit = state.config.probe_rate_limit
    if not await peer_limits.take(state.counters, peer_limits.PROBE, request, limit, 60.0):
        raise error(429, "Too many requests, please try again later")
    client_id = request.match_info["clientId"]
    if state.registry.get(client_id) is not None:
        return json_response({"active": True})
    if not protocol.valid_id(client_id):  # no world has such an id: no store read
        raise error(404, "Client not found")
    if await asyncio.to_thread(state.store.known_client, client_id) is None:
        raise error(404, "Client not found")
    return json_response({"active": False})


async def h_self_unpair(request: web.Request, route: Route, state: RelayState) -> web.Response:
    limit = state.config.unpair_rate_limit  # each call reads the store, and nobody signed in
    if not await peer_limits.take(state.counters, peer_limits.UNPAIR, request, limit, PAIR_WINDOW):
        raise error(429, "Too many requests, please try again later")
    body = _json_body(await read_body(request, route))
    token = body.get("token") if body else None
    if not isinstance(token, str) or not token:
        raise error(400, "Missing token")
    record = await asyncio.to_thread(state.store.revoke_token, token)
    if record is None:
        return json_response({"success": True, "message": "Token not found or already revoked"})
    closed = await state.registry.close_token(record.id, Close.AUTH_PROTOCOL, "Unpaired by owner")
    log.info("unpaired world %s (%d socket(s) closed)", record.client_id, closed)
    return json_response({"success": True, "message": "Connection token revoked"})


async def h_contents_deprecated(
    request: web.Request, route: Route, state: RelayState
) -> web.Response:
    """GET /contents/*: answered by the relay after the key and scope checks, as the reference
    relay does (endpoints-beyond-seed §4.5)."""
    await admitted(admit_request(request, route, state.gate))
    raise error(
        400,
        "This endpoint has been deprecated.",
        example="/structure?path=your/path&recursive=true",
        message="Use GET /structure with the path query parameter instead.",
    )


async def h_metrics(request: web.Request, route: Route, state: RelayState) -> web.Response:
    """This instance's counters in the Prometheus text format (metrics.py)."""
    return metrics_response(state.prometheus)


async def h_scene_image(request: web.Request, route: Route, state: RelayState) -> web.Response:
    return await forward_image(request, route, state.gate)


async def h_openapi(request: web.Request, route: Route, state: RelayState) -> web.Response:
    body = openapi.document_bytes(state.config.base_path)
    return web.Response(body=body, content_type="application/json")


# /docs holds an API key in its form: no other site may frame it (clickjacking), nor read which
# page it came from
DOCS_HEADERS = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def h_docs(request: web.Request, route: Route, state: RelayState) -> web.Response:
    return web.Response(text=openapi.docs_html(), content_type="text/html", headers=DOCS_HEADERS)


LocalHandler = Callable[[web.Request, Route, RelayState], Awaitable[web.StreamResponse]]
LOCAL_HANDLERS: dict[str, LocalHandler] = {
    "health": h_health,
    "status": h_status,
    "clients": h_clients,
    "key_info": h_key_info,
    "pair": h_pair,
    "client_active": h_client_active,
    "self_unpair": h_self_unpair,
    "openapi": h_openapi,
    "metrics": h_metrics,
    "docs": h_docs,
    "contents_deprecated": h_contents_deprecated,
    "scene_image": h_scene_image,
    **files.HANDLERS,  # POST /upload, GET /download (files-sheet-sessions §1)
    **sheets.HANDLERS,  # GET /sheet (files-sheet-sessions §2)
    **sessions_api.HANDLERS,  # the session routes (files-sheet-sessions §4)
    **pairing.HANDLERS,  # pair and key requests (endpoints-beyond-seed §12)
    **accounts_http.HANDLERS,  # accounts and sessions (/auth, accounts-auth.md)
    **accounts_keys.HANDLERS,  # an account's keys and tokens (/auth)
    **accounts_worlds.HANDLERS,  # an account's known worlds (/auth/known-clients)
    **accounts_settings.HANDLERS,  # stored credentials, notification settings (/auth)
    **accounts_requests.HANDLERS,  # key and pair requests decided with a session (/auth)
}


@dataclass(frozen=True)
class Plugin:
    """A part mounted on the relay application that the relay itself does not import (the
    dashboard, `/mcp`): `install(app, state)` adds its routes and hooks, given the relay's
    services; `handlers` are the route-table handlers it provides by name (the dashboard's pages
    that a pair request's `pairUrl` and a key request's `approvalUrl` open)."""

    name: str
    install: Callable[[web.Application, RelayState], object]
    handlers: Mapping[str, LocalHandler] = field(default_factory=dict)


# Middleware and signals ----------------------------------------------------------------------


def relay_middleware(state: RelayState) -> Middleware:
    """The one middleware (one per request costs CPU, bench/RESULTS.md): CORS preflight and
    the CORS headers of every response (`forward.add_cors`), the body limit (413) and time
    limit (408, `body_timeout`), an API key not in the key cache yet read off the event loop
    (`KeyCache.load`), a `core.RelayError` from any handler as its HTTP response, one access-log
    line per request (method, path, status, ms), the request's count in `/metrics` (route,
    method, status, seconds) and, for a route of the route table, its `RequestRecord` in the
    activity log (one append; `activity.py` writes them in batches)."""
    max_body = state.config.max_body_bytes
    body_timeout = state.config.body_timeout
    access = state.access
    keys = state.keys
    observe = state.metrics.observe
    clock = time.perf_counter
    activity = state.activity
    api_routes = state.api_routes
    record = activity.add if activity.enabled else None

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = clock()
        status = 500
        response: web.StreamResponse | None = None
        try:
            if request.method == "OPTIONS":
                status = 200
                return web.Response(status=200, headers=PREFLIGHT_HEADERS)
            secret = request.headers.get(API_KEY_HEADER)
            # a key not seen yet: read in a thread, then cached (an address's unknown ones:
            # a budget per minute, KeyCache)
            if (
                secret
                and keys.missing(secret)
                and not await keys.load(secret, request.remote or "")
            ):
                raise error(429, TOO_MANY_UNKNOWN_KEYS)
            length = request.content_length
            if length is not None and length > max_body:
                raise error(413, BODY_TOO_LARGE)
            # a body still incomplete after body_timeout fails the handler's read (BodyTimeout);
            # one that came whole with the headers (most) needs no timer, nor does no body
            watchdog = None
            if request.body_exists and not request.content.is_eof():
                loop = asyncio.get_running_loop()
                watchdog = loop.call_later(body_timeout, _body_late, request.content)
            try:
                response = await handler(request)
            except web.HTTPRequestEntityTooLarge:
                raise error(413, BODY_TOO_LARGE) from None
            except BodyTimeout:
                status = 408
                response = error_response(error(408, BODY_TIMEOUT))
                response.force_close()  # the rest of the body is not waited for
                return response
            finally:
                if watchdog is not None:
                    watchdog.cancel()
            status = response.status
            return response
        except RelayError as exc:  # the REST adapter of the request core (core.py)
            status = exc.status
            response = error_response(exc)
            return response
        except web.HTTPException as exc:
            status = exc.status
            add_cors(exc.headers)  # aiohttp answers with its status, text and headers
            raise
        except Exception as exc:  # a bug: one log line (accesslog.describe_error), a JSON 500
            if isinstance(exc, ConnectionError) or request.writer.output_size:
                raise  # the client went away, or a stream already began: aiohttp ends it
            log.error("%s %s failed: %s", request.method, escape(request.path), describe_error(exc))
            log.debug("%s %s failed", request.method, escape(request.path), exc_info=exc)
            response = json_response({"error": INTERNAL_ERROR}, 500)
            return response
        finally:
            if response is not None and not response.prepared:
                add_cors(response.headers)
            elapsed = clock() - started
            access.line(request.method, request.path, status, elapsed * 1000)
            resource = request.match_info.route.resource
            observe(resource, request.method, status, elapsed)
            if record is not None and (path := api_routes.get(resource)) is not None:
                sent = request.headers.get(API_KEY_HEADER)
                key = keys.cached(sent) if sent else None
                record(
                    RequestRecord(
                        time.time(),
                        key.account if key else "",
                        key.id if key else "",
                        key.name if key else "",
                        request.query.get("clientId", ""),
                        request.method,
                        path,
                        status,
                        elapsed * 1000,
                        request.remote or "",
                    )
                )

    return middleware


class BodyTimeout(Exception):
    """A request body did not arrive whole within `RelayConfig.body_timeout` (a 408)."""


def _body_late(body: StreamReader) -> None:
    if not body.is_eof():
        body.set_exception(BodyTimeout())


# The application -----------------------------------------------------------------------------


def _bind(route: Route, state: RelayState, handlers: Mapping[str, LocalHandler]) -> Handler:
    if route.mode == "forward":
        gate = state.gate

        async def forward_handler(request: web.Request) -> web.StreamResponse:
            return await forward(request, route, gate)

        return forward_handler
    if route.mode == "stream":

        async def stream_handler(request: web.Request) -> web.StreamResponse:
            return await state.streams.handle_sse(request, route)

        return stream_handler
    local = handlers[route.handler or ""]

    async def local_handler(request: web.Request) -> web.StreamResponse:
        return await local(request, route, state)

    return local_handler


def create_app(
    config: RelayConfig,
    store: RelayStore | None = None,
    access: AccessLog | None = None,
    backends: Backends | None = None,
    sessions: SessionService | None = None,
    plugins: tuple[Plugin, ...] = (),
) -> web.Application:
    """The relay application. Pass `store` to share one (tests); otherwise it opens its own.
    `access` is where request-log lines go (default: a `logging` record each). `backends` is
    where the shared state lives (default: `backends.backends_for(config)`: in this process, or
    shared through `config.redis_url`). `sessions` serves the session routes (the `sessions`
    package's manager; None: sessions are turned off). `plugins` are mounted in their order
    (`server.assemble` gives the dashboard and `/mcp`); a route whose handler no plug-in provides
    (a dashboard page, without the dashboard) is not served."""
    owns_store = store is None
    store = store or RelayStore(config.store_target)
    backends = backends or backends_for(config)
    registry = backends.directory
    keys = KeyCache(store, config.key_cache_ttl, unknown_per_minute=config.unknown_key_rate_limit)
    usage = UsageCounter(store)
    state = RelayState(
        config=config,
        store=store,
        backends=backends,
        registry=registry,
        keys=keys,
        usage=usage,
        counters=backends.counters,
        gateway=WorldGateway(config, store, registry),
        access=access or LoggingAccessLog(),
        gate=Gate(config, keys, usage, backends.counters, registry),
        activity=ActivityLog(store.db, config.activity_days, config.activity_max_rows),
        owns_store=owns_store,
        sessions=sessions,
    )
    middlewares = [relay_middleware(state)]
    if config.trusted_proxies:  # only then: no cost per request without a proxy
        trusted = forwarded.TrustedProxies.parse(config.trusted_proxies)
        middlewares.insert(0, forwarded.forwarded_middleware(trusted))
    app = web.Application(middlewares=middlewares, client_max_size=config.max_body_bytes)
    app[STATE] = state
    accounts = accounts_services.install(app, config, store)
    state.gateway.users_changed = accounts.world_users.changed
    state.streams = Streams(state.gate, backends.events, backends.counters)
    registry.add_listener(state.streams)

    app.router.add_get("/relay", state.gateway.handle)
    app.router.add_get("/relay/", state.gateway.handle)
    handlers = {**LOCAL_HANDLERS, **{n: h for p in plugins for n, h in p.handlers.items()}}
    for route in ROUTES:
        if route.mode == "local" and route.handler not in handlers:
            continue
        added = app.router.add_route(route.method, route.path, _bind(route, state, handlers))
        if added.resource is not None:
            state.api_routes[added.resource] = route.path
        if route.mode == "stream" and added.resource is not None:
            state.metrics.add_streaming((added.resource,))
    state.prometheus = make_registry(
        RelayCollector(config.instance_id, state.metrics, registry, state.streams)
    )
    app.router.add_get("/ws/api", state.streams.handle_client_ws)
    for plugin in plugins:
        plugin.install(app, state)
    app.on_shutdown.append(state.streams.close)  # end SSE streams and /ws/api sockets

    async def root(request: web.Request) -> web.StreamResponse:
        if is_world_upgrade(request):
            return await state.gateway.handle(request)
        return json_response(
            {
                "name": "vttrelay",
                "version": __version__,
                "docs": "/docs",
                "dashboard": "/dashboard/",
            }
        )

    app.router.add_get("/", root)
    app.cleanup_ctx.append(_background)
    app.on_shutdown.append(_close_worlds)
    return app


async def _close_worlds(app: web.Application) -> None:
    await app[STATE].registry.close_all(Close.GOING_AWAY, "Server shutting down")


async def _run_token_checks(state: RelayState) -> None:
    """Close this instance's worlds whose token was revoked elsewhere, every
    `token_check_interval` seconds until cancelled."""
    while True:
        await asyncio.sleep(state.config.token_check_interval)
        try:
            await state.registry.check_tokens(state.store)
        except Exception:
            log.exception("token check failed")


async def _run_session_sweeps(state: RelayState, sessions: SessionService) -> None:
    """End idle sessions (and those whose world died) every `session_sweep_interval` seconds."""
    seen = sessions_api.last_request(state)
    while True:
        await asyncio.sleep(state.config.session_sweep_interval)
        try:
            await sessions.sweep(seen)
        except Exception:
            log.exception("session sweep failed")


async def _background(app: web.Application) -> Any:
    state = app[STATE]
    await state.registry.start()
    await state.backends.events.start()
    await state.backends.counters.start()
    tasks = [
        asyncio.ensure_future(state.usage.run(state.config.usage_flush_interval)),
        asyncio.ensure_future(_run_token_checks(state)),
        asyncio.ensure_future(state.keys.run()),
    ]
    if state.activity.enabled:
        tasks.append(
            asyncio.ensure_future(state.activity.run(state.config.activity_flush_interval))
        )
    if state.sessions is not None:
        await state.sessions.open()  # reaps what a killed relay left running
        tasks.append(asyncio.ensure_future(_run_session_sweeps(state, state.sessions)))
    yield
    if state.sessions is not None:
        await state.sessions.close()
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await state.backends.events.stop()
    await state.backends.counters.stop()
    await state.registry.stop()
    if state.owns_store:
        state.store.close()


__all__ = [
    "STATE",
    "Plugin",
    "RelayState",
    "create_app",
    "json_response",
]
