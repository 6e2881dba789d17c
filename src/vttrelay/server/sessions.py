"""The session routes' manager (the `sessions` package), built for one relay: the worlds it
starts connect back to this relay with connection tokens minted in its store, and a world that
leaves the relay ends its sessions at once (`WorldDepartures`, a listener of the world
directory)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from vttrelay.relay.accounts import worlds
from vttrelay.relay.accounts.credentials import Vault, VaultUnavailable
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import RelayError
from vttrelay.relay.link.connection import WorldConnection
from vttrelay.relay.store import KnownClient, RelayStore
from vttrelay.sessions.manager import SessionManager
from vttrelay.sessions.model import (
    ArmedWorld,
    PairedWorld,
    RelayHooks,
    SessionConfig,
    StoredLogin,
)


def paired_world(known: KnownClient) -> PairedWorld:
    """A known client as the sessions package sees it (the world id and title it last sent)."""
    world_id, title = known.metadata.get("worldId"), known.metadata.get("worldTitle")
    return PairedWorld(
        known.client_id,
        world_id if isinstance(world_id, str) else "",
        title if isinstance(title, str) else "",
    )


def session_manager(config: RelayConfig, store: RelayStore) -> SessionManager | None:
    """The session routes' manager (sessions started worlds connect back to this relay), or
    None when sessions are turned off. Its hooks `is_live` and `relay_url` are set once the
    relay runs (`server.run_instance`)."""
    if not config.sessions_enabled:
        return None

    async def mint(account: str, client_id: str, name: str) -> str:
        return await asyncio.to_thread(store.create_connection_token, account, client_id, name=name)

    async def revoke(secret: str) -> None:
        await asyncio.to_thread(store.revoke_token, secret)

    async def find_client(account: str, world: str) -> PairedWorld | None:
        wanted = world.casefold()
        known_clients = await asyncio.to_thread(store.known_clients, account)
        if not wanted:  # no name: the account's only paired world, if it has one only
            return paired_world(known_clients[0]) if len(known_clients) == 1 else None
        for known in known_clients:
            paired = paired_world(known)
            names = (paired.client_id, paired.world_id, paired.world_title)
            if any(n and n.casefold() == wanted for n in names):
                return paired
        return None

    async def armed(account: str, client_id: str) -> ArmedWorld | None:
        def read() -> ArmedWorld | None:
            settings = worlds.world_settings(store, client_id)
            if settings is None or settings.account != account or not settings.auto_start:
                return None
            known = store.known_client(client_id)
            return (
                None if known is None else ArmedWorld(paired_world(known), settings.credential_id)
            )

        return await asyncio.to_thread(read)

    vault = Vault(store, config.accounts.credentials_key, Path(config.data_dir))

    def read_login(account: str, credential_id: str) -> StoredLogin | str | None:
        credential = vault.get(account, credential_id)
        if credential is None:
            return None
        try:
            password = vault.password(account, credential_id)
        except VaultUnavailable as exc:
            return str(exc)
        if password is None:
            return "the password cannot be read with this relay's credentials key"
        return StoredLogin(
            credential.foundry_url, credential.foundry_username, password, credential.world
        )

    async def stored_login(account: str, credential_id: str) -> StoredLogin | str | None:
        return await asyncio.to_thread(read_login, account, credential_id)

    settings = SessionConfig(
        data_dir=Path(config.data_dir),
        headless_allow=config.headless_allow,
        max_per_account=config.max_sessions,
        idle_timeout=config.session_idle_timeout,
        auto_start_worlds=config.auto_start_worlds,
    )
    hooks = RelayHooks(
        mint,
        revoke,
        lambda client_id, account: False,
        find_client=find_client,
        armed=armed,
        stored_login=stored_login,
    )
    return SessionManager(settings, hooks)


class AutoStarter:
    """The request core's `core.WorldStarter` over the session manager: a call to an offline
    world of the caller's account starts it as a session, ended when idle as any other: a stored
    embedded world (`serve --auto-start-worlds`; told from its id alone) or a paired Foundry
    world whose owner turned auto-start on and linked a credential (a store look-up)."""

    def __init__(self, sessions: SessionManager) -> None:
        self.sessions = sessions

    def may_start(self, account: str, client_id: str) -> bool | None:
        return True if self.sessions.may_auto_start(account, client_id) else None

    async def armed(self, account: str, client_id: str) -> bool:
        return await self.sessions.armed(account, client_id) is not None

    async def start(self, account: str, client_id: str, timeout: float) -> bool:
        answer = await self.sessions.auto_start(account, client_id, timeout)
        if answer is None:
            return False
        status, body = answer
        if status != 200:
            text = body.get("error") or "the world could not be started"
            raise RelayError(
                status,
                {
                    "error": f"Auto-start of world '{client_id}' failed: {text}",
                    "clientId": client_id,
                },
            )
        return True


class WorldDepartures:
    """The world directory's listener (`relay.link.connection.WorldListener`) for the session
    manager: a world that disconnects ends its sessions at once (`SessionManager.world_left`),
    on every instance that hears it; a reconnect that replaces a world's socket is not told (the
    directory's rule), so its session lives on."""

    def __init__(self, sessions: SessionManager) -> None:
        self.sessions = sessions

    def world_connected(self, world: WorldConnection) -> None:
        return None

    def world_disconnected(self, world: WorldConnection) -> None:
        self.sessions.world_left(world.client_id)

    def world_event(self, world: WorldConnection, frame: dict[str, Any]) -> None:
        return None
