"""The relay's own local handlers (the route table's `handler` names served by the relay itself:
health, status, clients, key info, pairing, the active probe, self-unpair, OpenAPI, /docs,
/metrics) and `local_handlers(state)`, every local handler by name (these and the files, sheets,
sessions and accounts modules' tables), each given only the services its module uses (its
`*Deps` value, or the request core's `Gate`), not the whole `RelayState`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry

from vttrelay import __version__, protocol
from vttrelay.protocol import Close
from vttrelay.relay import files, openapi, peer_limits, sessions_api, sheets
from vttrelay.relay.accesslog import escape
from vttrelay.relay.accounts import activity_http as accounts_activity
from vttrelay.relay.accounts import http as accounts_http
from vttrelay.relay.accounts import keys, pair_requests, pairing
from vttrelay.relay.accounts import keys_http as accounts_keys
from vttrelay.relay.accounts import requests_http as accounts_requests
from vttrelay.relay.accounts import settings_http as accounts_settings
from vttrelay.relay.accounts import worlds_http as accounts_worlds
from vttrelay.relay.accounts.deps import AccountDeps
from vttrelay.relay.backends.ports import Counters, WorldDirectory
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import Gate, admitted, error
from vttrelay.relay.files import FileDeps
from vttrelay.relay.forward import admit_request, forward_image, json_response, read_body
from vttrelay.relay.link.handshake import public_url
from vttrelay.relay.metrics import metrics_response
from vttrelay.relay.routes import Route
from vttrelay.relay.sessions_api import SessionDeps
from vttrelay.relay.state import RelayState
from vttrelay.relay.store import PairingError, RelayStore

log = logging.getLogger("vttrelay.relay")

PAIR_WINDOW = 15 * 60.0

D = TypeVar("D")
# A local handler of the route table: the request, its route and the services of its module
LocalHandler = Callable[[web.Request, Route, D], Awaitable[web.StreamResponse]]
Bound = Callable[[web.Request, Route], Awaitable[web.StreamResponse]]  # services given


@dataclass(frozen=True, slots=True)
class RelayDeps:
    """What the relay's own handlers below use."""

    config: RelayConfig
    store: RelayStore
    registry: WorldDirectory  # the live worlds, on any instance
    counters: Counters  # the per-address budgets of the public routes
    gate: Gate  # the request core: keyed calls
    prometheus: CollectorRegistry  # what /metrics exposes
    sessions_on: bool  # a session manager serves the session routes


def _json_body(raw: bytes) -> dict[str, Any] | None:
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


# Local handlers (route.handler names) --------------------------------------------------------


async def h_health(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return json_response(
        {"status": "ok", "timestamp": stamp, "instanceId": deps.config.instance_id}
    )


async def h_status(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    """The reference relay's status, plus which instance answered and how many instances are
    alive (by their heartbeat in the world directory; 1 for a single process)."""
    return json_response(
        {
            "status": "ok",
            "version": __version__,
            "websocket": "/relay",
            "billingEnabled": False,
            "headlessEnabled": deps.sessions_on,
            "instanceId": deps.config.instance_id,
            "instancesAlive": len(deps.registry.instances()),
        }
    )


# The world metadata `/clients` shows: the /relay query keys (but `id`, shown as `clientId`),
# then what the relay learnt from the connection itself.
CLIENT_FIELDS = (
    *(k for k in protocol.WORLD_QUERY_KEYS if k != "id"),
    "publicUrl",
    "ipAddress",
)


async def h_clients(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    key = await admitted(admit_request(request, route, deps.gate))
    allowed = set(key.client_ids)
    clients: list[dict[str, Any]] = []
    live_ids: set[str] = set()
    for world in sorted(deps.registry.for_account(key.account), key=lambda w: w.client_id):
        if allowed and world.client_id not in allowed:
            continue
        live_ids.add(world.client_id)
        entry: dict[str, Any] = {
            "clientId": world.client_id,
            "instanceId": world.instance_id or deps.config.instance_id,
            "lastSeen": world.metadata.get("lastSeen", 0),
            "connectedSince": world.metadata.get("connectedSince", 0),
        }
        entry.update({k: world.metadata[k] for k in CLIENT_FIELDS if world.metadata.get(k)})
        if world.token_name:
            entry["tokenName"] = world.token_name
        entry["isOnline"] = True
        clients.append(entry)
    for known in await asyncio.to_thread(deps.store.known_clients, key.account):
        if known.client_id in live_ids or (allowed and known.client_id not in allowed):
            continue
        entry = {"clientId": known.client_id, "lastSeen": 0, "connectedSince": 0}  # as §4.10
        entry.update({k: known.metadata[k] for k in CLIENT_FIELDS if known.metadata.get(k)})
        if known.token_name:
            entry["tokenName"] = known.token_name
        entry["isOnline"] = False
        clients.append(entry)
    return json_response({"total": len(clients), "clients": clients})


async def h_key_info(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    """GET /api/key: what the calling key may do, so a client (the MCP server) can offer only
    that. Authenticated and rate limited like any keyed call; no scope needed."""
    key = await admitted(admit_request(request, route, deps.gate))
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


async def h_pair(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    limit = deps.config.pair_rate_limit
    if not await peer_limits.take(deps.counters, peer_limits.PAIR, request, limit, PAIR_WINDOW):
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
    if not existing or existing in deps.config.reserved_client_ids:
        existing = None  # none, or the embedded world's id: never handed out (token_fits)
    metadata = {k: v for k in ("worldId", "worldTitle") if isinstance(v := body.get(k), str) and v}
    if len(metadata.get("worldTitle", "")) > pairing.MAX_TEXT:
        raise error(400, f"worldTitle is too long (at most {pairing.MAX_TEXT} characters)")
    origin = body.get("serverOrigin")
    if isinstance(origin, str) and (url := public_url(origin)):
        metadata["publicUrl"] = url  # the Foundry page's origin, as /relay records it
    # The ids connected now: a world never pairs as one of them (client_ids.py)
    account = await asyncio.to_thread(keys.pairing_code_account, deps.store, code.strip())
    live = {w.client_id for w in deps.registry.for_account(account)} if account else set()
    if existing is not None and deps.registry.get(existing) is not None:
        live.add(existing)
    result = await asyncio.to_thread(
        deps.store.redeem_pairing_code, code.strip(), existing, metadata, live
    )
    if isinstance(result, PairingError):
        raise error(404 if result is PairingError.INVALID else 410, result.value)
    # a code a pair request's approval minted carries its cross-world permissions
    await asyncio.to_thread(
        pair_requests.carry_grants, deps.store, code.strip(), result.client_id, result.account
    )
    log.info("paired world %s (account %s)", result.client_id, escape(result.account))
    return json_response(
        {
            "token": result.token,
            "clientId": result.client_id,
            "relayUrl": _relay_url(request, deps.config.base_path),
        }
    )


async def h_client_active(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    limit = deps.config.probe_rate_limit
    if not await peer_limits.take(deps.counters, peer_limits.PROBE, request, limit, 60.0):
        raise error(429, "Too many requests, please try again later")
    client_id = request.match_info["clientId"]
    if deps.registry.get(client_id) is not None:
        return json_response({"active": True})
    if not protocol.valid_id(client_id):  # no world has such an id: no store read
        raise error(404, "Client not found")
    if await asyncio.to_thread(deps.store.known_client, client_id) is None:
        raise error(404, "Client not found")
    return json_response({"active": False})


async def h_self_unpair(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    limit = deps.config.unpair_rate_limit  # each call reads the store, and nobody signed in
    if not await peer_limits.take(deps.counters, peer_limits.UNPAIR, request, limit, PAIR_WINDOW):
        raise error(429, "Too many requests, please try again later")
    body = _json_body(await read_body(request, route))
    token = body.get("token") if body else None
    if not isinstance(token, str) or not token:
        raise error(400, "Missing token")
    record = await asyncio.to_thread(deps.store.revoke_token, token)
    if record is None:
        return json_response({"success": True, "message": "Token not found or already revoked"})
    closed = await deps.registry.close_token(record.id, Close.AUTH_PROTOCOL, "Unpaired by owner")
    log.info("unpaired world %s (%d socket(s) closed)", record.client_id, closed)
    return json_response({"success": True, "message": "Connection token revoked"})


async def h_contents_deprecated(
    request: web.Request, route: Route, deps: RelayDeps
) -> web.Response:
    """GET /contents/*: answered by the relay after the key and scope checks, as the reference
    relay does (endpoints-beyond-seed §4.5)."""
    await admitted(admit_request(request, route, deps.gate))
    raise error(
        400,
        "This endpoint has been deprecated.",
        example="/structure?path=your/path&recursive=true",
        message="Use GET /structure with the path query parameter instead.",
    )


async def h_metrics(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    """This instance's counters in the Prometheus text format (metrics.py)."""
    return metrics_response(deps.prometheus)


async def h_scene_image(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    return await forward_image(request, route, deps.gate)


async def h_openapi(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    body = openapi.document_bytes(deps.config.base_path)
    return web.Response(body=body, content_type="application/json")


# /docs holds an API key in its form: no other site may frame it (clickjacking), nor read which
# page it came from
DOCS_HEADERS = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def h_docs(request: web.Request, route: Route, deps: RelayDeps) -> web.Response:
    return web.Response(text=openapi.docs_html(), content_type="text/html", headers=DOCS_HEADERS)


HANDLERS: dict[str, LocalHandler[RelayDeps]] = {
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
}


def bind(handlers: Mapping[str, LocalHandler[D]], deps: D) -> dict[str, Bound]:
    """Each handler of a table given the services of its module."""

    def bound(handler: LocalHandler[D]) -> Bound:
        async def call(request: web.Request, route: Route) -> web.StreamResponse:
            return await handler(request, route, deps)

        return call

    return {name: bound(handler) for name, handler in handlers.items()}


def local_handlers(state: RelayState) -> dict[str, Bound]:
    """Every local handler of the relay by its route-table name, each module's given only the
    services it uses (built here, once per application)."""
    config, gate = state.config, state.gate
    own = RelayDeps(
        config,
        state.store,
        state.registry,
        state.counters,
        gate,
        state.prometheus,
        sessions_on=state.sessions is not None,
    )
    accounts = AccountDeps(config, state.store, state.counters, state.keys, state.registry, gate)
    sessions = SessionDeps(gate, state.sessions, state.registry, config.instance_id)
    return {
        **bind(HANDLERS, own),
        **bind(files.HANDLERS, FileDeps(gate, Path(config.data_dir))),  # files-sheet-sessions §1
        **bind(sheets.HANDLERS, gate),  # GET /sheet (files-sheet-sessions §2)
        **bind(sessions_api.HANDLERS, sessions),  # the session routes (files-sheet-sessions §4)
        **bind(pairing.HANDLERS, accounts),  # pair and key requests (endpoints-beyond-seed §12)
        **bind(accounts_http.HANDLERS, accounts),  # accounts and sessions (/auth)
        **bind(accounts_keys.HANDLERS, accounts),  # an account's keys and tokens (/auth)
        **bind(accounts_worlds.HANDLERS, accounts),  # its known worlds (/auth/known-clients)
        **bind(accounts_activity.HANDLERS, accounts),  # its audit logs and activity feed (/auth)
        **bind(accounts_settings.HANDLERS, accounts),  # credentials, notification settings
        **bind(accounts_requests.HANDLERS, accounts),  # key and pair requests decided (/auth)
    }
