"""Keys and connection tokens over REST (accounts-auth.md §6, §7.1-7.4): /auth/api-keys
(create, list, PATCH, delete, regenerate), /auth/connection-tokens (mint a pairing code, list,
PATCH, revoke). The known worlds' routes: `worlds_http.py`; the logs: `activity_http.py`.

Every route takes a session (`SO`: verified, not disabled); an API key is refused (401), as in
the reference. Every read and change is scoped to the caller's account: another account's id
answers exactly what an unknown id answers. Deliberate differences: keys are stored as hashes
and shown once (the list shows the first 8 characters); ids are strings; revoking a token of
another account or an unknown one is 404 (§14 Q1); a changed key takes effect at once on this
instance and within the key cache's ttl on others (Q4).
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.protocol import Close, valid_id
from vttrelay.relay.accounts import keys
from vttrelay.relay.accounts.bodies import answer, loose_body, map_body, stamp, strict_body
from vttrelay.relay.accounts.key_fields import key_changes
from vttrelay.relay.accounts.sessions import SO, signed_in
from vttrelay.relay.core import error
from vttrelay.relay.routes import Route
from vttrelay.relay.store import PAIRING_TTL, KeyRecord, TokenRecord

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

MAX_ID: Final = 64
MAX_TOKEN_NAME: Final = 128
MAX_IPS: Final = 64


def path_id(request: web.Request, invalid: str) -> str:
    value = request.match_info["id"]
    if not value or len(value) > MAX_ID or not valid_id(value):
        raise error(400, invalid)
    return value


def key_view(key: KeyRecord) -> dict[str, Any]:
    """The fields every key answer shares."""
    worlds = list(key.client_ids)
    return {
        "id": key.id,
        "name": key.name,
        "scopes": list(key.scopes),
        "scopedClientId": worlds[0] if len(worlds) == 1 else "",
        "scopedClientIds": worlds or None,
        "scopedUserId": key.user_id or "",
        "scopedUserIds": dict(key.user_ids) or None,
        "monthlyLimit": key.monthly_limit or 0,
        "ratePerMinute": key.rate_per_minute,
        "expiresAt": stamp(key.expires_at),
        "enabled": key.enabled,
    }


# API keys ------------------------------------------------------------------------------------


async def h_create_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    changes = key_changes(await map_body(request, route), creating=True)
    made = await asyncio.to_thread(keys.create_key, state.store, signed.account, changes)
    if made is None:
        raise error(400, f"At most {keys.MAX_KEYS} API keys per account")
    key_id, secret = made
    key = await asyncio.to_thread(keys.account_key, state.store, signed.account, key_id)
    assert key is not None
    return answer({**key_view(key), "key": secret, "createdAt": stamp(key.created_at)}, 201)


async def h_list_keys(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    listed = await asyncio.to_thread(state.store.list_keys, signed.account)
    return answer(
        {
            "keys": [
                {
                    **key_view(key),
                    "key": (key.key_prefix or "*" * 8) + "...",
                    "requestsThisMonth": key.month_requests,
                    "isExpired": key.expired(),
                    "lastUsedAt": stamp(key.last_used_at),
                    "createdAt": stamp(key.created_at),
                    "updatedAt": stamp(key.updated_at or key.created_at),
                }
                for key in listed
            ]
        }
    )


async def h_update_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    key_id = path_id(request, "Invalid key ID")
    if await asyncio.to_thread(keys.account_key, state.store, signed.account, key_id) is None:
        raise error(404, "API key not found")
    changes = key_changes(await map_body(request, route), creating=False)
    key = await asyncio.to_thread(keys.update_key, state.store, signed.account, key_id, changes)
    if key is None:
        raise error(404, "API key not found")
    await state.keys.refresh()
    return answer({**key_view(key), "updatedAt": stamp(key.updated_at)})


async def h_delete_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    key_id = path_id(request, "Invalid key ID")
    signed = await signed_in(request, state, SO)
    if not await asyncio.to_thread(keys.delete_key, state.store, signed.account, key_id):
        raise error(404, "API key not found")
    await state.keys.refresh()
    return answer({"message": "API key deleted", "success": True})


async def h_regenerate_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    key_id = path_id(request, "Invalid key ID")
    secret = await asyncio.to_thread(keys.regenerate_key, state.store, signed.account, key_id)
    if secret is None:
        raise error(404, "API key not found")
    await state.keys.refresh()
    return answer({"key": secret})


# Connection tokens ---------------------------------------------------------------------------


def token_view(token: TokenRecord) -> dict[str, Any]:
    return {
        "id": token.id,
        "name": token.name,
        "clientId": token.client_id,
        "source": "dashboard",
        "allowedIps": token.ip_allow,
        "createdAt": stamp(token.created_at),
    }


async def h_mint_code(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    client_id = (await loose_body(request, route)).get("clientId")
    if client_id is not None and client_id != "":
        if not isinstance(client_id, str) or not valid_id(client_id):
            raise error(404, "clientId not found in your known clients")
        world = await asyncio.to_thread(keys.account_world, state.store, signed.account, client_id)
        if world is None:
            raise error(404, "clientId not found in your known clients")
    code = await asyncio.to_thread(
        keys.pairing_code, state.store, signed.account, PAIRING_TTL, client_id or None
    )
    if code is None:
        raise error(429, f"At most {keys.MAX_OPEN_CODES} pairing codes may wait to be used")
    expires = stamp(time.time() + PAIRING_TTL)
    return answer({"code": code, "expiresAt": expires, "expiresIn": int(PAIRING_TTL)}, 201)


def page(request: web.Request) -> tuple[int, int]:
    """`limit` (1-200, else 50) and `offset` (>= 0, else 0) of a list."""
    try:
        limit = int(request.query.get("limit", "50"))
    except ValueError:
        limit = 50
    try:
        offset = max(0, int(request.query.get("offset", "0")))
    except ValueError:
        offset = 0
    return (50 if limit <= 0 else min(limit, 200)), min(offset, 10**9)


async def h_list_tokens(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    limit, offset = page(request)
    tokens = await asyncio.to_thread(keys.live_tokens, state.store, signed.account)
    shown = tokens[offset : offset + limit]
    return answer({"tokens": [token_view(t) for t in shown], "total": len(tokens)})


def _ip_list(value: str) -> str:
    entries = [e.strip() for e in value.split(",") if e.strip()]
    if len(entries) > MAX_IPS:
        raise error(400, f"Invalid allowedIps: at most {MAX_IPS} entries")
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise error(400, f'Invalid allowedIps: invalid IP or CIDR: "{entry[:64]}"') from None
    return ",".join(entries)


async def h_update_token(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    token_id = path_id(request, "Invalid token ID")
    if await asyncio.to_thread(keys.account_token, state.store, signed.account, token_id) is None:
        raise error(404, "Token not found")
    body = await strict_body(request, route, "Invalid JSON body")
    name, ips = body.get("name"), body.get("allowedIps")
    if (name is not None and not isinstance(name, str)) or (
        ips is not None and not isinstance(ips, str)
    ):
        raise error(400, "Invalid JSON body")
    if name is not None and len(name) > MAX_TOKEN_NAME:
        raise error(400, f"'name' is too long (at most {MAX_TOKEN_NAME} characters)")
    if ips is not None and len(ips) > 4096:
        raise error(400, "'allowedIps' is too long (at most 4096 characters)")
    ip_allow = _ip_list(ips) if ips is not None else None
    changed = await asyncio.to_thread(
        keys.update_token, state.store, signed.account, token_id, name or None, ip_allow
    )
    if not changed:
        raise error(404, "Token not found")
    return answer({"success": True})


async def h_revoke_token(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    token_id = path_id(request, "Invalid token ID")
    signed = await signed_in(request, state, SO)
    token = await asyncio.to_thread(keys.account_token, state.store, signed.account, token_id)
    if token is None or not await asyncio.to_thread(state.store.revoke_token_id, token_id):
        raise error(404, "Token not found")
    closed = await state.registry.close_token(
        token_id, Close.AUTH_PROTOCOL, "Connection token revoked"
    )
    return answer(
        {"disconnectedClients": closed, "message": "Connection token revoked", "success": True}
    )


HANDLERS: Final = {
    "auth_create_key": h_create_key,
    "auth_list_keys": h_list_keys,
    "auth_update_key": h_update_key,
    "auth_delete_key": h_delete_key,
    "auth_regenerate_scoped_key": h_regenerate_key,
    "auth_mint_code": h_mint_code,
    "auth_list_tokens": h_list_tokens,
    "auth_update_token": h_update_token,
    "auth_revoke_token": h_revoke_token,
}
