"""Approving an app's key request and a world's pair request with a session (accounts-auth.md
§11, endpoints-beyond-seed §12.3-12.4): GET /auth/key-request/{code}, POST .../approve,
POST .../deny, and the same for /auth/pair-request/{code}. The request is decided for the
caller's account (the records and rules are `pair_requests.py` and `key_requests.py`, which
the CLI and the dashboard use too). A pair approval grants what the world asked for (an
upgrade: the cross-world permissions it asked for, `worlds.grant_cross_world`); settings sent
in the approval's body are not applied."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

import orjson
from aiohttp import web

from vttrelay.relay.accounts import key_requests, keys, pair_requests
from vttrelay.relay.accounts.bodies import answer, map_body, stamp
from vttrelay.relay.accounts.key_fields import key_changes
from vttrelay.relay.accounts.sessions import SO, signed_in
from vttrelay.relay.core import error
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

MAX_CODE: Final = 16


def _code(request: web.Request, missing: str) -> str:
    code = request.match_info["code"]
    if not code or len(code) > MAX_CODE or not code.isalnum():
        raise error(404, missing)
    return code.upper()


async def h_key_request(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await signed_in(request, state, SO)
    code = _code(request, "Key request not found")
    found = await asyncio.to_thread(key_requests.get_key_request, state.store, code)
    if found is None:
        raise error(404, "Key request not found")
    ask = found.ask
    return answer(
        {
            "code": found.code,
            "appName": ask.app_name,
            "appDescription": ask.app_description,
            "appUrl": ask.app_url,
            "callbackUrl": ask.callback_url,
            "requestedScopes": list(ask.scopes),
            "requestedClientIds": list(ask.client_ids),
            "suggestedMonthlyLimit": ask.suggested_monthly_limit,
            "suggestedExpiry": ask.suggested_expiry,
            "status": found.state(),
            "expiresAt": stamp(found.expires_at),
        }
    )


async def h_approve_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    code = _code(request, "Key request not found")
    body = await map_body(request, route)
    wanted: dict[str, Any] = {}
    for name, field in (
        ("scopes", "scopes"),
        ("clientIds", "scopedClientIds"),
        ("monthlyLimit", "monthlyLimit"),
        ("expiresAt", "expiresAt"),
    ):
        if body.get(name) is not None:
            wanted[field] = body[name]
    changes = key_changes(wanted, creating=False)
    scopes = tuple(orjson.loads(changes["scopes"])) if "scopes" in changes else None
    worlds = tuple(orjson.loads(changes["client_ids"])) if "client_ids" in changes else None
    approval = await asyncio.to_thread(
        key_requests.approve_key_request,
        state.store,
        code,
        signed.account,
        scopes,
        worlds,
        changes.get("expires_at"),
    )
    if changes.get("monthly_limit"):
        await asyncio.to_thread(
            keys.update_key,
            state.store,
            signed.account,
            approval.key_id,
            {"monthly_limit": changes["monthly_limit"]},
        )
    reply: dict[str, Any] = {
        "keyId": approval.key_id,
        "scopes": list(approval.scopes),
        "success": True,
    }
    if approval.exchange_code:
        reply["exchangeCode"] = approval.exchange_code
    return answer(reply)


async def h_deny_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await signed_in(request, state, SO)
    code = _code(request, "Key request not found")
    await asyncio.to_thread(key_requests.refuse_key_request, state.store, code)
    return answer({"message": "Key request denied", "success": True})


async def h_pair_request(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    code = _code(request, "Pair request not found")
    found = await asyncio.to_thread(pair_requests.get_pair_request, state.store, code)
    if found is None:
        raise error(404, "Pair request not found")
    ask = found.ask
    worlds = await asyncio.to_thread(state.store.known_clients, signed.account)
    live = {w.client_id for w in state.registry.for_account(signed.account)}
    return answer(
        {
            "code": found.code,
            "clientId": ask.client_id,
            "worldId": ask.world_id,
            "worldTitle": ask.world_title,
            "systemId": ask.system_id,
            "systemTitle": ask.system_title,
            "systemVersion": ask.system_version,
            "foundryVersion": ask.foundry_version,
            "requestedRemoteScopes": list(ask.remote_scopes),
            "requestedTargetClients": list(ask.target_clients),
            "upgradeOnly": ask.upgrade_only,
            "status": found.state(),
            "expiresAt": stamp(found.expires_at),
            "knownClients": [
                {
                    "id": w.client_id,
                    "clientId": w.client_id,
                    "worldId": str(w.metadata.get("worldId") or ""),
                    "worldTitle": str(w.metadata.get("worldTitle") or ""),
                    "isOnline": w.client_id in live,
                }
                for w in worlds
            ],
        }
    )


async def h_approve_pair(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    code = _code(request, "Pair request not found")
    approval = await asyncio.to_thread(
        pair_requests.approve_pair_request, state.store, code, signed.account
    )
    return answer({"success": True, **({"upgraded": True} if approval.upgraded else {})})


async def h_deny_pair(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await signed_in(request, state, SO)
    code = _code(request, "Pair request not found")
    await asyncio.to_thread(pair_requests.refuse_pair_request, state.store, code)
    return answer({"message": "Pair request denied", "success": True})


HANDLERS: Final = {
    "auth_key_request": h_key_request,
    "auth_approve_key": h_approve_key,
    "auth_deny_key": h_deny_key,
    "auth_pair_request": h_pair_request,
    "auth_approve_pair": h_approve_pair,
    "auth_deny_pair": h_deny_pair,
}
