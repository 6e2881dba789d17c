"""Which world an MCP session plays in, when its key reaches several.

The relay finds a call's world alone when the key is bound to one world or its account has one
live world; otherwise a call must name it (`clientId`). A session names it once: `vttrelay mcp
--client-id ID`, `/mcp?clientId=ID` on the URL the agent connects to, or the `choose_world`
tool, whose choice lasts for the rest of the session (kept in the MCP connection's state, so it
holds over stdio and over `/mcp` alike). Every tool then calls the relay with a client bound to
that world (`RelayClients`: one per relay, key and world, bounded, reused across calls).

A key over several worlds with none chosen gets, instead of the relay's `Multiple clients
connected`, an answer that says so and lists the worlds (`unchosen_text`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Final

from vttrelay.client import AsyncClient, VttRelayError
from vttrelay.protocol import INVALID_CLIENT_ID

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

WORLD_STATE: Final = "vttrelay.world"  # the chosen world's client id, in the connection state
MAX_CLIENTS: Final = 256  # relay clients kept (the oldest is closed past it)
MULTIPLE: Final = "Multiple clients connected"  # the relay's refusal when a call names no world
QUERY: Final = "clientId"  # /mcp?clientId=ID


def _state(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The MCP connection's state: one per session, over stdio and over /mcp. (The SDK's
    `ServerSession` keeps its `Connection` private; its `state` is what the SDK documents for
    per-connection values.)"""
    state: dict[str, Any] = ctx.session._connection.state
    return state


def session_world(ctx: ServerRequestContext[Any, Any], given: str | None) -> str | None:
    """The session's world: the one chosen in it, else `given` (the transport's: `--client-id`,
    `?clientId=`), which then stays the session's; None lets the relay decide."""
    state = _state(ctx)
    if state.get(WORLD_STATE) is None and given:
        state[WORLD_STATE] = given
    chosen = state.get(WORLD_STATE)
    return str(chosen) if chosen else None


def choose(ctx: ServerRequestContext[Any, Any], client_id: str) -> None:
    """From now on the session plays in `client_id`'s world."""
    _state(ctx)[WORLD_STATE] = client_id


class RelayClients:
    """Relay clients, one per (relay URL, key, world), so a session's calls reuse one connection
    pool; at most `limit` (the oldest is closed past it)."""

    def __init__(self, limit: int = MAX_CLIENTS) -> None:
        self.limit = limit
        self._clients: dict[str, AsyncClient] = {}

    async def get(self, base_url: str, secret: str, world: str | None) -> AsyncClient:
        slot = hashlib.sha256(f"{base_url} {secret} {world or ''}".encode()).hexdigest()
        client = self._clients.get(slot)
        if client is None:
            if len(self._clients) >= self.limit:
                await self._clients.pop(next(iter(self._clients))).aclose()
            client = self._clients[slot] = AsyncClient(base_url, secret, client_id=world)
        return client

    def __len__(self) -> int:
        return len(self._clients)

    async def close(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


def world_view(client: dict[str, Any]) -> dict[str, Any]:
    """A world as `GET /clients` lists it, in what an agent needs to choose: `{id, name,
    system, online}`."""
    return {
        "id": client.get("clientId"),
        "name": client.get("worldTitle") or client.get("worldId") or client.get("clientId"),
        "system": client.get("systemId") or None,
        "online": bool(client.get("isOnline")),
    }


async def list_worlds(relay: AsyncClient) -> list[dict[str, Any]]:
    """The key's worlds (`GET /clients`: live ones first, then the offline ones it knows)."""
    reply = await relay.clients.list()
    return [world_view(dict(c)) for c in reply.get("clients") or []]


def describe(worlds: list[dict[str, Any]]) -> str:
    """`'Demo' (id demo, dnd5e, online); ...`"""
    return "; ".join(
        f"{w['name']!r} (id {w['id']}, {w['system'] or 'unknown system'}, "
        f"{'online' if w['online'] else 'offline'})"
        for w in worlds
    )


def is_unchosen(exc: VttRelayError) -> bool:
    """The relay refused a call because the key reaches several worlds and it named none."""
    body = exc.body if isinstance(exc.body, dict) else {}
    return exc.status == 400 and str(body.get("error", "")).startswith(MULTIPLE)


def is_gone(exc: VttRelayError) -> bool:
    """The relay refused a call because the world it named is not connected."""
    body = exc.body if isinstance(exc.body, dict) else {}
    return exc.status == 404 and body.get("error") == INVALID_CLIENT_ID


async def _listing(relay: AsyncClient, exc: VttRelayError) -> str:
    """The key's worlds as a sentence; when the key may not list them (no `clients:read`),
    the ids the relay's refusal named."""
    try:
        return describe(await list_worlds(relay))
    except VttRelayError:
        body = exc.body if isinstance(exc.body, dict) else {}
        return ", ".join(str(i) for i in body.get("connectedClients") or []) or "(unknown)"


async def unchosen_text(relay: AsyncClient, exc: VttRelayError) -> str:
    """What a tool answers when the relay could not tell which world a call is for."""
    return (
        "This API key reaches several worlds and this session has not chosen one: call "
        "choose_world with one of them (or start `vttrelay mcp --client-id ID`, or connect to "
        f"/mcp?clientId=ID). The worlds: {await _listing(relay, exc)}"
    )


async def gone_text(relay: AsyncClient, world: str, exc: VttRelayError) -> str:
    """What a tool answers when the session's world is not connected to the relay."""
    return (
        f"The world this session plays in ({world}) is not connected to the relay now; wait "
        f"for it, or choose another with choose_world. The worlds: {await _listing(relay, exc)}"
    )
