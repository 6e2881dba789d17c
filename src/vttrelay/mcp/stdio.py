"""The MCP server over stdio, for desktop agents, calling a relay with one key (`vttrelay mcp`;
`vttrelay.cli.mcp` parses its options).

    vttrelay mcp --url http://127.0.0.1:3010 --key <api key> [--client-id <world>]
    VTTRELAY_URL=... VTTRELAY_API_KEY=... VTTRELAY_CLIENT_ID=... vttrelay mcp

The process speaks MCP on stdin/stdout and calls the relay through
`vttrelay.client.AsyncClient` with the key. At start it asks the relay what the key may do
(`GET /api/key`) to list only the tools its scopes cover; a relay without that endpoint gets
every tool listed, and its refusals still come back as tool errors. A key over several worlds
plays in the one `--client-id` names (checked at start against the key's worlds), else in the
one the agent chooses with `choose_world`. Logs go to stderr (a desktop agent keeps them in its
log file): one line per tool call with the key's name.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when the server starts, not when the command line is parsed
    from vttrelay.client import AsyncClient
    from vttrelay.mcp.server import Caller

URL_ENV = "VTTRELAY_URL"
KEY_ENV = "VTTRELAY_API_KEY"
CLIENT_ID_ENV = "VTTRELAY_CLIENT_ID"
DEFAULT_URL = "http://127.0.0.1:3010"

log = logging.getLogger("vttrelay.mcp")


async def _check_world(relay: AsyncClient, client_id: str, info: dict[str, Any]) -> None:
    """SystemExit unless the key reaches `client_id`'s world (as far as the key may tell)."""
    from vttrelay.client import VttRelayError
    from vttrelay.mcp.worlds import describe, list_worlds

    bound = info.get("clientIds") or []
    if bound and client_id not in bound:
        raise SystemExit(
            f"vttrelay mcp: the key may not reach world {client_id!r}; its worlds: "
            + ", ".join(bound)
        )
    try:
        listed = await list_worlds(relay)
    except VttRelayError:
        return  # no clients:read: the relay refuses the calls if the id is wrong
    if client_id not in [w["id"] for w in listed]:
        raise SystemExit(
            f"vttrelay mcp: no world {client_id!r} for this key; its worlds: {describe(listed)}"
        )


class StdioCallers:
    """`server.Callers` over stdio: one key for the process, each call with a relay client bound
    to the world the session plays in (`--client-id`, or what `choose_world` chose)."""

    def __init__(
        self, url: str, key: str, who: tuple[str, tuple[str, ...] | None], world: str | None
    ) -> None:
        from vttrelay.mcp.worlds import RelayClients

        self.url, self.key, self.world = url, key, world
        self.key_name, self.scopes = who
        self.clients = RelayClients()

    async def __call__(self, ctx: Any) -> Caller:
        from vttrelay.mcp.server import Caller
        from vttrelay.mcp.worlds import session_world

        world = session_world(ctx, self.world)
        relay = await self.clients.get(self.url, self.key, world)
        return Caller(relay, self.key_name, self.scopes, world)


async def serve(url: str, key: str, client_id: str | None = None) -> None:
    from mcp.server.stdio import stdio_server

    from vttrelay.client import AsyncClient, ConnectionFailed, VttRelayError
    from vttrelay.mcp.server import build_server

    async with AsyncClient(url, key) as relay:
        who: tuple[str, tuple[str, ...] | None]
        try:
            info: dict[str, Any] = dict(await relay.clients.key())
            who = (str(info.get("name") or info.get("id")), tuple(info["scopes"]))
        except ConnectionFailed as exc:
            raise SystemExit(f"vttrelay mcp: cannot reach the relay at {url}: {exc}") from exc
        except VttRelayError as exc:
            if exc.status != 404:
                raise SystemExit(f"vttrelay mcp: the relay refused the key: {exc}") from exc
            info = {}
            who = ("(key)", None)  # an older relay: list every tool
        if client_id:
            await _check_world(relay, client_id, info)
    callers = StdioCallers(url, key, who, client_id)
    log.info(
        "MCP server on stdio for %s, key %r (%s)%s",
        url,
        callers.key_name,
        "all tools" if callers.scopes is None else f"scopes: {', '.join(callers.scopes)}",
        f", world {client_id}" if client_id else "",
    )
    server = build_server(callers)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await callers.clients.close()
