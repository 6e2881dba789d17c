"""What a world hears when it asks for its account's worlds on its own socket (`/relay`
`{"type":"get-known-clients","requestId"}`, accounts-auth.md §7.12): every known world of the
account with `clientId`, `worldTitle`, `customName`, `systemTitle`, `systemId`, `isOnline`
(connected to any instance now), `canAutoStart` (auto-start on and a credential linked) and
`publicUrl` (every string "" when unknown, lists never null; the `MAX_LISTED` most recently
seen), and `activeTokenId` as GET /auth/known-clients gives it (the id of the token the world's
live socket authenticated with, 0 when offline: our addition, §7.12 does not list it), and the
asking world's own
cross-world permissions as `tokenScopes` and `tokenAllowedTargets`. A world whose connection
token was revoked meanwhile gets the reference's error result. `/ws/api` never answers this
type (it is not one of its message types).
"""

from __future__ import annotations

import asyncio
from typing import Any

from vttrelay import protocol
from vttrelay.relay.accounts import worlds
from vttrelay.relay.backends.ports import WorldDirectory
from vttrelay.relay.store import KnownClient, RelayStore

TEXTS = ("worldTitle", "customName", "systemTitle", "systemId", "publicUrl")
MAX_LISTED = 1000  # worlds in one answer (the account's most recently seen)


def _entry(world: KnownClient, active: str | None, settings: worlds.WorldSettings | None) -> Any:
    meta = world.metadata
    return {
        "clientId": world.client_id,
        **{name: str(meta.get(name) or "") for name in TEXTS},
        "isOnline": active is not None,
        "canAutoStart": bool(settings and settings.can_auto_start),
        "activeTokenId": active or 0,
    }


def _read(
    store: RelayStore, account: str, token_id: str
) -> tuple[list[KnownClient], dict[str, worlds.WorldSettings]] | None:
    if not store.live_token_ids([token_id]):
        return None
    return store.known_clients(account), worlds.account_world_settings(store, account)


class WorldList:
    """Answers `get-known-clients` from the store and the world directory."""

    def __init__(self, store: RelayStore, directory: WorldDirectory) -> None:
        self.store = store
        self.directory = directory

    async def answer(
        self, client_id: str, account: str, token_id: str, request_id: str
    ) -> dict[str, Any]:
        read = await asyncio.to_thread(_read, self.store, account, token_id)
        if read is None:
            return protocol.known_clients_error(request_id, "connection token not found or revoked")
        known, settings = read
        live = {w.client_id: w.token_id for w in self.directory.for_account(account)}
        own = settings.get(client_id)
        return {
            "type": protocol.KNOWN_CLIENTS_RESULT,
            "requestId": request_id,
            "clients": [
                _entry(w, live.get(w.client_id), settings.get(w.client_id))
                for w in known[:MAX_LISTED]
            ],
            "tokenScopes": list(own.remote_scopes) if own else [],
            "tokenAllowedTargets": list(own.allowed_targets) if own else [],
        }
