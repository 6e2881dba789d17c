"""The Python client for a relay: `Client` (sync) and `AsyncClient` (asyncio), built on httpx.

    from vttrelay.client import Client

    with Client("http://127.0.0.1:3010", api_key="...") as relay:
        check = relay.dnd5e.skill_check("Actor.pipMonk000000001", "ste", advantage=True)
        print(check["data"]["total"])
        for event in relay.streams.chat(client_id="vttrelay-demo"):
            print(event.event, event.data)

Every endpoint is a typed method of its group (`groups/`, generated from the route table).
Underneath, `request(route, params)` places each wire parameter where the relay reads it
(`requests.prepare`), sends it and returns the parsed JSON reply (bytes for images); any status
but 2xx raises the `errors.py` exception for it, carrying the status and the documented body;
no answer at all (the relay down, a broken connection) raises `errors.ConnectionFailed`.
`call("skill-check", actorUuid=...)` is the untyped way in, by action, path or `METHOD /path`.

Retries: a 429 or 503 that carries `Retry-After` is retried after that many seconds (capped by
`max_retry_wait`), whatever the method: the relay sends it only when the call did not run (rate
limit, connection limit). A 503 without it (the world went away mid-call) is retried with
exponential backoff for GET only, since a changing call may already have happened. `retries`
(default 3) bounds the attempts after the first.

Streams: `stream(route, params)` yields typed `StreamEvent`s; after a dropped or ended connection
it reconnects with `Last-Event-ID`, so no event is lost while the relay still buffers it; pass
`last_event_id` to resume a stream read earlier (e.g. before a restart). The relay's keepalive
comments are not events: every event yielded carries data.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Generator, Mapping
from typing import Any, Final

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse

from vttrelay.client.errors import VttRelayError, connection_failed, error_for
from vttrelay.client.groups import AsyncGroups, SyncGroups
from vttrelay.client.requests import PreparedRequest, find_route, prepare
from vttrelay.client.spec import RouteSpec
from vttrelay.client.types import StreamEvent

DEFAULT_TIMEOUT = 40.0  # above the relay's longest route timeout (30 s), so its 408 reaches us
DEFAULT_RETRIES = 3
MAX_RETRY_WAIT = 60.0


def _event(sse: ServerSentEvent) -> StreamEvent[Any] | None:
    """The event of a dispatched SSE block, or None for a block without data: the relay's
    `: keepalive` comments (httpx-sse hands those on as data-less blocks once an id was seen;
    the SSE spec dispatches no event without data)."""
    return StreamEvent(sse.event, json.loads(sse.data), sse.id) if sse.data else None


def _body(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return response.text


def _result(response: httpx.Response, route: RouteSpec | None = None) -> Any:
    """The reply of a 2xx (JSON, or bytes for binary routes); else the typed error."""
    if not 200 <= response.status_code < 300:
        raise error_for(response.status_code, _body(response), dict(response.headers))
    if route is not None and route.reply == "bytes":
        return response.content
    return _body(response)


def retry_wait(
    status: int, headers: Mapping[str, str], method: str, attempt: int, max_wait: float
) -> float | None:
    """Seconds to wait before retrying a refused call, or None not to retry (module docstring).
    `attempt` counts the retries already made."""
    if status not in (429, 503):
        return None
    after = error_for(status, None, headers).retry_after
    if after is not None:
        return min(after, max_wait)
    if status == 503 and method == "GET":
        return min(0.5 * 2.0**attempt, max_wait)
    return None


def _prepared(
    route: RouteSpec, params: Mapping[str, Any], default_client_id: str | None
) -> PreparedRequest:
    if (
        default_client_id
        and params.get("clientId") is None
        and any(p.name == "clientId" and "path" not in p.sources for p in route.params)
    ):
        params = {**params, "clientId": default_client_id}
    return prepare(route, params)


def _call_kwargs(req: PreparedRequest) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"params": req.query}
    if req.body is not None:
        kwargs["content"] = json.dumps(req.body, separators=(",", ":")).encode()
        kwargs["headers"] = {"content-type": "application/json"}
    return kwargs


def _stream_kwargs(req: PreparedRequest, last_id: str) -> dict[str, Any]:
    """How to (re)open a stream: its filters, `Last-Event-ID` to resume, no read timeout."""
    headers = {"last-event-id": last_id} if last_id else {}
    return {"params": req.query, "headers": headers, "timeout": httpx.Timeout(None, connect=10.0)}


def _stream_route(route: RouteSpec) -> RouteSpec:
    if route.reply != "stream":
        raise TypeError(f"{route.path} is not an event stream")
    return route


def _reconnect_wait(failures: int) -> float:
    return min(30.0, 0.5 * 2.0**failures)


class _Options:
    """What both clients are configured with."""

    def __init__(
        self,
        api_key: str,
        client_id: str | None,
        retries: int,
        max_retry_wait: float,
    ) -> None:
        self.client_id = client_id
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.headers = {"x-api-key": api_key}


class _Configured:
    """What both clients tell of their configuration."""

    _options: _Options

    @property
    def client_id(self) -> str | None:
        """The world every call targets unless it names another (None: the relay's default,
        the key's or the account's only world)."""
        return self._options.client_id


class Client(SyncGroups, _Configured):
    """A synchronous relay client: `relay.<group>.<method>(...)` for every endpoint.

    `client_id` is the world every call targets unless it names another (the relay's default
    is the key's or the account's only world); `timeout` is per request, in seconds; `retries`
    and `max_retry_wait` bound the retries of refused calls (module docstring); other keyword
    arguments go to `httpx.Client` (`verify`, `proxy`, `event_hooks`, `transport`...).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        client_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_wait: float = MAX_RETRY_WAIT,
        **http_options: Any,
    ) -> None:
        self._options = _Options(api_key, client_id, retries, max_retry_wait)
        self._http = httpx.Client(
            base_url=base_url, headers=self._options.headers, timeout=timeout, **http_options
        )
        self._attach_groups(self)

    def request(self, route: RouteSpec, params: Mapping[str, Any]) -> Any:
        """Call one route with its wire parameters (None values are not sent)."""
        req = _prepared(route, params, self._options.client_id)
        attempt = 0
        while True:
            try:
                response = self._http.request(req.method, req.path, **_call_kwargs(req))
            except httpx.TransportError as exc:
                raise connection_failed(self._http.base_url, exc) from exc
            wait = retry_wait(
                response.status_code,
                response.headers,
                req.method,
                attempt,
                self._options.max_retry_wait,
            )
            if wait is None or attempt >= self._options.retries:
                return _result(response, route)
            attempt += 1
            time.sleep(wait)

    def call(self, endpoint: str, **params: Any) -> Any:
        """Call an endpoint by action, path or `METHOD /path` with wire parameter names."""
        return self.request(find_route(endpoint), params)

    def stream(
        self,
        route: RouteSpec,
        params: Mapping[str, Any],
        *,
        last_event_id: str = "",
        reconnects: int = 5,
    ) -> Generator[StreamEvent[Any], None, None]:
        """The events of a stream route. After a dropped or ended connection, or a retryable
        refusal, it reopens the stream with `Last-Event-ID` (backing off), up to `reconnects`
        times in a row without an event; then the last error is raised (an ended stream just
        ends)."""
        req = _prepared(_stream_route(route), params, self._options.client_id)
        last_id = last_event_id
        failures = 0
        opened = False
        while True:
            try:
                with connect_sse(
                    self._http, "GET", req.path, **_stream_kwargs(req, last_id)
                ) as source:
                    if source.response.status_code != 200:
                        source.response.read()
                        _result(source.response)
                    opened = True
                    for sse in source.iter_sse():
                        if (event := _event(sse)) is None:
                            continue
                        if event.event not in _NOT_PROGRESS:
                            failures = 0
                        last_id = event.id or last_id
                        yield event
                raise _StreamEnded  # the relay closed the stream: reopen it, as EventSource does
            except (httpx.TransportError, VttRelayError, _StreamEnded) as exc:
                wait = _stream_wait(exc, failures, self._options.max_retry_wait, opened)
                failures += 1
                if wait is None or failures > reconnects:
                    if isinstance(exc, _StreamEnded):
                        return
                    if isinstance(exc, httpx.TransportError):
                        raise connection_failed(self._http.base_url, exc) from exc
                    raise
                time.sleep(wait)

    def subscribe(
        self, path: str, *, last_event_id: str = "", retries: int = 5, **filters: Any
    ) -> Generator[StreamEvent[Any], None, None]:
        """A stream by path with wire filter names (`streams.<name>` is the typed way)."""
        return self.stream(
            find_route(path), filters, last_event_id=last_event_id, reconnects=retries
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Events that do not show a stream works: a relay that answers only these and closes the stream
# is not retried forever.
_NOT_PROGRESS: Final = frozenset({"connected", "error", "gap"})


class _StreamEnded(Exception):
    """The relay ended a stream (restart, a subscriber cut off for falling behind)."""


def _stream_wait(exc: Exception, failures: int, max_wait: float, opened: bool) -> float | None:
    """How long to wait before reopening a stream after `exc`, or None to give up at once.
    Once a stream has been open, its world missing (404, it restarts) is waited for too."""
    if isinstance(exc, VttRelayError):
        if opened and exc.status == 404:
            return _reconnect_wait(failures)
        return retry_wait(exc.status, exc.headers, "GET", failures, max_wait)
    return _reconnect_wait(failures)


class AsyncClient(AsyncGroups, _Configured):
    """An asyncio relay client: `await relay.<group>.<method>(...)` for every endpoint
    (see `Client`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        client_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_wait: float = MAX_RETRY_WAIT,
        **http_options: Any,
    ) -> None:
        self._options = _Options(api_key, client_id, retries, max_retry_wait)
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=self._options.headers, timeout=timeout, **http_options
        )
        self._attach_groups(self)

    async def request(self, route: RouteSpec, params: Mapping[str, Any]) -> Any:
        """Call one route with its wire parameters (None values are not sent)."""
        req = _prepared(route, params, self._options.client_id)
        attempt = 0
        while True:
            try:
                response = await self._http.request(req.method, req.path, **_call_kwargs(req))
            except httpx.TransportError as exc:
                raise connection_failed(self._http.base_url, exc) from exc
            wait = retry_wait(
                response.status_code,
                response.headers,
                req.method,
                attempt,
                self._options.max_retry_wait,
            )
            if wait is None or attempt >= self._options.retries:
                return _result(response, route)
            attempt += 1
            await asyncio.sleep(wait)

    async def call(self, endpoint: str, **params: Any) -> Any:
        """Call an endpoint by action, path or `METHOD /path` with wire parameter names."""
        return await self.request(find_route(endpoint), params)

    async def stream(
        self,
        route: RouteSpec,
        params: Mapping[str, Any],
        *,
        last_event_id: str = "",
        reconnects: int = 5,
    ) -> AsyncGenerator[StreamEvent[Any], None]:
        """The events of a stream route (see `Client.stream`)."""
        req = _prepared(_stream_route(route), params, self._options.client_id)
        last_id = last_event_id
        failures = 0
        opened = False
        while True:
            try:
                async with aconnect_sse(
                    self._http, "GET", req.path, **_stream_kwargs(req, last_id)
                ) as source:
                    if source.response.status_code != 200:
                        await source.response.aread()
                        _result(source.response)
                    opened = True
                    async for sse in source.aiter_sse():
                        if (event := _event(sse)) is None:
                            continue
                        if event.event not in _NOT_PROGRESS:
                            failures = 0
                        last_id = event.id or last_id
                        yield event
                raise _StreamEnded  # the relay closed the stream: reopen it, as EventSource does
            except (httpx.TransportError, VttRelayError, _StreamEnded) as exc:
                wait = _stream_wait(exc, failures, self._options.max_retry_wait, opened)
                failures += 1
                if wait is None or failures > reconnects:
                    if isinstance(exc, _StreamEnded):
                        return
                    if isinstance(exc, httpx.TransportError):
                        raise connection_failed(self._http.base_url, exc) from exc
                    raise
                await asyncio.sleep(wait)

    def subscribe(
        self, path: str, *, last_event_id: str = "", retries: int = 5, **filters: Any
    ) -> AsyncGenerator[StreamEvent[Any], None]:
        """A stream by path with wire filter names (`streams.<name>` is the typed way)."""
        return self.stream(
            find_route(path), filters, last_event_id=last_event_id, reconnects=retries
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
