"""The Python client for a relay: `Client` (sync) and `AsyncClient` (asyncio), built on httpx.

    from vttrelay.client import Client

    with Client("http://127.0.0.1:3010", api_key="...") as relay:
        client_id = relay.call("GET /clients")["clients"][0]["clientId"]
        roll = relay.call("skill-check", actorUuid="Actor.pipMonk000000001", skill="ste")
        for event in relay.subscribe("/chat/subscribe", clientId=client_id):
            print(event.event, event.data)

`call` takes an endpoint by world action, path or `METHOD /path` (see `requests.find_route`) and
returns the relay's JSON body; any status but 200 raises `RelayError` with the status and the
documented error body. `subscribe` yields the events of an SSE stream; after a dropped connection
it reconnects with `Last-Event-ID`, so no event is lost while the relay still buffers it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse

from vttrelay.client.requests import PreparedRequest, find_route, prepare

DEFAULT_TIMEOUT = 40.0  # above the relay's longest route timeout (30 s), so its 408 reaches us


class RelayError(Exception):
    """The relay answered with a status other than 200."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("error") if isinstance(body, dict) else body
        super().__init__(f"{status}: {message}")
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Event:
    """One event of a stream: its name, its JSON data and its id (for resuming)."""

    event: str
    data: Any
    id: str

    @classmethod
    def from_sse(cls, sse: ServerSentEvent) -> Event:
        return cls(sse.event, orjson.loads(sse.data) if sse.data else None, sse.id)


def _result(response: httpx.Response) -> Any:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        body = response.text
    if response.status_code != 200:
        raise RelayError(response.status_code, body)
    return body


def _stream_request(path: str, filters: dict[str, Any]) -> PreparedRequest:
    route = find_route(path)
    if route.mode != "stream":
        raise TypeError(f"{route.path} is not an event stream")
    return prepare(route, filters)


def _stream_kwargs(req: PreparedRequest, last_id: str) -> dict[str, Any]:
    """How to (re)open a stream: its filters, `Last-Event-ID` to resume, no read timeout."""
    headers = {"last-event-id": last_id} if last_id else {}
    return {"params": req.query, "headers": headers, "timeout": httpx.Timeout(None, connect=10.0)}


def _backoff(failures: int) -> float:
    return min(30.0, 0.5 * 2**failures)


def _call_kwargs(req: PreparedRequest) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"params": req.query}
    if req.body is not None:
        kwargs["content"] = orjson.dumps(req.body)
        kwargs["headers"] = {"content-type": "application/json"}
    return kwargs


class Client:
    """A synchronous relay client."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers={"x-api-key": api_key}, timeout=timeout
        )

    def call(self, endpoint: str, **params: Any) -> Any:
        req = prepare(find_route(endpoint), params)
        return _result(self._http.request(req.method, req.path, **_call_kwargs(req)))

    def subscribe(
        self, path: str, *, retries: int = 5, **filters: Any
    ) -> Generator[Event, None, None]:
        req = _stream_request(path, filters)
        last_id = ""
        failures = 0
        while True:
            try:
                with connect_sse(
                    self._http, "GET", req.path, **_stream_kwargs(req, last_id)
                ) as source:
                    if source.response.status_code != 200:
                        source.response.read()
                        _result(source.response)
                    for sse in source.iter_sse():
                        failures = 0
                        last_id = sse.id or last_id
                        yield Event.from_sse(sse)
                return
            except httpx.TransportError:
                failures += 1
                if failures > retries:
                    raise
                time.sleep(_backoff(failures))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """An asyncio relay client."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers={"x-api-key": api_key}, timeout=timeout
        )

    async def call(self, endpoint: str, **params: Any) -> Any:
        req = prepare(find_route(endpoint), params)
        return _result(await self._http.request(req.method, req.path, **_call_kwargs(req)))

    async def subscribe(
        self, path: str, *, retries: int = 5, **filters: Any
    ) -> AsyncGenerator[Event, None]:
        req = _stream_request(path, filters)
        last_id = ""
        failures = 0
        while True:
            try:
                async with aconnect_sse(
                    self._http, "GET", req.path, **_stream_kwargs(req, last_id)
                ) as source:
                    if source.response.status_code != 200:
                        await source.response.aread()
                        _result(source.response)
                    async for sse in source.aiter_sse():
                        failures = 0
                        last_id = sse.id or last_id
                        yield Event.from_sse(sse)
                return
            except httpx.TransportError:
                failures += 1
                if failures > retries:
                    raise
                await asyncio.sleep(_backoff(failures))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
