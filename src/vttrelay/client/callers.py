"""What the generated endpoint groups (`groups/`) need from a client: one call per route.

`Client` and `AsyncClient` (`http.py`) implement these; the groups only hold a reference to
their client and turn Python arguments into the route's wire parameters.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping
from typing import Any, Protocol

from vttrelay.client.spec import RouteSpec
from vttrelay.client.types import StreamEvent


class SyncCaller(Protocol):
    def request(self, route: RouteSpec, params: Mapping[str, Any]) -> Any: ...

    def stream(
        self,
        route: RouteSpec,
        params: Mapping[str, Any],
        *,
        last_event_id: str = "",
        reconnects: int = 5,
    ) -> Generator[StreamEvent[Any], None, None]: ...


class AsyncCaller(Protocol):
    async def request(self, route: RouteSpec, params: Mapping[str, Any]) -> Any: ...

    def stream(
        self,
        route: RouteSpec,
        params: Mapping[str, Any],
        *,
        last_event_id: str = "",
        reconnects: int = 5,
    ) -> AsyncGenerator[StreamEvent[Any], None]: ...
