"""`/mcp` on the relay, with the MCP server loaded on its first request.

The `mcp` SDK (and starlette, pydantic, anyio... behind it) is imported, and its session manager
started, only when a client first calls `/mcp`: a relay nobody uses MCP on doesn't pay for it.
Measured with `python -m bench.startup` (bench/RESULTS.md, "Start-up"): loading it up front cost
about 44 MiB of resident memory and 0.3 to 0.9 s of start-up (97.8 -> 56.6 MiB at start).
The routes are registered up front, so the route table and what aiohttp answers do not change.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from vttrelay.mcp.aiohttp_asgi import McpEndpoint

MCP_PATH = "/mcp"


class LazyMcp:
    """Builds and starts the `McpEndpoint` on the first request; stops it at shutdown."""

    def __init__(self, keys: Any) -> None:
        self.keys = keys  # the relay's KeyCache
        self.endpoint: McpEndpoint | None = None
        self.loading = asyncio.Lock()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self.endpoint is None:
            async with self.loading:  # two first requests at once start one server
                if self.endpoint is None:
                    from vttrelay.mcp.aiohttp_asgi import McpEndpoint

                    endpoint = McpEndpoint(self.keys)
                    await endpoint.start()
                    self.endpoint = endpoint
        return await self.endpoint.handle(request)

    async def shutdown(self, app: web.Application) -> None:
        if self.endpoint is not None:
            await self.endpoint.stop()

    async def cleanup(self, app: web.Application) -> None:
        if self.endpoint is not None:
            await self.endpoint.close()


def install(app: web.Application, keys: Any) -> LazyMcp:
    """Serve `/mcp` (POST, GET, DELETE) on the relay application. `keys` is the relay's
    `KeyCache`."""
    lazy = LazyMcp(keys)
    for method in ("POST", "GET", "DELETE"):
        app.router.add_route(method, MCP_PATH, lazy.handle)
    app.on_shutdown.append(lazy.shutdown)
    app.on_cleanup.append(lazy.cleanup)
    return lazy
