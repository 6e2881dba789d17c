"""The fields of a scoped API key as /auth/api-keys takes them (accounts-auth.md §6), checked
and turned into the store's columns: pure functions, no I/O.

`key_changes(body, creating)` returns `{column: value}` for the fields present (on PATCH an
absent field is kept; `null` clears it). Both forms the reference's clients send are accepted
for `monthlyLimit` (a number or a string holding one, §14 Q2), and 0 means no limit (Q3). Unlike
the reference, a field of the wrong type or an unparsable value is refused with 400 and a
message that names it, instead of being silently ignored, and every list and string is bounded.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

import orjson

from vttrelay.protocol import valid_id
from vttrelay.relay.core import RelayError, error
from vttrelay.relay.routes import ALL_SCOPES

MAX_NAME: Final = 128
MAX_SCOPES: Final = 64
MAX_WORLDS: Final = 100
MAX_USER_ID: Final = 128
MAX_LIMIT: Final = 2**53 - 1
MAX_RATE: Final = 1_000_000  # calls per minute


def _bad(name: str, wanted: str) -> RelayError:
    return error(400, f"'{name}' must be {wanted}")


def _scopes(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise _bad("scopes", "an array of scope names")
    if len(value) > MAX_SCOPES:
        raise _bad("scopes", f"at most {MAX_SCOPES} scope names")
    if not value:
        raise error(400, "At least one scope is required")
    for scope in value:
        if scope not in ALL_SCOPES:
            raise error(400, f"Invalid scope: {scope[:64]}")
    return list(dict.fromkeys(value))


def _worlds(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        raise _bad("scopedClientIds", "an array of client ids")
    worlds = [w for w in value if w]
    if len(worlds) > MAX_WORLDS or not all(valid_id(w) for w in worlds):
        raise _bad("scopedClientIds", f"at most {MAX_WORLDS} client ids")
    return list(dict.fromkeys(worlds))


def _user(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_USER_ID:
        raise _bad(name, f"a user id of at most {MAX_USER_ID} characters")
    return value


def _user_ids(value: Any) -> str:
    if value is None:
        return "{}"
    if not isinstance(value, dict) or len(value) > MAX_WORLDS:
        raise _bad("scopedUserIds", f"an object of at most {MAX_WORLDS} clientId: userId pairs")
    pairs: dict[str, str] = {}
    for world, user in value.items():
        if not valid_id(world) or not isinstance(user, str) or len(user) > MAX_USER_ID:
            raise _bad("scopedUserIds", "an object of clientId: userId strings")
        if user:
            pairs[world] = user
    return orjson.dumps(pairs).decode()


def _count(name: str, value: Any, maximum: int) -> int | None:
    """A whole number of calls from a number or a string holding one; 0 and null: none."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 16:
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise _bad(name, f"a whole number from 0 to {maximum}")
    return value or None


def parse_time(value: Any) -> float | None:
    """An RFC 3339 time as unix seconds (a time without a zone is UTC); null: none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 64:
        raise _bad("expiresAt", "an RFC 3339 time such as 2026-12-31T23:59:59Z")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise _bad("expiresAt", "an RFC 3339 time such as 2026-12-31T23:59:59Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _name(value: Any) -> str | None:
    if not isinstance(value, str):
        raise _bad("name", "a string")
    if len(value) > MAX_NAME:
        raise _bad("name", f"at most {MAX_NAME} characters")
    return value.strip() or None


def key_changes(body: dict[str, Any], creating: bool) -> dict[str, Any]:
    """The store columns to set from a create or PATCH body (checked in the reference's order:
    name, scopes, then the rest). Creating: `name` and `scopes` are required."""
    changes: dict[str, Any] = {}
    if creating or "name" in body:
        name = _name(body.get("name")) if body.get("name") is not None else None
        if name is None and creating:
            raise error(400, "Name is required")
        if name is not None:
            changes["name"] = name
    if creating or "scopes" in body:
        if creating and not body.get("scopes"):
            raise error(400, "At least one scope is required")
        changes["scopes"] = orjson.dumps(_scopes(body.get("scopes"))).decode()
    if "scopedClientIds" in body or "scopedClientId" in body:
        worlds = _worlds(body.get("scopedClientIds"))
        single = body.get("scopedClientId")
        if single not in (None, "") and not worlds:
            if not valid_id(single):
                raise _bad("scopedClientId", "a client id")
            worlds = [single]
        changes["client_ids"] = orjson.dumps(worlds).decode()
    if "scopedUserId" in body:
        changes["user_id"] = _user("scopedUserId", body["scopedUserId"])
    if "scopedUserIds" in body:
        changes["user_ids"] = _user_ids(body["scopedUserIds"])
    if "monthlyLimit" in body:
        changes["monthly_limit"] = _count("monthlyLimit", body["monthlyLimit"], MAX_LIMIT)
    if "ratePerMinute" in body:
        changes["rate_per_minute"] = _count("ratePerMinute", body["ratePerMinute"], MAX_RATE)
    if "expiresAt" in body:
        changes["expires_at"] = parse_time(body["expiresAt"])
    if "enabled" in body and not creating:
        if not isinstance(body["enabled"], bool):
            raise _bad("enabled", "true or false")
        changes["enabled"] = int(body["enabled"])
    return changes
