"""The browser-pairing and API-key-request endpoints (endpoints-beyond-seed §12) and the two
small pages their URLs open.

`POST /auth/pair-request` and `GET /auth/pair-request/{code}/status` serve the unmodified
module's "Pair" and "Upgrade" buttons; `POST /auth/key-request`, its status and
`POST /auth/key-request/exchange` let an app ask for an API key. All are public and answered
with CORS (by the app's middleware). Handlers here only check the body, apply the per-IP limits
and shape the answer; the records and their rules live in `pair_requests.py` and
`key_requests.py`, which the CLI calls to approve or refuse. `GET /pair/{code}` and
`GET /approve/{code}`, the pages the module and apps open, are the dashboard's
(`vttrelay.dashboard.pages.requests`): they use the per-IP budget of unknown codes below
(`check_misses`, `count_miss`).

Two per-IP limits, both answered `429` with the reference's text:
- the reference's "key request" limit (`key_request_rate_limit` per 15 minutes) on creating a
  request and on the web flow's exchange;
- beyond the reference, a budget of unknown codes (`code_miss_limit` per 15 minutes) on the two
  status polls and the two pages. Only a code that does not exist costs a token, so a module or
  app polling its own request every few seconds is never refused, while guessing codes (a
  device-flow key request's code is 6 characters and its first status read after approval
  carries the key) gets a handful of tries per quarter hour. Once the budget is spent every
  lookup from that IP is refused, known code or not, so a 429 says nothing about a code.
  The reference leaves the status polls unlimited (key) or charges every poll to the shared
  limit (pair: the module then gives up about a minute after asking).
Both are counted in the relay's `Counters` (`peer_limits`): scaled out, one budget per IP over
all instances.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from vttrelay import protocol
from vttrelay.relay import peer_limits
from vttrelay.relay.accounts import key_requests, pair_requests
from vttrelay.relay.accounts.approvals import Answer
from vttrelay.relay.accounts.key_requests import KeyAsk, KeyRequest
from vttrelay.relay.accounts.pair_requests import PairAsk, PairRequest
from vttrelay.relay.core import error
from vttrelay.relay.forward import read_body
from vttrelay.relay.routes import ALL_SCOPES, Route

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps
    from vttrelay.relay.backends.ports import Counters
    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.relay")

RATE_WINDOW = 15 * 60.0  # the key-request limit counts requests per IP over 15 minutes
MAX_TEXT = 512  # longest name, title, version or id accepted
MAX_DESCRIPTION = 2000
MAX_URL = 2048
MAX_ITEMS = 64  # most scopes, worlds or targets in one request
INVALID_BODY = "Invalid request body"
TOO_MANY = "Too many key request attempts from this IP, please try again later"


# Answers ---------------------------------------------------------------------------------------


def sorted_json(body: Any, status: int = 200) -> web.Response:
    """A JSON answer with its keys sorted, as the reference relay (Go) writes them."""
    return web.Response(
        body=orjson.dumps(body, option=orjson.OPT_SORT_KEYS),
        status=status,
        content_type="application/json",
    )


def rfc3339(ts: float) -> str:
    """Unix seconds as `2026-07-02T01:58:57Z`."""
    moment = datetime.fromtimestamp(ts, UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def public_base(request: web.Request, base_path: str = "") -> str:
    """The relay's base URL as the caller reached it: the origin (as a trusted proxy forwarded
    it, `forwarded.py`) and the configured path prefix (`RelayConfig.base_path`)."""
    return f"{request.scheme}://{request.host}{base_path}"


async def _check_rate(request: web.Request, state: AccountDeps) -> None:
    limit = state.config.key_request_rate_limit
    if not await peer_limits.take(
        state.counters, peer_limits.REQUESTS, request, limit, RATE_WINDOW
    ):
        raise error(429, TOO_MANY)


async def check_misses(request: web.Request, config: RelayConfig, counters: Counters) -> None:
    """Refuse any code lookup from an IP that has spent its budget of unknown codes, or once all
    callers together have spent theirs (`code_miss_global_limit`)."""
    if not await peer_limits.has_token(
        counters, peer_limits.MISSES, request, config.code_miss_limit, RATE_WINDOW
    ) or not await peer_limits.has_token_named(
        counters, peer_limits.ALL_MISSES, config.code_miss_global_limit, RATE_WINDOW
    ):
        raise error(429, TOO_MANY)


async def count_miss(request: web.Request, config: RelayConfig, counters: Counters) -> None:
    """Charge the IP, and all callers together, one token of the unknown-code budget (a lookup
    found nothing)."""
    await peer_limits.take(
        counters, peer_limits.MISSES, request, config.code_miss_limit, RATE_WINDOW
    )
    await peer_limits.take_named(
        counters, peer_limits.ALL_MISSES, config.code_miss_global_limit, RATE_WINDOW
    )


async def _body(request: web.Request, route: Route) -> dict[str, Any]:
    """The JSON object of the body, read up to the route's own limit (`forward.read_body`)."""
    try:
        body = orjson.loads(await read_body(request, route))
    except orjson.JSONDecodeError:
        raise error(400, INVALID_BODY) from None
    if not isinstance(body, dict):
        raise error(400, INVALID_BODY)
    return body


# Body rules (pure) -----------------------------------------------------------------------------
# The reference decodes bodies into typed structs: a field of the wrong JSON type makes the whole
# body invalid, `null` counts as absent, unknown fields are ignored.


def _text(body: dict[str, Any], name: str, limit: int = MAX_TEXT) -> str:
    value = body.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise error(400, INVALID_BODY)
    if len(value) > limit:
        raise error(400, f"{name} is too long (at most {limit} characters)")
    return value.strip()


def _texts(body: dict[str, Any], name: str) -> tuple[str, ...]:
    value = body.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise error(400, INVALID_BODY)
    if len(value) > MAX_ITEMS or any(len(v) > MAX_TEXT for v in value):
        raise error(400, f"{name} is too long (at most {MAX_ITEMS} items of {MAX_TEXT} chars)")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def _ids(ids: tuple[str, ...], message: str = protocol.INVALID_CLIENT_ID) -> tuple[str, ...]:
    """`ids`, each an identifier a world may have (`protocol.valid_id`), else 400 `message`."""
    for value in ids:
        if not protocol.valid_id(value):
            raise error(400, message)
    return ids


def _scopes(scopes: tuple[str, ...]) -> tuple[str, ...]:
    for scope in scopes:
        if scope not in ALL_SCOPES:
            raise error(400, f"Invalid scope: {scope}")
    return scopes


def parse_pair_ask(body: dict[str, Any]) -> PairAsk:
    """The body of `POST /auth/pair-request` (§12.2), checked."""
    upgrade = body.get("upgradeOnly")
    if upgrade is not None and not isinstance(upgrade, bool):
        raise error(400, INVALID_BODY)
    ask = PairAsk(
        world_id=_text(body, "worldId"),
        world_title=_text(body, "worldTitle"),
        system_id=_text(body, "systemId"),
        system_title=_text(body, "systemTitle"),
        system_version=_text(body, "systemVersion"),
        foundry_version=_text(body, "foundryVersion"),
        client_id=_text(body, "clientId"),
        remote_scopes=_texts(body, "requestedRemoteScopes"),
        target_clients=tuple(c for c in _texts(body, "requestedTargetClients") if c != "*"),
        upgrade_only=bool(upgrade),
    )
    if not ask.world_id:
        raise error(400, "worldId is required")
    _ids((ask.world_id,), protocol.INVALID_WORLD_ID)
    _ids((ask.client_id,) if ask.client_id else ())
    _ids(ask.target_clients)
    _scopes(ask.remote_scopes)
    return ask


def url_problem(url: str) -> str | None:
    """Why `url` may not be an app's or callback URL (§12.4), or None if it may."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return "invalid URL"
    if parts.scheme not in ("http", "https"):
        return "URL must use http or https scheme"
    host = parts.hostname or ""
    if not host:
        return "URL must have a non-empty host"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None  # a name, not an address literal
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified:
        return "URL must not target a private or loopback address"
    return None


def parse_key_ask(body: dict[str, Any]) -> KeyAsk:
    """The body of `POST /auth/key-request` (§12.4), checked."""
    limit = body.get("suggestedMonthlyLimit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise error(400, INVALID_BODY)
    ask = KeyAsk(
        app_name=_text(body, "appName"),
        scopes=_texts(body, "scopes"),
        app_description=_text(body, "appDescription", MAX_DESCRIPTION),
        app_url=_text(body, "appUrl", MAX_URL),
        callback_url=_text(body, "callbackUrl", MAX_URL),
        client_ids=_texts(body, "clientIds"),
        suggested_monthly_limit=limit,
        suggested_expiry=_text(body, "suggestedExpiry"),
    )
    if not ask.app_name or not ask.scopes:
        raise error(400, "appName and scopes are required")
    _scopes(ask.scopes)
    _ids(ask.client_ids)
    for name, url in (("appUrl", ask.app_url), ("callbackUrl", ask.callback_url)):
        problem = url and url_problem(url)
        if problem:
            raise error(400, f"Invalid {name}: {problem}")
    return ask


# Handlers (route.handler names) ----------------------------------------------------------------

LocalHandler = Callable[[web.Request, Route, "AccountDeps"], Awaitable[web.Response]]


def _created(made: PairRequest | KeyRequest, ttl: float, **fields: Any) -> web.Response:
    """The 201 answer to a new request: its code and expiry, and the kind's own fields."""
    return sorted_json(
        {"code": made.code, "expiresAt": rfc3339(made.expires_at), "expiresIn": int(ttl), **fields},
        status=201,
    )


async def _status(
    request: web.Request, state: AccountDeps, read: Callable[[RelayStore, str], Answer]
) -> web.Response:
    """A status poll: the answer of `read` (pair_requests.pair_status or key_status) for the path's
    code, off the event loop; an unknown code counts as a miss against the asker (guessing codes
    is throttled)."""
    await check_misses(request, state.config, state.counters)
    status, body = await asyncio.to_thread(read, state.store, request.match_info["code"])
    if status == 404:
        await count_miss(request, state.config, state.counters)
    return sorted_json(body, status)


async def h_pair_request(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await _check_rate(request, state)
    ask = parse_pair_ask(await _body(request, route))
    ttl = state.config.pair_request_ttl
    made = await asyncio.to_thread(
        pair_requests.create_pair_request, state.store, ask, request.remote or "", ttl
    )
    kind = "upgrade" if ask.upgrade_only else "pair"
    log.info(
        "%s request from world %r (%s): decide it on the dashboard or with `vttrelay pair "
        "requests` and `vttrelay pair approve CODE`",
        kind, ask.world, made.peer,
    )  # fmt: skip
    return _created(
        made,
        ttl,
        pairUrl=f"{public_base(request, state.config.base_path)}/pair/{made.code}",
        upgradeOnly=ask.upgrade_only,
    )


async def h_pair_status(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    return await _status(request, state, pair_requests.pair_status)


async def h_key_request(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await _check_rate(request, state)
    ask = parse_key_ask(await _body(request, route))
    ttl = state.config.key_request_ttl
    made = await asyncio.to_thread(
        key_requests.create_key_request, state.store, ask, request.remote or "", ttl
    )
    log.info(
        "API key request from app %r (%s) for %s: decide it on the dashboard or with "
        "`vttrelay keys requests` and `vttrelay keys approve CODE`",
        ask.app_name, made.peer, ",".join(ask.scopes),
    )  # fmt: skip
    return _created(
        made,
        ttl,
        approvalUrl=f"{public_base(request, state.config.base_path)}/approve/{made.code}",
    )


async def h_key_status(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    return await _status(request, state, key_requests.key_status)


async def h_key_exchange(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await _check_rate(request, state)
    code = (await _body(request, route)).get("code")
    if not isinstance(code, str) or not code.strip():
        raise error(400, "Code is required")
    if len(code) > MAX_TEXT:
        raise error(404, "Invalid exchange code")
    status, body = await asyncio.to_thread(key_requests.exchange_key, state.store, code)
    return sorted_json(body, status)


HANDLERS: dict[str, LocalHandler] = {
    "pair_request": h_pair_request,
    "pair_status": h_pair_status,
    "key_request": h_key_request,
    "key_status": h_key_status,
    "key_exchange": h_key_exchange,
}
