"""An account's audit logs over REST (accounts-auth.md §10): GET /auth/connection-logs (its
worlds' connections), GET /auth/remote-request-logs (the cross-world requests,
`remote_logs.py`) and GET /auth/activity, one feed newest first of

- `connection`: each world connection on /relay (the connection log, `eventSubtype` "connect");
- `remote_request`: each cross-world request (`remote_logs.py`);
- `api_request`: each API call of the account's keys (the relay's activity log, `activity.py`:
  our addition; `action` is the route, `description` method, route, status and duration);
- `module_event`: what the account's worlds report with `module-notify` (`module_events.py`;
  `action` the event type, `actor`, `description` the details, `worldTitle`).

Filters: `type`, `world` (a clientId; cross-world rows match on source or target), `action`
(the cross-world action, the module event type or the API route; not applied to connections),
`success` (`true` or `false`; cross-world and API rows only, the others pass),
`since`/`until` (RFC 3339; bad values are ignored, as in the reference), `limit` (1-200, else
50) and `offset`. Unlike the reference (§14 Q11), the
pages are right for any offset and `total` counts every matching event. The work is bounded:
the feed reads at most the account's newest `MAX_CALLS` API calls and the logs' kept rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from aiohttp import web

from vttrelay.relay import activity
from vttrelay.relay.accounts import keys, module_events, remote_logs
from vttrelay.relay.accounts.bodies import answer, stamp
from vttrelay.relay.accounts.keys_http import page
from vttrelay.relay.accounts.sessions import SO, signed_in
from vttrelay.relay.core import error
from vttrelay.relay.routes import Route
from vttrelay.relay.store import CONNECTION_LOG_ROWS, RelayStore

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

TYPES: Final = ("connection", "remote_request", "module_event", "api_request")
MAX_CALLS: Final = 2_000  # API calls one /auth/activity reads at most (the newest): one batch
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


class Fact(NamedTuple):
    """One event as far as the filters and the order need it; made into its answer (`_shown`)
    only when it is on the page asked for."""

    at: float
    kind: str
    client: str
    target: str
    action: str
    success: bool | None  # None: a connection or a module event (no success)
    source: Any  # the log row or the `activity.Activity` it comes from


def _facts(store: RelayStore, account: str, kind: str, since: float | None) -> list[Fact]:
    facts: list[Fact] = []
    if kind in ("", "connection"):
        _, rows = keys.connection_logs(store, account, CONNECTION_LOG_ROWS, 0)
        facts += [
            Fact(r["created_at"], "connection", r["client_id"], "", "", None, r) for r in rows
        ]
    if kind in ("", "remote_request"):
        facts += [
            Fact(r["created_at"], "remote_request", r["source_client_id"], r["target_client_id"],
                 r["action"], bool(r["success"]), r)
            for r in remote_logs.every(store, account)
        ]  # fmt: skip
    if kind in ("", "module_event"):
        facts += [
            Fact(r["created_at"], "module_event", r["client_id"], "", r["event_type"], None, r)
            for r in module_events.every(store, account)
        ]
    if kind in ("", "api_request"):
        facts += [
            Fact(c.at, "api_request", c.world, "", c.route, c.status < 400, c)
            for c in activity.recent(store.db, account, MAX_CALLS, since)
        ]
    return facts


def _shown(fact: Fact, account: str) -> dict[str, Any]:
    """A feed entry as the reference writes it: the empty optional fields left out."""
    row = fact.source
    fields: dict[str, Any]
    if fact.kind == "connection":
        fields = {"id": row["id"], "eventSubtype": "connect", "worldTitle": row["world_title"],
                  "tokenName": row["token_name"], "ipAddress": row["ip_address"],
                  "flagged": False}  # fmt: skip
    elif fact.kind == "remote_request":
        fields = {"id": row["id"], "targetClientId": fact.target, "action": fact.action,
                  "success": fact.success, "errorMessage": row["error_message"],
                  "ipAddress": row["source_ip"]}  # fmt: skip
    elif fact.kind == "module_event":
        fields = {"id": row["id"], "worldTitle": row["world_title"], "action": fact.action,
                  "actor": row["actor"], "description": row["description"]}  # fmt: skip
    else:
        fields = {
            "id": f"call_{int(fact.at * 1e6)}_{row.key_id}",
            "action": fact.action,
            "success": fact.success,
            "tokenName": row.key_name,
            "ipAddress": row.peer,
            "description": f"{row.method} {row.route} {row.status} ({row.ms:.0f} ms)",
        }
    fields.update(type=fact.kind, clientId=fact.client, userId=account, createdAt=stamp(fact.at))
    return {k: v for k, v in fields.items() if v not in ("", None)}


def _matches(fact: Fact, world: str, action: str, success: bool | None) -> bool:
    if world and world not in (fact.client, fact.target):
        return False
    if fact.kind == "connection":  # `action` and `success` do not apply
        return True
    if action and fact.action != action:
        return False
    return success is None or fact.success is None or fact.success is success


def feed(
    store: RelayStore, account: str, kind: str, query: dict[str, str], offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """How many events of the account match, and the page `offset`..`offset + limit` of them,
    newest first (see the module docstring)."""
    since, until = _time(query.get("since", "")), _time(query.get("until", ""))
    success = {"true": True, "false": False}.get(query.get("success", ""))
    world, action = query.get("world", ""), query.get("action", "")
    kept = [
        f
        for f in _facts(store, account, kind, since)
        if _matches(f, world, action, success)
        and (since is None or f.at >= since)
        and (until is None or f.at <= until)
    ]
    kept.sort(key=lambda f: -f.at)
    return len(kept), [_shown(f, account) for f in kept[offset : offset + limit]]


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
    total, shown = await asyncio.to_thread(
        feed, state.store, signed.account, kind, query, offset, limit
    )
    return answer({"events": shown, "limit": limit, "offset": offset, "total": total})


HANDLERS: Final = {
    "auth_connection_logs": h_connection_logs,
    "auth_remote_request_logs": h_remote_request_logs,
    "auth_activity": h_activity,
}
