"""The `/ws/api` protocol as data (endpoints-beyond-seed §13): its close codes, the reference
relay's texts, the frame types a client may send and the route each names, and the pure helpers
that read a client's frames and word the answers. The socket itself is `ws_api.ClientSocket`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

import orjson

from vttrelay.relay import core
from vttrelay.relay.core import RelayError
from vttrelay.relay.routes import ROUTES, WS_ONLY_ROUTES, Route

# Close codes of /ws/api (the reference relay's; clients reconnect after all but AUTH_REFUSED)
AUTH_REFUSED: Final = 4002  # no, bad or late auth frame, or the key/world refused
FELL_BEHIND_CLOSE: Final = 1013  # try again later: the socket did not read its events in time
KEY_REFUSED: Final = 1008  # policy: the key stopped working (revoked, expired)
SHUTTING_DOWN: Final = 1001  # going away: the relay stops

# The reference relay's texts (endpoints-beyond-seed §13.2-13.3)
TOO_MANY_IN_FLIGHT: Final = "Too many concurrent requests; try again shortly"
INVALID_JSON: Final = "Invalid JSON"
MISSING_TYPE: Final = 'Missing "type" field'
MISSING_REQUEST_ID: Final = 'Missing "requestId" field for request messages'
TOO_MANY_SUBSCRIPTIONS: Final = "Maximum event subscriptions reached for this client"
NO_LONGER_CONNECTED: Final = "Foundry client is no longer connected"
INTERNAL_ERROR: Final = "Internal error"
REMOTE_REQUEST: Final = "remote-request"
REMOTE_RESPONSE: Final = "remote-response"

# The core's texts as the reference words them on this socket (its statuses are kept).
WS_TEXTS: Final = {
    "Invalid client ID": NO_LONGER_CONNECTED,
    core.WORLD_GONE: NO_LONGER_CONNECTED,
}
AUTH_TEXTS: Final = {
    "Invalid client ID": "Invalid clientId",
    "Invalid API key for this client ID": "API key does not match the specified clientId",
    "No connected Foundry clients found": "No connected Foundry client found",
}


def _flat(route: Route) -> Route:
    """The route with every parameter read from the frame's top level."""
    params = tuple(dataclasses.replace(p, sources=("body",)) for p in route.params)
    return dataclasses.replace(route, params=params)


# World action -> route (with flat parameters), and channel -> its SSE route.
ACTION_ROUTES: Final = {
    r.action: _flat(r) for r in (*ROUTES, *WS_ONLY_ROUTES) if r.mode == "forward" and r.action
}
CHANNEL_ROUTES: Final = {r.channel: _flat(r) for r in ROUTES if r.mode == "stream" and r.channel}
CONTROL_TYPES: Final = ("subscribe", "unsubscribe", "ping")
SUPPORTED_TYPES: Final = sorted(ACTION_ROUTES) + list(CONTROL_TYPES) + [REMOTE_REQUEST]


def subscription_params(frame: dict[str, Any], client_id: str) -> dict[str, Any]:
    """A subscribe frame's filters as its SSE route names them (`chatType` is the chat `type`,
    since `type` names the frame itself)."""
    params = {k: v for k, v in frame.items() if k not in ("type", "channel", "lastEventId")}
    if "chatType" in params:
        params["type"] = params.pop("chatType")
    params["clientId"] = client_id
    return params


def request_id(frame: dict[str, Any]) -> str:
    """The caller's `requestId`, echoed by every control reply ("" when it sent none)."""
    request_id = frame.get("requestId")
    return request_id if isinstance(request_id, str) else ""


def remote_failure(request_id: str, exc: RelayError) -> dict[str, Any]:
    """A refused `remote-request` as the reference answers it."""
    return {
        "error": exc.message,
        "requestId": request_id,
        "status": exc.status,
        "success": False,
        "type": REMOTE_RESPONSE,
    }


def parse(data: Any) -> dict[str, Any] | None:
    """A frame's JSON object, or None (not JSON, or not an object: `Invalid JSON`)."""
    try:
        frame = orjson.loads(data)
    except (orjson.JSONDecodeError, TypeError):
        return None
    return frame if isinstance(frame, dict) else None
