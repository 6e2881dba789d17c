"""Keeps each world's users in the store as its `player-list` frames name them (so that
GET /auth/known-clients/{id}/users lists them while the world is offline; accounts-auth.md §2.8).

The world gateway calls `UsersRecorder.changed(client_id, account, users)` on the event loop for
every `player-list`; the write (`worlds.remember_users`) runs in a worker thread, at most one at
a time per world: a world that sends lists faster than the store takes them has only its latest
list written next, so a flood of frames costs at most two writes in flight per world.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from vttrelay.relay.accounts import worlds
from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.relay")


class UsersRecorder:
    """Writes the latest user list of each world, one write per world at a time."""

    def __init__(self, store: RelayStore) -> None:
        self.store = store
        self._latest: dict[str, tuple[str, list[Any]]] = {}  # client id -> (account, users)
        self._writing: dict[str, asyncio.Task[None]] = {}

    def changed(self, client_id: str, account: str, users: list[Any]) -> None:
        """A world sent this user list (called on the event loop; returns at once)."""
        self._latest[client_id] = (account, list(users[: worlds.MAX_USERS * 2]))
        if client_id not in self._writing:
            self._writing[client_id] = asyncio.ensure_future(self._write(client_id))

    async def _write(self, client_id: str) -> None:
        try:
            while client_id in self._latest:
                account, users = self._latest.pop(client_id)
                try:
                    await asyncio.to_thread(
                        worlds.remember_users, self.store, client_id, account, users
                    )
                except Exception:
                    log.exception("could not record the users of world %s", client_id)
        finally:
            del self._writing[client_id]

    async def close(self) -> None:
        """Finish the writes in flight (the relay is stopping)."""
        for task in list(self._writing.values()):
            with contextlib.suppress(Exception):
                await task
