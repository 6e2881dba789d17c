"""Known worlds over REST (accounts-auth.md §7.6-7.11): /auth/known-clients list and forget, a
world's cross-world settings (PATCH), its linked credential (PATCH .../credential), its auto-start
flag (PATCH .../auto-start) and its users (GET .../users).

Every route takes a session (`SO`) and reaches only the caller's worlds: another account's world
answers what an unknown one answers (404 `Known client not found`). The `{id}` of these routes is
the world's clientId (our known worlds have no separate row id). Checks in the reference's
order: the id (400 `Invalid client ID`), the world (404), then the body (400 `Invalid JSON
body` for anything that is not the route's JSON object of the right types). The values are
stored by `worlds.py`; the headless auto-start reads them there.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.protocol import Close, valid_id
from vttrelay.relay.accounts import keys, worlds
from vttrelay.relay.accounts.bodies import answer, stamp, strict_body
from vttrelay.relay.accounts.keys_http import path_id, token_view
from vttrelay.relay.accounts.sessions import SO, Signed, signed_in
from vttrelay.relay.accounts.worlds import ALL_TARGETS, MAX_PER_HOUR, MAX_TARGETS, WorldSettings
from vttrelay.relay.core import error
from vttrelay.relay.routes import ALL_SCOPES, Route
from vttrelay.relay.store import KnownClient, TokenRecord

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

BAD_BODY: Final = "Invalid JSON body"
NOT_FOUND: Final = "Known client not found"
MAX_CREDENTIAL_ID: Final = 64


def world_view(
    world: KnownClient,
    active: str | None,
    tokens: list[TokenRecord],
    settings: WorldSettings | None,
) -> dict[str, Any]:
    """One known world; `active` is the id of the token its live socket authenticated with
    (None when it is offline)."""
    meta = world.metadata
    texts = ("worldId", "worldTitle", "systemId", "systemTitle", "systemVersion", "foundryVersion")
    changed = settings.updated_at if settings and settings.updated_at else 0.0
    return {
        "id": world.client_id,
        "clientId": world.client_id,
        **{name: str(meta.get(name) or "") for name in texts},
        "customName": str(meta.get("customName") or ""),
        "lastSeenAt": stamp(world.last_seen),
        "isOnline": active is not None,
        "autoStartOnRemoteRequest": bool(settings and settings.auto_start),
        "credentialId": settings.credential_id if settings else None,
        # null-able lists, as the reference answers an empty one
        "allowedTargetClients": (list(settings.allowed_targets) or None) if settings else None,
        "remoteScopes": (list(settings.remote_scopes) or None) if settings else None,
        "remoteRequestsPerHour": settings.remote_per_hour if settings else 0,
        "createdAt": stamp(world.first_seen),
        "updatedAt": stamp(max(world.last_seen, changed)),
        # a legacy token bound to no world is listed too when it is the live one
        "tokens": [
            token_view(t)
            for t in tokens
            if t.client_id == world.client_id or (active and not t.client_id and t.id == active)
        ],
        # the reference's 0 when no socket is live (or its token is no longer listed)
        "activeTokenId": active if active and any(t.id == active for t in tokens) else 0,
    }


def _listing(state: AccountDeps, account: str) -> list[dict[str, Any]]:
    store = state.store
    known = store.known_clients(account)
    tokens = keys.live_tokens(store, account)
    settings = worlds.account_world_settings(store, account)
    live = {w.client_id: w.token_id for w in state.registry.for_account(account)}
    return [world_view(w, live.get(w.client_id), tokens, settings.get(w.client_id)) for w in known]


async def h_list_worlds(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    return answer({"clients": await asyncio.to_thread(_listing, state, signed.account)})


async def h_forget_world(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    client_id = path_id(request, "Invalid client ID")
    signed = await signed_in(request, state, SO)
    revoked = await asyncio.to_thread(keys.forget_world, state.store, signed.account, client_id)
    if revoked is None:
        raise error(404, NOT_FOUND)
    closed = 0
    for token_id in revoked:
        closed += await state.registry.close_token(
            token_id, Close.AUTH_PROTOCOL, "Client removed by owner"
        )
    return answer({"disconnected": closed > 0, "message": "Known client removed", "success": True})


async def _world(request: web.Request, state: AccountDeps) -> tuple[Signed, str]:
    """The caller and the clientId of the world the path names: 400 for an id no world can
    have, 404 when it is not one of the caller's worlds."""
    signed = await signed_in(request, state, SO)
    client_id = path_id(request, "Invalid client ID")
    world = await asyncio.to_thread(keys.account_world, state.store, signed.account, client_id)
    if world is None:
        raise error(404, NOT_FOUND)
    return signed, client_id


def _strings(body: dict[str, Any], name: str) -> list[str] | None:
    """A list-of-strings field: None when absent or null, 400 `Invalid JSON body` when it is
    not a list of strings or has more than MAX_TARGETS entries."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise error(400, BAD_BODY)
    if len(value) > MAX_TARGETS:
        raise error(400, f"'{name}' has at most {MAX_TARGETS} entries")
    return [v for v in value if v]


def _targets(values: list[str], own: str, known: set[str]) -> list[str]:
    """The targets minus the world itself; each other than "*" must be a world of the account."""
    kept = [t for t in values if t != own]
    for target in kept:
        if target != ALL_TARGETS and target not in known:
            raise error(400, f'allowedTargetClient "{target[:64]}" not found in your known clients')
    return kept


def _scopes(values: list[str]) -> list[str]:
    for scope in values:
        if scope not in ALL_SCOPES:
            raise error(400, f'unknown scope "{scope[:64]}"')
    return values


def _per_hour(body: dict[str, Any]) -> int | None:
    value = body.get("remoteRequestsPerHour")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise error(400, BAD_BODY)
    if not 0 <= value <= MAX_PER_HOUR:
        raise error(400, f"remoteRequestsPerHour must be between 0 and {MAX_PER_HOUR}")
    return int(value)


async def h_world_settings(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed, client_id = await _world(request, state)
    body = await strict_body(request, route, BAD_BODY)
    targets, scopes = _strings(body, "allowedTargetClients"), _strings(body, "remoteScopes")
    per_hour = _per_hour(body)
    if targets:
        known = await asyncio.to_thread(worlds.account_client_ids, state.store, signed.account)
        targets = _targets(targets, client_id, known)
    if scopes:
        scopes = _scopes(scopes)
    changed = await asyncio.to_thread(
        worlds.set_cross_world, state.store, signed.account, client_id, targets, scopes, per_hour
    )
    if not changed:  # forgotten meanwhile
        raise error(404, NOT_FOUND)
    return answer({"success": True})


async def h_world_credential(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed, client_id = await _world(request, state)
    body = await strict_body(request, route, BAD_BODY)
    value = body.get("credentialId")
    if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
        raise error(400, BAD_BODY)
    credential_id = None if value is None else str(value)
    if credential_id is not None and (
        len(credential_id) > MAX_CREDENTIAL_ID or not valid_id(credential_id)
    ):
        raise error(404, worlds.Linked.NO_CREDENTIAL.value)
    linked = await asyncio.to_thread(
        worlds.link_credential, state.store, signed.account, client_id, credential_id
    )
    if linked is not worlds.Linked.LINKED:
        raise error(404, linked.value)
    return answer({"success": True})


async def h_world_auto_start(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed, client_id = await _world(request, state)
    body = await strict_body(request, route, BAD_BODY)
    enabled = body.get("enabled", False)
    if not isinstance(enabled, bool):
        raise error(400, BAD_BODY)
    if not await asyncio.to_thread(
        worlds.set_auto_start, state.store, signed.account, client_id, enabled
    ):
        raise error(404, NOT_FOUND)
    return answer({"success": True})


async def h_world_users(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    client_id = path_id(request, "Invalid client ID")
    listed = await asyncio.to_thread(worlds.known_users, state.store, signed.account, client_id)
    if listed is None:
        raise error(404, NOT_FOUND)
    return answer(
        {
            "users": [
                {
                    "id": f"{u.client_id}:{u.user_id}",
                    "knownClientId": u.client_id,
                    "userId": u.user_id,
                    "name": u.name,
                    "role": u.role,
                    "createdAt": stamp(u.created_at),
                    "updatedAt": stamp(u.updated_at),
                }
                for u in listed
            ]
        }
    )


HANDLERS: Final = {
    "auth_list_worlds": h_list_worlds,
    "auth_forget_world": h_forget_world,
    "auth_world_settings": h_world_settings,
    "auth_world_credential": h_world_credential,
    "auth_world_auto_start": h_world_auto_start,
    "auth_world_users": h_world_users,
}
