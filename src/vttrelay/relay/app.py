"""Builds the relay's aiohttp application from the route table and the parts beside it.

`create_app(config)` wires: the world WebSocket (`/relay`, `/relay/`, and `/` with an Upgrade
header), one handler per route of `routes.ROUTES` (forward routes through `forward.py`, local
routes by their `handler` name in `handlers.local_handlers`, stream routes and `/ws/api` through
`events/`), the one middleware (`middleware.py`: CORS on every response (wire-protocol §8), the
body limit (413), one access-log line per request) and the background usage flusher, key-cache
refresh and token checks. The store is read and written in worker threads (`asyncio.to_thread`):
it may be a PostgreSQL server, and the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from vttrelay import __version__
from vttrelay.protocol import Close
from vttrelay.relay import forwarded, sessions_api
from vttrelay.relay.accesslog import AccessLog, LoggingAccessLog
from vttrelay.relay.accounts import services as accounts_services
from vttrelay.relay.accounts.key_cache import KeyCache, UsageCounter
from vttrelay.relay.accounts.tunnel import WorldTunnel
from vttrelay.relay.accounts.world_list import WorldList
from vttrelay.relay.activity import ActivityLog
from vttrelay.relay.backends import Backends, backends_for
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import Gate
from vttrelay.relay.events.sse import serve_sse
from vttrelay.relay.events.streams import Streams
from vttrelay.relay.events.ws_api import ClientSocket
from vttrelay.relay.forward import forward, json_response
from vttrelay.relay.handlers import Bound, LocalHandler, bind, local_handlers
from vttrelay.relay.link.gateway import WorldGateway, is_world_upgrade
from vttrelay.relay.metrics import RelayCollector, make_registry
from vttrelay.relay.middleware import relay_middleware
from vttrelay.relay.routes import ROUTES, Route
from vttrelay.relay.sessions_api import SessionService
from vttrelay.relay.state import STATE, RelayState
from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.relay")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Plugin:
    """A part mounted on the relay application that the relay itself does not import (the
    dashboard, `/mcp`): `install(app, state)` adds its routes and hooks, given the relay's
    services; `handlers` are the route-table handlers it provides by name (the dashboard's pages
    that a pair request's `pairUrl` and a key request's `approvalUrl` open)."""

    name: str
    install: Callable[[web.Application, RelayState], object]
    handlers: Mapping[str, LocalHandler[RelayState]] = field(default_factory=dict)


# The application -----------------------------------------------------------------------------


def _bind(route: Route, state: RelayState, handlers: Mapping[str, Bound]) -> Handler:
    if route.mode == "forward":
        gate = state.gate

        async def forward_handler(request: web.Request) -> web.StreamResponse:
            return await forward(request, route, gate)

        return forward_handler
    if route.mode == "stream":

        async def stream_handler(request: web.Request) -> web.StreamResponse:
            return await serve_sse(state.streams, request, route)  # a `*/subscribe` route

        return stream_handler
    local = handlers[route.handler or ""]

    async def local_handler(request: web.Request) -> web.StreamResponse:
        return await local(request, route)

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
    keys = KeyCache(
        store,
        config.key_cache_ttl,
        unknown_per_minute=config.unknown_key_rate_limit,
        counters=backends.counters,
    )
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
        access=access or LoggingAccessLog(enabled=config.access_log != "off"),
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
    accounts = accounts_services.install(app, config, store, backends.counters)
    state.gateway.users_changed = accounts.world_users.changed
    state.gateway.known_clients = WorldList(store, registry).answer
    state.gateway.module_notify = accounts.module_events.record
    tunnel = WorldTunnel(store, state.gate, backends.counters, accounts.remote_requests)
    state.gateway.remote_request = tunnel.answer
    state.streams = Streams(state.gate, backends.events, backends.counters)
    state.streams.remote_requests = accounts.remote_requests.record
    registry.add_listener(state.streams)

    app.router.add_get("/relay", state.gateway.handle)
    app.router.add_get("/relay/", state.gateway.handle)
    state.prometheus = make_registry(
        RelayCollector(config.instance_id, state.metrics, registry, state.streams)
    )
    handlers = local_handlers(state)
    for plugin in plugins:
        handlers.update(bind(plugin.handlers, state))  # a plug-in's pages get the relay's state
    for route in ROUTES:
        if route.mode == "local" and route.handler not in handlers:
            continue
        added = app.router.add_route(route.method, route.path, _bind(route, state, handlers))
        if added.resource is not None:
            state.api_routes[added.resource] = route.path
        if route.mode == "stream" and added.resource is not None:
            state.metrics.add_streaming((added.resource,))

    async def client_ws(request: web.Request) -> web.StreamResponse:
        return await ClientSocket(state.streams, request).run()  # wire-protocol §8

    app.router.add_get("/ws/api", client_ws)
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
    seen = sessions_api.last_request(state.registry)
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


__all__ = ["Plugin", "create_app"]
