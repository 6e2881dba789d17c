"""Who is calling the MCP server (`Caller`): what every tool, resource and event feed is given."""

from __future__ import annotations

from dataclasses import dataclass

from vttrelay.client import AsyncClient


@dataclass(frozen=True)
class Caller:
    """Who is calling: the relay client to call with, the key's name and scopes (None when the
    relay didn't say), and the world the session plays in (None: the relay's default)."""

    relay: AsyncClient
    key_name: str
    scopes: tuple[str, ...] | None
    world: str | None = None
