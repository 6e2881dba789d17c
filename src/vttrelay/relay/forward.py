"""The REST adapter of the request core: an HTTP request in, an HTTP response out.

`forward(request, route, gate)` serves every forward route and reads top to bottom:
`admit_request` (the key from `x-api-key`, the `?clientId=` it names, rate, scope) ->
`read_params` (query, body, path) -> `gate.forward` (target world, system check, frame, the
world's reply) -> the reply's bytes as the body, 400 iff it carries a top-level string `error`,
else 200. Any `core.RelayError` on the way becomes `error_response` (its status and JSON body),
in `app.relay_middleware` for every route; SSE (`events/sse.py`) uses `admit_request` and
`read_params` too. Each gets the request core's `core.Gate`, nothing else of the relay.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import orjson
from aiohttp import web
from multidict import CIMultiDict

from vttrelay.relay import core
from vttrelay.relay.core import Gate, RelayError, error
from vttrelay.relay.link.pending import Reply
from vttrelay.relay.params import ParamError, body_limit, extract, parse_body
from vttrelay.relay.routes import ROUTES, Route
from vttrelay.relay.store import KeyRecord

API_KEY_HEADER: Final = "x-api-key"
BODY_TOO_LARGE: Final = "Request body too large"  # wire-protocol §6, as the global limit's
IMAGE_SIZE_HEADERS: Final = {"X-Image-Width": "width", "X-Image-Height": "height"}
# On every HTTP response (wire-protocol §8). WebSocket upgrades need none: browsers apply no CORS
# to them.
CORS_HEADERS: Final = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Credentials": "true",
    "Access-Control-Expose-Headers": "Content-Disposition, Content-Type, X-Image-Width, "
    "X-Image-Height",
}
_CORS_ORIGIN: Final = "Access-Control-Allow-Origin"


def add_cors(headers: CIMultiDict[str]) -> None:
    """Add the CORS headers to a response's headers (unless it has its own). The middleware
    calls it for every response a handler returns; a handler that sends its headers itself (SSE,
    MCP) calls it first. Done here rather than in aiohttp's `on_response_prepare` signal: the
    signal's dispatch cost ~5,000 instructions per request (valgrind, `GET /api/health` and the
    forwarded mix, bench/RESULTS.md "Issue 9: the hot path, last pass")."""
    if _CORS_ORIGIN not in headers:
        headers.extend(CORS_HEADERS)


def _takes_client_id(route: Route) -> bool:
    return any(p.name == "clientId" for p in route.params)


# Computed once for the route table (its routes live as long as the process, so their ids are
# never reused); another Route (a test's) is looked at each time.
_CLIENT_ID_ROUTES = {id(route): _takes_client_id(route) for route in ROUTES}


def route_takes_client_id(route: Route) -> bool:
    takes = _CLIENT_ID_ROUTES.get(id(route))
    return _takes_client_id(route) if takes is None else takes


def admit_request(request: web.Request, route: Route, gate: Gate) -> core.Admission:
    """`Gate.admit` for an HTTP request: the `x-api-key` header and the `?clientId=` it names
    (an awaitable of the key when the rate budget is shared: see `Gate.admit`)."""
    client_id = request.query.get("clientId") if route_takes_client_id(route) else None
    return gate.admit(request.headers.get(API_KEY_HEADER), route.scope, client_id)


async def read_body(request: web.Request, route: Route) -> bytes:
    """The request body, or RelayError 413 as soon as it is past what the route's parameters can
    need (`params.body_limit`) or the relay's body limit (`--max-body-mb`), the ceiling."""
    limit = min(body_limit(route), request.client_max_size)
    length = request.content_length
    if length is not None and length > limit:
        raise error(413, BODY_TOO_LARGE)
    if length is not None:
        content = request.content
        if content.is_eof():  # came whole with the headers (most calls): taken without an await
            return content.read_nowait()
        return await request.read()
    chunks = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise error(413, BODY_TOO_LARGE)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_params(request: web.Request, route: Route) -> dict[str, Any]:
    """The route's parameters from this request, or RelayError 400 (413: too large)."""
    body = (
        parse_body(request.method, await read_body(request, route))
        if request.method != "GET"
        else {}
    )
    try:
        return extract(route, request.query, body, request.match_info)
    except ParamError as exc:
        raise error(exc.status, exc.message, **exc.extra) from None


def reply_response(reply: Reply) -> web.Response:
    """The world's frame, byte for byte, as the HTTP body."""
    return web.Response(
        body=reply.raw, status=400 if reply.is_error else 200, content_type="application/json"
    )


def image_response(reply: Reply) -> web.Response:
    """GET /scene/image and GET /sheet: the picture the world sent (`imageData`, a base64 data
    URL, and `mimeType`, in the frame's `data` or at its top level, as the module's sheet reply)
    as the body, with X-Image-Width/-Height; an error reply as it is."""
    if reply.is_error:
        return reply_response(reply)
    data = reply.frame.get("data")
    data = data if isinstance(data, dict) and "imageData" in data else reply.frame
    encoded = data.get("imageData")
    if not isinstance(encoded, str):
        raise error(502, "The world sent no image")
    header, _, payload = encoded.rpartition(",")
    mime = data.get("mimeType") or header.removeprefix("data:").split(";")[0] or "image/png"
    try:
        body = base64.b64decode(payload, validate=True)
    except ValueError:
        raise error(502, "The world sent no image") from None
    headers = {k: str(data[f]) for k, f in IMAGE_SIZE_HEADERS.items() if f in data}
    return web.Response(body=body, content_type=str(mime), headers=headers)


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def sorted_json_response(body: Any, status: int = 200) -> web.Response:
    """A JSON body the relay writes itself where the reference's Go encoder did: keys sorted
    (the file and sheet routes' answers)."""
    return web.Response(
        body=orjson.dumps(body, option=orjson.OPT_SORT_KEYS),
        status=status,
        content_type="application/json",
    )


def module_error_response(reply: Reply) -> web.Response | None:
    """A world reply with a non-empty string `error` as the reference's custom handlers answer
    it: 400 `{"error", "requestId"}` (other keys dropped); None for any other reply."""
    problem = reply.frame.get("error") if reply.is_error else None
    if not isinstance(problem, str) or not problem:
        return None
    return sorted_json_response({"error": problem, "requestId": reply.frame.get("requestId")}, 400)


def error_response(exc: RelayError) -> web.Response:
    """A refused call as HTTP: its status, JSON body and headers (`Retry-After`)."""
    return web.Response(
        body=exc.json(), status=exc.status, content_type="application/json", headers=exc.headers
    )


async def forward_image(request: web.Request, route: Route, gate: Gate) -> web.Response:
    """GET /scene/image (endpoints-beyond-seed §9.6): forwarded like any route, answered with
    the picture's bytes (`image_response`)."""
    key = await core.admitted(admit_request(request, route, gate))
    params = await read_params(request, route)
    return image_response(await gate.forward(key, route, params))


async def forward(request: web.Request, route: Route, gate: Gate) -> web.Response:
    """Handle one forward route."""
    key = admit_request(request, route, gate)
    if not isinstance(key, KeyRecord):  # core.admitted inline: no coroutine on the hot path
        key = await key
    params = await read_params(request, route)
    return reply_response(await gate.forward(key, route, params))
