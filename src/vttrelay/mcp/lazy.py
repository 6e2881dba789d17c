"""`/mcp` on the relay, with the MCP server loaded on its first request.

The `mcp` SDK (and starlette, pydantic, anyio... behind it) is imported, and its session manager
started, only when a client first calls `/mcp`: a relay nobody uses MCP on doesn't pay for it.
Measured with `python -m bench.startup` (bench/RESULTS.md, "Start-up"): loading it up front cost
about 44 MiB of resident memory and 0.3 to 0.9 s of start-up (97.8 -> 56.6 MiB at start).
The routes are registered up front, so the route table and what aiohttp answers do not change.
The API key is checked here, before anything is loaded: a call without a valid key gets its 401
without making the relay load the MCP server.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from aiohttp import web

from vttrelay.mcp.limits import SessionLimits
from vttrelay.protocol import INVALID_CLIENT_ID, valid_id
from vttrelay.relay.accounts.key_cache import TOO_MANY_UNKNOWN_KEYS
from vttrelay.relay.core import error, key_problem
from vttrelay.relay.forward import API_KEY_HEADER

if TYPE_CHECKING:
    from vttrelay.mcp.aiohttp_asgi import McpEndpoint
    from vttrelay.relay.backends.ports import Counters

MCP_PATH = "/mcp"
WORLD_QUERY = "clientId"  # /mcp?clientId=ID: the world a session plays in (`worlds.QUERY`)


def request_secret(request: web.Request) -> str | None:
    """The API key of a request: `x-api-key`, else `Authorization: Bearer <key>`."""
    secret = request.headers.get(API_KEY_HEADER)
    if secret:
        return secret
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class LazyMcp:
    """Builds and starts the `McpEndpoint` on the first request; stops it at shutdown."""

    def __init__(
        self, keys: Any, counters: Counters | None = None, limits: SessionLimits | None = None
    ) -> None:
        self.keys = keys  # the relay's KeyCache
        self.counters = counters  # the relay's Counters: new sessions per key per minute
        self.limits = limits or SessionLimits()
        self.endpoint: McpEndpoint | None = None
        self.loading = asyncio.Lock()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """One `/mcp` request: 401 without a valid key, else the MCP server's answer."""
        secret = request_secret(request)
        if not secret:
            raise error(401, "API key is required")
        if self.keys.missing(secret) and not await self.keys.load(secret, request.remote or ""):
            raise error(429, TOO_MANY_UNKNOWN_KEYS)  # a Bearer key the middleware did not read
        key = self.keys.lookup(secret)
        problem = key_problem(key)
        if problem or key is None:
            raise error(401, problem or "Invalid API key")
        world = request.query.get(WORLD_QUERY)
        if world is not None and not valid_id(world):
            raise error(400, INVALID_CLIENT_ID)
        if self.endpoint is None:
            async with self.loading:  # two first requests at once start one server
                if self.endpoint is None:
                    from vttrelay.mcp.aiohttp_asgi import McpEndpoint

                    endpoint = McpEndpoint(self.keys, self.counters, self.limits)
                    await endpoint.start()
                    self.endpoint = endpoint
        return await self.endpoint.handle(request, key, secret)

    async def shutdown(self, app: web.Application) -> None:
        if self.endpoint is not None:
            await self.endpoint.stop()

    async def cleanup(self, app: web.Application) -> None:
        if self.endpoint is not None:
            await self.endpoint.close()


def install(
    app: web.Application,
    keys: Any,
    counters: Counters | None = None,
    limits: SessionLimits | None = None,
) -> LazyMcp:
    """Serve `/mcp` (POST, GET, DELETE) on the relay application. `keys` is the relay's
    `KeyCache`, `counters` its `Counters` (the rate of new sessions per key)."""
    lazy = LazyMcp(keys, counters, limits)
    for method in ("POST", "GET", "DELETE"):
        app.router.add_route(method, MCP_PATH, lazy.handle)
    app.on_shutdown.append(lazy.shutdown)
    app.on_cleanup.append(lazy.cleanup)
    return lazy
