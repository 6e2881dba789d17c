"""The `/relay` handshake's decisions, without I/O: what a world's first frame and token allow.

A world connects to `/relay?id=<clientId>&<metadata>`, sends `{"type":"auth","token":...}` first,
and is registered under the account its connection token belongs to (wire-protocol §2). Each
step that can refuse it is a function here returning a `Refusal` (the close code and reason) or
what the next step needs; `gateway.WorldGateway` runs them in order around the awaits (the token
look-up, the directory's claim). A token connects only as the client id it was issued for, else
1008 (DESIGN §6 item 8); an unknown token is 1008, a malformed or late auth frame 4002, a
transient failure 1011 (never 1008/4002, after which the module forgets its token).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from vttrelay import protocol
from vttrelay.protocol import Close
from vttrelay.relay.store import KnownClient, TokenRecord

MISSING_ID: Final = "Missing client ID"
TOKEN_IN_URL: Final = (
    "Token URL parameter is not supported. Send auth as the first WebSocket message."
)
TOKEN_NOT_FOR_ID: Final = "Connection token not issued for this client ID"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a world socket is closed before `auth-success`: a `protocol.Close` code and reason."""

    code: int
    reason: str


AUTH_TIMEOUT: Final = Refusal(Close.AUTH_PROTOCOL, "Authentication timeout")
INVALID_AUTH: Final = Refusal(Close.AUTH_PROTOCOL, "Invalid auth message")
AUTH_FAILED: Final = Refusal(Close.AUTH_FAILED, "Authentication failed")
NOT_FOR_ID: Final = Refusal(Close.AUTH_FAILED, TOKEN_NOT_FOR_ID)
IP_NOT_ALLOWED: Final = Refusal(Close.AUTH_PROTOCOL, "IP address not allowed")
DUPLICATE: Final = Refusal(Close.DUPLICATE, "Client ID already connected")
# 4005, not 4002: the module keeps its token and tries again, so the world comes back once its
# operator enables the account
ACCOUNT_DISABLED: Final = Refusal(Close.TRY_AGAIN, protocol.ACCOUNT_DISABLED)
TRY_AGAIN: Final = Refusal(Close.INTERNAL_ERROR, "Server error, try again")

AUTH_SUCCESS: Final = orjson.dumps(protocol.AuthSuccessFrame(type=protocol.AUTH_SUCCESS))


def auth_token(data: bytes | str) -> str | None:
    """The token of a text frame that is a well-formed `AuthFrame`, else None (`INVALID_AUTH`)."""
    try:
        frame = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(frame, dict) or frame.get("type") != protocol.AUTH:
        return None
    token = frame.get("token")
    return token if isinstance(token, str) and token else None


def check_token(
    record: TokenRecord | None, client_id: str, reserved: Mapping[str, str | None], host: str
) -> Refusal | None:
    """Whether the token found for the auth frame admits this socket (None: it does): known,
    issued for `client_id` (`token_fits`), its account not disabled, and the peer `host` in
    its IP allow-list."""
    if record is None:
        return AUTH_FAILED
    if not token_fits(record, client_id, reserved):
        return NOT_FOR_ID
    if record.account_disabled:
        return ACCOUNT_DISABLED
    if not ip_allowed(record.ip_allow, host):
        return IP_NOT_ALLOWED
    return None


def token_fits(record: TokenRecord, client_id: str, reserved: Mapping[str, str | None]) -> bool:
    """May this token connect as `client_id`? Only as the id it was issued for (the module always
    sends that id; DESIGN §6 item 8), and a reserved id only with the one token it is reserved
    for (`RelayConfig.reserved_client_ids`: the embedded world's)."""
    if record.client_id != client_id:
        return False
    return client_id not in reserved or reserved[client_id] == record.id


def ip_allowed(allow: str, host: str) -> bool:
    """Is `host` in a token's comma-separated allow-list of addresses and networks (empty: all)?"""
    if not allow.strip():
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in allow.split(","):
        entry = entry.strip()
        if not entry:
            continue
        try:
            if addr in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def public_url(origin: str | None) -> str | None:
    """The Origin header, if it is a bare http(s) origin of at most 512 characters."""
    if not origin or len(origin) > 512:
        return None
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        return None
    return origin


def world_metadata(
    query: Mapping[str, str], shown_peer: str, origin: str | None, now_ms: int
) -> dict[str, Any]:
    """What the relay shows of a world (`/clients`, the dashboard): the `/relay` query's
    metadata keys, the peer address, the page's origin and the connection's times."""
    metadata: dict[str, Any] = {
        k: value for k in protocol.WORLD_QUERY_KEYS if k != "id" and (value := query.get(k))
    }
    metadata["ipAddress"] = shown_peer
    url = public_url(origin)
    if url:
        metadata["publicUrl"] = url
    metadata["connectedSince"] = metadata["lastSeen"] = now_ms
    return metadata


def connected_before(known: KnownClient | None) -> bool:
    """Did this world ever connect? Every connection records its peer address (`ipAddress`,
    `remember_client`); pairing and minting a token record a world without one."""
    return known is not None and "ipAddress" in known.metadata


def stored_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata the store keeps of a world (not its connection's times)."""
    return {k: v for k, v in metadata.items() if k not in ("connectedSince", "lastSeen")}
