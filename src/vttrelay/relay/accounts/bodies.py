"""Reading /auth request bodies and writing their answers the way the reference does.

Bodies come in the reference's three styles (accounts-auth.md §0.2): `map` (optional; empty is
`{}`; not a JSON object is 400 `invalid JSON: ...`; a string field is read only when it is a
JSON string), `strict` (the route's fixed 400 text for any decoding problem or a wrong type) and
`loose` (decoding problems ignored). Every body is read up to its route's limit
(`forward.read_body`: 413 past it) and every string field has a maximum length (400 `'<name>'
is too long ...`). Answers are JSON with sorted keys (Go's map order), timestamps RFC 3339 UTC
with seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

import orjson
from aiohttp import web

from vttrelay.relay.core import error
from vttrelay.relay.forward import read_body, sorted_json_response
from vttrelay.relay.routes import Route

MAX_FIELD: Final = 2048  # characters of a string field unless a route says otherwise


answer = sorted_json_response  # a JSON answer with sorted keys


def stamp(ts: float | None) -> str | None:
    """Unix seconds as `2026-07-02T01:58:57Z`; None stays None."""
    if ts is None:
        return None
    moment = datetime.fromtimestamp(ts, UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


async def map_body(request: web.Request, route: Route) -> dict[str, Any]:
    """A `map` body: `{}` when empty, else a JSON object (400 `invalid JSON: ...`)."""
    raw = await read_body(request, route)
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise error(400, f"invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise error(400, f"invalid JSON: cannot unmarshal {type(body).__name__} into an object")
    return body


async def strict_body(
    request: web.Request, route: Route, text: str, *, empty_ok: bool = False
) -> dict[str, Any]:
    """A `strict` body: a JSON object or 400 `text` (an empty body too unless `empty_ok`)."""
    raw = await read_body(request, route)
    if not raw.strip():
        if empty_ok:
            return {}
        raise error(400, text)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise error(400, text) from None
    if not isinstance(body, dict):
        raise error(400, text)
    return body


async def loose_body(request: web.Request, route: Route) -> dict[str, Any]:
    """A `loose` body: a JSON object, else `{}`."""
    raw = await read_body(request, route)
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}


def text(body: dict[str, Any], name: str, limit: int = MAX_FIELD) -> str:
    """A `map` string field: the string, or "" when absent or not a string; 400 past `limit`."""
    value = body.get(name)
    if not isinstance(value, str):
        return ""
    if len(value) > limit:
        raise error(400, f"'{name}' is too long (at most {limit} characters)")
    return value


def strict_text(body: dict[str, Any], name: str, bad: str, limit: int = MAX_FIELD) -> str | None:
    """A `strict` string field: None when absent or null, 400 `bad` when not a string."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise error(400, bad)
    if len(value) > limit:
        raise error(400, f"'{name}' is too long (at most {limit} characters)")
    return value


def bearer(request: web.Request) -> str | None:
    """The token of `Authorization: Bearer <token>` (exactly that prefix), or None."""
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer ") or len(header) <= len("Bearer "):
        return None
    return header[len("Bearer ") :]
