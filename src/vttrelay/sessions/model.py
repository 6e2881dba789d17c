"""The session manager's data (`manager`): its settings, what the relay lends it (`RelayHooks`),
the worlds and logins it starts sessions for, a running `Session`, and the operator's host rule
for browser sessions. Answers are `(status, body)` pairs with the reference's texts."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vttrelay.sessions.headless import Browser
from vttrelay.sessions.processes import Child

Answer = tuple[int, dict[str, Any]]


@dataclass
class SessionConfig:
    data_dir: Path
    headless_allow: tuple[str, ...] = ()  # Foundry hosts a browser session may open
    max_per_account: int = 3
    max_total: int = 20  # sessions (started or starting) on this relay, all accounts
    idle_timeout: float = 600.0  # seconds without a forwarded request (0: never)
    start_timeout: float = 60.0  # seconds for a started world to connect
    auto_start_worlds: bool = False  # a call to an offline stored world starts it
    python: str = sys.executable


@dataclass(frozen=True)
class StoredLogin:
    """A credential the account keeps on the relay (`/auth/credentials`), its password
    decrypted: what a browser session logs in with when no password is sent."""

    foundry_url: str
    username: str
    password: str
    world: str


@dataclass(frozen=True)
class PairedWorld:
    """A Foundry world the account has paired with this relay (a known client): its client id
    and the world id and title it sent when it last connected ('' when it never has)."""

    client_id: str
    world_id: str = ""
    world_title: str = ""


@dataclass(frozen=True)
class ArmedWorld:
    """A paired Foundry world whose owner turned auto-start on (its known client's flag), and
    the stored credential linked to it (None: none yet): what an auto-start logs in with."""

    paired: PairedWorld
    credential_id: str | None


@dataclass
class RelayHooks:
    """What the relay lends the manager (given by the composition root)."""

    mint_token: Callable[[str, str, str], Awaitable[str]]  # account, client id, name -> secret
    revoke_token: Callable[[str], Awaitable[None]]  # secret
    is_live: Callable[[str, str], bool]  # client id, account
    relay_url: str = ""  # the /relay URL a started world connects to (set once listening)
    # the account's paired world with this client id, world id or title, if any; for '', its
    # only paired world if it has exactly one
    find_client: Callable[[str, str], Awaitable[PairedWorld | None]] | None = None
    # the account's paired world with this client id if its owner turned auto-start on
    armed: Callable[[str, str], Awaitable[ArmedWorld | None]] | None = None
    # the account's stored credential with this id, decrypted: None if unknown, a text if it
    # cannot be decrypted
    stored_login: Callable[[str, str], Awaitable[StoredLogin | str | None]] | None = None


@dataclass
class Session:
    id: str
    account: str
    client_id: str
    kind: str  # "embedded" or "foundry"
    foundry_url: str
    username: str
    world_name: str
    started_at: int  # ms
    token: str
    child: Child | None = None
    browser: Browser | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    ended: bool = False  # its stop has begun (`SessionManager._stop` runs once)

    def summary(self, last_activity: int) -> dict[str, Any]:
        return {
            "clientId": self.client_id,
            "foundryUrl": self.foundry_url,
            "kind": self.kind,
            "lastActivity": last_activity,
            "sessionId": self.id,
            "startedAt": self.started_at,
            "username": self.username,
            "worldName": self.world_name,
        }


def host_allowed(url: str, allowed: tuple[str, ...]) -> bool:
    """Is the URL's host (or host:port) in the operator's list? None is by default."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    with_port = f"{host}:{parts.port}" if parts.port else host
    return any(entry.lower() in (host, with_port) for entry in allowed)
