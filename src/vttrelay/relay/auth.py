"""Request authentication shared by every keyed route: API key, client check, rate, scope.

`authenticate(request, route, state)` runs the reference relay's stages in order (wire-protocol
§4.1 stages 3, 4, 7) and raises `ApiError` (an aiohttp HTTP exception with the exact JSON body
of wire-protocol §6). `resolve_world` picks the target world (§4.3). Key lookups go through
`KeyCache` (hits and misses cached for a few seconds) and usage is counted in memory and flushed
in batches by `UsageCounter`, so the hot path does no database I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from vttrelay.relay.routes import ROUTES, Route
from vttrelay.relay.store import KeyRecord, RelayStore
from vttrelay.relay.worlds import WorldConnection, WorldRegistry

if TYPE_CHECKING:
    from vttrelay.relay.app import RelayState

log = logging.getLogger("vttrelay.relay")

API_KEY_HEADER = "x-api-key"


class ApiError(web.HTTPException):
    """An HTTP error with a JSON body, e.g. `ApiError(401, {"error": "Invalid API key"})`."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status_code = status
        self.payload = body
        super().__init__(text=orjson.dumps(body).decode(), content_type="application/json")


def error(status: int, text: str, /, **extra: Any) -> ApiError:
    return ApiError(status, {"error": text, **extra})


class KeyCache:
    """Secret -> KeyRecord lookups cached for `ttl` seconds (negative results too)."""

    def __init__(self, store: RelayStore, ttl: float = 5.0, max_entries: int = 100_000) -> None:
        self.store = store
        self.ttl = ttl
        self.max_entries = max_entries
        self._cache: dict[str, tuple[float, KeyRecord | None]] = {}

    def lookup(self, secret: str) -> KeyRecord | None:
        now = time.monotonic()
        hit = self._cache.get(secret)
        if hit is not None and hit[0] > now:
            return hit[1]
        record = self.store.key_by_secret(secret) if len(secret) <= 256 else None
        if len(self._cache) >= self.max_entries:
            self._cache.clear()
        self._cache[secret] = (now + self.ttl, record)
        return record

    def clear(self) -> None:
        self._cache.clear()


class UsageCounter:
    """Request counts per key, kept in memory and written to the store in batches."""

    def __init__(self, store: RelayStore) -> None:
        self.store = store
        self._counts: dict[str, tuple[int, float]] = {}

    def count(self, key_id: str) -> None:
        n, _ = self._counts.get(key_id, (0, 0.0))
        self._counts[key_id] = (n + 1, time.time())

    def flush(self) -> None:
        counts, self._counts = self._counts, {}
        try:
            self.store.add_usage(counts)
        except Exception:
            log.exception("could not flush usage counters")

    async def run(self, interval: float) -> None:
        """Flush every `interval` seconds until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(interval)
                self.flush()
        finally:
            with contextlib.suppress(Exception):
                self.flush()


def _takes_client_id(route: Route) -> bool:
    return any(p.name == "clientId" for p in route.params)


# Computed once for the route table (its routes live as long as the process, so their ids are
# never reused); another Route (a test's) is looked at each time.
_CLIENT_ID_ROUTES = {id(route): _takes_client_id(route) for route in ROUTES}


def route_takes_client_id(route: Route) -> bool:
    takes = _CLIENT_ID_ROUTES.get(id(route))
    return _takes_client_id(route) if takes is None else takes


def authenticate(request: web.Request, route: Route, state: RelayState) -> KeyRecord:
    """Key, named client, rate limit and scope checks; returns the key or raises ApiError."""
    secret = request.headers.get(API_KEY_HEADER)
    if not secret:
        raise error(401, "API key is required")
    key = state.keys.lookup(secret)
    if key is None:
        raise error(401, "Invalid API key")
    if not key.enabled:
        raise error(401, "API key is disabled")
    if key.expired():
        raise error(401, "API key has expired")
    if route_takes_client_id(route):
        client_id = request.query.get("clientId")
        if client_id:
            world = state.registry.get(client_id)
            if world is None:
                raise error(404, "Invalid client ID")
            if world.account != key.account:
                raise error(401, "Invalid API key for this client ID")
    limit = key.rate_per_minute if key.rate_per_minute is not None else state.config.rate_per_minute
    if not state.buckets.allow(key.id, limit):
        raise error(429, "Too many API requests, please slow down")
    state.usage.count(key.id)
    if route.scope is not None and route.scope not in key.scopes:
        raise error(403, f"API key lacks required scope: {route.scope}")
    return key


def resolve_world(
    key: KeyRecord, client_id: str | None, registry: WorldRegistry
) -> WorldConnection:
    """The target world of a call (wire-protocol §4.3), restricted to the key's account/list."""
    allowed = key.client_ids
    if client_id:
        if allowed and client_id not in allowed:
            raise error(403, "API key is not authorized for this client")
    elif len(allowed) == 1:
        client_id = allowed[0]
    if client_id:
        world = registry.get(client_id)
        if world is None or world.account != key.account:
            raise error(
                404,
                "Invalid client ID",
                clientId=client_id,
                message="No Foundry client connected with this ID.",
            )
        return world
    live = [w for w in registry.for_account(key.account) if not allowed or w.client_id in allowed]
    if not live:
        raise error(404, "No connected Foundry clients found")
    if len(live) > 1:
        raise error(
            400,
            "Multiple clients connected. Please specify clientId.",
            connectedClients=sorted(w.client_id for w in live),
        )
    return live[0]


def check_system(route: Route, world: WorldConnection) -> None:
    """A route that needs a game system (dnd5e) fails at once on a world running another."""
    if route.system and world.system_id != route.system:
        raise error(
            400,
            f"This endpoint needs a {route.system} world; "
            f"world '{world.client_id}' runs '{world.system_id or 'unknown'}'",
        )
