"""The relay's own local handlers (the route table's `handler` names served by the relay itself:
health, status, clients, key info, pairing, the active probe, self-unpair, OpenAPI, /docs,
/metrics) and `LOCAL_HANDLERS`, the table that maps every local handler name to its function
(these and the files, sheets, sessions and accounts modules' own tables)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from vttrelay import __version__, protocol
from vttrelay.protocol import Close
from vttrelay.relay import files, openapi, peer_limits, sessions_api, sheets
from vttrelay.relay.accesslog import escape
from vttrelay.relay.accounts import activity_http as accounts_activity
from vttrelay.relay.accounts import http as accounts_http
from vttrelay.relay.accounts import keys, pairing
from vttrelay.relay.accounts import keys_http as accounts_keys
from vttrelay.relay.accounts import requests_http as accounts_requests
from vttrelay.relay.accounts import settings_http as accounts_settings
from vttrelay.relay.accounts import worlds_http as accounts_worlds
from vttrelay.relay.core import admitted, error
from vttrelay.relay.forward import admit_request, forward_image, json_response, read_body
from vttrelay.relay.link.handshake import public_url
from vttrelay.relay.metrics import metrics_response
from vttrelay.relay.routes import Route
from vttrelay.relay.state import RelayState
from vttrelay.relay.store import PairingError

log = logging.getLogger("vttrelay.relay")

PAIR_WINDOW = 15 * 60.0


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
    origin = body.get("serverOrigin")
    if isinstance(origin, str) and (url := public_url(origin)):
        metadata["publicUrl"] = url  # the Foundry page's origin, as /relay records it
    # The ids connected now: a world never pairs as one of them (client_ids.py)
    account = await asyncio.to_thread(keys.pairing_code_account, state.store, code.strip())
    live = {w.client_id for w in state.registry.for_account(account)} if account else set()
    if existing is not None and state.registry.get(existing) is not None:
        live.add(existing)
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
    **accounts_activity.HANDLERS,  # an account's audit logs and activity feed (/auth)
    **accounts_settings.HANDLERS,  # stored credentials, notification settings (/auth)
    **accounts_requests.HANDLERS,  # key and pair requests decided with a session (/auth)
}
