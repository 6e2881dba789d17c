"""The MCP server over stdio, for desktop agents, calling a relay with one key (`vttrelay mcp`;
`vttrelay.cli.mcp` parses its options).

    vttrelay mcp --url http://127.0.0.1:3010 --key <api key>
    VTTRELAY_URL=... VTTRELAY_API_KEY=... vttrelay mcp

The process speaks MCP on stdin/stdout and calls the relay through
`vttrelay.client.AsyncClient` with the key. At start it asks the relay what the key may do
(`GET /api/key`) to list only the tools its scopes cover; a relay without that endpoint gets
every tool listed, and its refusals still come back as tool errors. Logs go to stderr (a
desktop agent keeps them in its log file): one line per tool call with the key's name.
"""

from __future__ import annotations

import logging
from typing import Any

URL_ENV = "VTTRELAY_URL"
KEY_ENV = "VTTRELAY_API_KEY"
DEFAULT_URL = "http://127.0.0.1:3010"

log = logging.getLogger("vttrelay.mcp")


async def serve(url: str, key: str) -> None:
    from mcp.server.stdio import stdio_server

    from vttrelay.client import AsyncClient, ConnectionFailed, VttRelayError
    from vttrelay.mcp.server import Caller, build_server

    async with AsyncClient(url, key) as relay:
        try:
            info = await relay.clients.key()
            caller = Caller(relay, str(info.get("name") or info.get("id")), tuple(info["scopes"]))
        except ConnectionFailed as exc:
            raise SystemExit(f"vttrelay mcp: cannot reach the relay at {url}: {exc}") from exc
        except VttRelayError as exc:
            if exc.status != 404:
                raise SystemExit(f"vttrelay mcp: the relay refused the key: {exc}") from exc
            caller = Caller(relay, "(key)", None)  # an older relay: list every tool
        log.info(
            "MCP server on stdio for %s, key %r (%s)",
            url,
            caller.key_name,
            "all tools" if caller.scopes is None else f"scopes: {', '.join(caller.scopes)}",
        )

        async def callers(ctx: Any) -> Caller:
            return caller

        server = build_server(callers)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
