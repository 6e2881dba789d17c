"""The relay's one request middleware (`relay_middleware`): CORS, body limits, keys read off the
loop, errors as responses, the access-log line, `/metrics` and the activity record."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import StreamReader, web
from aiohttp.typedefs import Middleware

from vttrelay.relay.accesslog import (
    RequestRecord,
    describe_error,
    escape,
    logged_path,
    request_id,
)
from vttrelay.relay.accounts.key_cache import TOO_MANY_UNKNOWN_KEYS
from vttrelay.relay.core import RelayError, error
from vttrelay.relay.forward import (
    API_KEY_HEADER,
    BODY_TOO_LARGE,
    CORS_HEADERS,
    add_cors,
    error_response,
    json_response,
)
from vttrelay.relay.state import RelayState

log = logging.getLogger("vttrelay.relay")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

PREFLIGHT_HEADERS = {
    **CORS_HEADERS,
    "Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS, PATCH",
    "Access-Control-Allow-Headers": "Accept, Authorization, Content-Type, X-API-Key",
    "Access-Control-Max-Age": "300",
}
BODY_TIMEOUT = "Request body not received in time"  # 408 after RelayConfig.body_timeout
INTERNAL_ERROR = "Internal server error"  # the body of a 500 (a bug; logged in one line)


def relay_middleware(state: RelayState) -> Middleware:
    """The one middleware (one per request costs CPU, bench/RESULTS.md): CORS preflight and
    the CORS headers of every response (`forward.add_cors`), the body limit (413) and time
    limit (408, `body_timeout`), an API key not in the key cache yet read off the event loop
    (`KeyCache.load`), a `core.RelayError` from any handler as its HTTP response, the request's
    count in `/metrics` (route, method, status, seconds) and its `RequestRecord`, a tuple of what
    is at hand, handed to the access log (one line per request) and, for a route of the route
    table, to the activity log (one append; `activity.py` completes and writes them in batches
    in its writer thread)."""
    max_body = state.config.max_body_bytes
    body_timeout = state.config.body_timeout
    keys = state.keys
    cached = keys.cached
    observe = state.metrics.observe
    clock = time.perf_counter
    wall = time.time
    api_routes = state.api_routes
    log_line = state.access.record if state.access.enabled else None
    record = state.activity.add if state.activity.enabled else None
    recording = log_line is not None or record is not None
    numbers = itertools.count(1)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = clock()
        number = next(numbers)
        status = 500
        response: web.StreamResponse | None = None
        secret: str | None = None
        try:
            if request.method == "OPTIONS":
                status = 200
                return web.Response(status=200, headers=PREFLIGHT_HEADERS)
            secret = request.headers.get(API_KEY_HEADER)
            # a key not seen yet: read in a thread, then cached (an address's unknown ones:
            # a budget per minute, KeyCache)
            if (
                secret
                and keys.missing(secret)
                and not await keys.load(secret, request.remote or "")
            ):
                raise error(429, TOO_MANY_UNKNOWN_KEYS)
            length = request.content_length
            if length is not None and length > max_body:
                raise error(413, BODY_TOO_LARGE)
            # a body still incomplete after body_timeout fails the handler's read (BodyTimeout);
            # one that came whole with the headers (most) needs no timer, nor does no body
            watchdog = None
            if request.body_exists and not request.content.is_eof():
                loop = asyncio.get_running_loop()
                watchdog = loop.call_later(body_timeout, _body_late, request.content)
            try:
                response = await handler(request)
            except web.HTTPRequestEntityTooLarge:
                raise error(413, BODY_TOO_LARGE) from None
            except BodyTimeout:
                status = 408
                response = error_response(error(408, BODY_TIMEOUT))
                response.force_close()  # the rest of the body is not waited for
                return response
            finally:
                if watchdog is not None:
                    watchdog.cancel()
            status = response.status
            return response
        except RelayError as exc:  # the REST adapter of the request core (core.py)
            status = exc.status
            response = error_response(exc)
            return response
        except web.HTTPException as exc:
            status = exc.status
            add_cors(exc.headers)  # aiohttp answers with its status, text and headers
            raise
        except Exception as exc:  # a bug: one log line (accesslog.describe_error), a JSON 500
            if isinstance(exc, ConnectionError) or request.writer.output_size:
                raise  # the client went away, or a stream already began: aiohttp ends it
            shown = escape(logged_path(request))
            log.error(
                "%s %s failed (%s): %s",
                request.method,
                shown,
                request_id(number),
                describe_error(exc),
            )
            log.debug("%s %s failed", request.method, shown, exc_info=exc)
            response = json_response({"error": INTERNAL_ERROR}, 500)
            return response
        finally:
            if response is not None and not response.prepared:
                add_cors(response.headers)
            elapsed = clock() - started
            resource = request.match_info.route.resource
            observe(resource, request.method, status, elapsed)
            if recording:
                route = api_routes.get(resource)
                rec = RequestRecord(
                    wall(),
                    cached(secret) if secret else None,
                    "",
                    request.query.get("clientId", ""),
                    request.method,
                    logged_path(request),
                    route,
                    status,
                    elapsed * 1000,
                    request.remote or "",
                    number,
                    _size(request, response),
                )
                if log_line is not None:
                    log_line(rec)
                if record is not None and route is not None:
                    record(rec)

    return middleware


def _size(request: web.Request, response: web.StreamResponse | None) -> int:
    """The response body's bytes (a stream or socket, already sent: bytes sent so far)."""
    if response is None:
        return 0
    if response.prepared:
        return request.writer.output_size if request.writer is not None else 0
    return response.content_length or 0


class BodyTimeout(Exception):
    """A request body did not arrive whole within `RelayConfig.body_timeout` (a 408)."""


def _body_late(body: StreamReader) -> None:
    if not body.is_eof():
        body.set_exception(BodyTimeout())
