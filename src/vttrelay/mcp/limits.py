"""How many MCP sessions `/mcp` keeps: the settings both the lazy loader (`lazy.py`) and the
endpoint it loads (`aiohttp_asgi.py`) read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionLimits:
    """How many MCP sessions `/mcp` keeps (issue 20 item 7): `total` over all keys (the SDK
    answers 503 past it), `per_key` open at once for one API key, `per_account` for all the
    keys of one account, `per_minute` opened by one key per minute (all 429). Idle sessions end
    after `idle_timeout` seconds."""

    total: int = 1000
    per_key: int = 10
    per_minute: int = 10
    per_account: int = 50
    idle_timeout: float = 600.0
