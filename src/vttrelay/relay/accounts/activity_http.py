"""An account's audit logs over REST (accounts-auth.md §10): GET /auth/connection-logs (its
worlds' connections), GET /auth/remote-request-logs (the cross-world requests,
`remote_logs.py`) and GET /auth/activity, one feed newest first of

- `connection`: each world connection on /relay (the connection log, `eventSubtype` "connect");
- `remote_request`: each cross-world request (`remote_logs.py`);
- `api_request`: each API call of the account's keys (the relay's activity log, `activity.py`:
  our addition; `action` is the route, `description` method, route, status and duration);
- `module_event`: the reference's module reports (execute-js, macro, settings changes sent with
  `module-notify`); this relay takes no `module-notify`, so there are none.

Filters: `type`, `world` (a clientId; cross-world rows match on source or target), `action`
(the cross-world action or the API route; not applied to connections), `success` (`true` or
`false`; cross-world and API rows only), `since`/`until` (RFC 3339; bad values are ignored, as
in the reference), `limit` (1-200, else 50) and `offset`. Unlike the reference (§14 Q11), the
pages are right for any offset and `total` counts every matching event. The work is bounded:
the feed reads at most the account's newest `MAX_CALLS` API calls and the logs' kept rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.relay import activity
from vttrelay.relay.accounts import keys, remote_logs
from vttrelay.relay.accounts.bodies import answer, stamp
from vttrelay.relay.accounts.keys_http import page
from vttrelay.relay.accounts.sessions import SO, signed_in
from vttrelay.relay.core import error
from vttrelay.relay.routes import Route
from vttrelay.relay.store import CONNECTION_LOG_ROWS, RelayStore

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

TYPES: Final = ("connection", "remote_request", "module_event", "api_request")
MAX_CALLS: Final = 20_000  # API calls one /auth/activity reads at most (the newest)
MAX_FILTER: Final = 256


Page = Callable[[RelayStore, str, int, int], tuple[int, list[dict[str, Any]]]]


async def _logs(
    request: web.Request, state: AccountDeps, read: Page, view: Callable[[Any], dict[str, Any]]
) -> web.Response:
    """One page of one of the caller's logs: `{limit, offset, total, logs}` (limit 1-200, else
    50; `total` the full count)."""
    signed = await signed_in(request, state, SO)
    limit, offset = page(request)
    total, rows = await asyncio.to_thread(read, state.store, signed.account, limit, offset)
    logs = [view(row) for row in rows]
    return answer({"limit": limit, "offset": offset, "total": total, "logs": logs})


def _connection(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "clientId": row["client_id"],
        "tokenName": row["token_name"],
        "ipAddress": row["ip_address"],
        "worldId": row["world_id"],
        "worldTitle": row["world_title"],
        "systemId": row["system_id"],
        "foundryVersion": row["foundry_version"],
        "createdAt": stamp(row["created_at"]),
    }


def _remote_request(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "sourceClientId": row["source_client_id"],
        "sourceTokenId": row["source_token_id"],
        "targetClientId": row["target_client_id"],
        "action": row["action"],
        "success": bool(row["success"]),
        "errorMessage": row["error_message"],
        "sourceIp": row["source_ip"],
        "createdAt": stamp(row["created_at"]),
    }


async def h_connection_logs(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    return await _logs(request, state, keys.connection_logs, _connection)


async def h_remote_request_logs(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    return await _logs(request, state, remote_logs.page, _remote_request)


def _time(text: str) -> float | None:
    """An RFC 3339 time as Unix seconds; None when it is not one (the filter is then ignored)."""
    if not text or len(text) > 64:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def _event(at: float, **fields: Any) -> dict[str, Any]:
    """One feed entry: the empty optional fields left out, `_at` kept for sorting."""
    kept = {k: v for k, v in fields.items() if v not in ("", None)}
    return {**kept, "createdAt": stamp(at), "_at": at}


def _connections(store: RelayStore, account: str) -> list[dict[str, Any]]:
    _, rows = keys.connection_logs(store, account, CONNECTION_LOG_ROWS, 0)
    return [
        _event(
            row["created_at"],
            id=row["id"],
            type="connection",
            eventSubtype="connect",
            clientId=row["client_id"],
            worldTitle=row["world_title"],
            tokenName=row["token_name"],
            ipAddress=row["ip_address"],
            flagged=False,
            userId=account,
        )
        for row in rows
    ]


def _remote(store: RelayStore, account: str) -> list[dict[str, Any]]:
    return [
        _event(
            row["created_at"],
            id=row["id"],
            type="remote_request",
            clientId=row["source_client_id"],
            targetClientId=row["target_client_id"],
            action=row["action"],
            success=bool(row["success"]),
            errorMessage=row["error_message"],
            ipAddress=row["source_ip"],
            userId=account,
        )
        for row in remote_logs.every(store, account)
    ]


def _calls(store: RelayStore, account: str, since: float | None) -> list[dict[str, Any]]:
    return [
        _event(
            call.at,
            id=f"call_{int(call.at * 1e6)}_{i}",
            type="api_request",
            clientId=call.world,
            action=call.route,
            success=call.status < 400,
            tokenName=call.key_name,
            ipAddress=call.peer,
            description=f"{call.method} {call.route} {call.status} ({call.ms:.0f} ms)",
            userId=account,
        )
        for i, call in enumerate(activity.recent(store.db, account, MAX_CALLS, since))
    ]


def _matches(event: dict[str, Any], world: str, action: str, success: bool | None) -> bool:
    if world and world not in (event.get("clientId"), event.get("targetClientId")):
        return False
    kind = event["type"]
    if action and kind != "connection" and event.get("action") != action:
        return False
    return not (success is not None and kind != "connection" and event["success"] is not success)


def feed(store: RelayStore, account: str, kind: str, query: dict[str, str]) -> list[dict[str, Any]]:
    """Every matching event of the account, newest first (see the module docstring)."""
    since, until = _time(query.get("since", "")), _time(query.get("until", ""))
    events: list[dict[str, Any]] = []
    if kind in ("", "connection"):
        events += _connections(store, account)
    if kind in ("", "remote_request"):
        events += _remote(store, account)
    if kind in ("", "api_request"):
        events += _calls(store, account, since)
    success = {"true": True, "false": False}.get(query.get("success", ""))
    world, action = query.get("world", ""), query.get("action", "")
    kept = [
        e
        for e in events
        if _matches(e, world, action, success)
        and (since is None or e["_at"] >= since)
        and (until is None or e["_at"] <= until)
    ]
    kept.sort(key=lambda e: -e["_at"])
    return kept


async def h_activity(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, SO)
    query = {name: request.query.get(name, "") for name in
             ("type", "world", "action", "success", "since", "until")}  # fmt: skip
    for name, value in query.items():
        if len(value) > MAX_FILTER:
            raise error(400, f"'{name}' is too long (at most {MAX_FILTER} characters)")
    kind = query["type"]
    if kind and kind not in TYPES:
        raise error(400, f"type must be one of {', '.join(TYPES)}")
    limit, offset = page(request)
    events = await asyncio.to_thread(feed, state.store, signed.account, kind, query)
    shown = [{k: v for k, v in e.items() if k != "_at"} for e in events[offset : offset + limit]]
    return answer({"events": shown, "limit": limit, "offset": offset, "total": len(events)})


HANDLERS: Final = {
    "auth_connection_logs": h_connection_logs,
    "auth_remote_request_logs": h_remote_request_logs,
    "auth_activity": h_activity,
}
