"""GET /sheet (files-sheet-sessions §2.1, §2.4): the relay's side of a sheet picture.

The parameters as the reference relay sends them: `uuid` always (`""` when absent), `selected`
and `actor` only when given, `true` only for exactly `true`; `format` (default `png`), `quality`
(a number, else 0.9) and `scale` (a number, else 1) always. Forwarded like any route (the key's
allowed worlds and forced `userId` apply, which the reference's handler skips); the answer is
the picture's bytes with `X-Image-Width`/`X-Image-Height` (`forward.image_response`), a world
error 400 `{"error", "requestId"}`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.relay import core
from vttrelay.relay.forward import (
    admit_request,
    image_response,
    module_error_response,
    read_params,
)
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.core import Gate


def _number(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def sheet_frame_params(params: dict[str, Any]) -> dict[str, Any]:
    """The reference's frame values from the request's parameters."""
    wire: dict[str, Any] = {k: params[k] for k in ("clientId", "userId") if k in params}
    wire["uuid"] = params.get("uuid") or ""
    for flag in ("selected", "actor"):
        if flag in params:
            wire[flag] = params[flag] is True or params[flag] == "true"
    wire["format"] = params.get("format") or "png"
    wire["quality"] = _number(params.get("quality"), 0.9)
    wire["scale"] = _number(params.get("scale"), 1.0)
    return wire


async def h_sheet(request: web.Request, route: Route, gate: Gate) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, gate))
    params = await read_params(request, route)
    reply = await gate.forward(key, route, sheet_frame_params(params))
    return module_error_response(reply) or image_response(reply)


HANDLERS: Final = {"sheet": h_sheet}
