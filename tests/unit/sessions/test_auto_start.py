"""Auto-start of stored worlds in the manager and its starter for the request core: which ids
it may start (the account's own, from the id alone), and a start that fails comes back to the
caller as a clear error (the world process exits here: `false` stands in for Python)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from vttrelay.relay.core import RelayError
from vttrelay.server.sessions import AutoStarter
from vttrelay.sessions.manager import RelayHooks, SessionConfig, SessionManager


def manager(tmp_path: Path) -> tuple[SessionManager, list[str]]:
    revoked: list[str] = []

    async def mint(account: str, client_id: str, name: str) -> str:
        return f"secret-{client_id}"

    async def revoke(secret: str) -> None:
        revoked.append(secret)

    hooks = RelayHooks(mint, revoke, lambda client_id, account: False, "ws://127.0.0.1:1/relay")
    return SessionManager(SessionConfig(tmp_path, python="false"), hooks), revoked


def test_only_the_accounts_own_stored_worlds_may_start(tmp_path: Path) -> None:
    sessions, _ = manager(tmp_path)
    camp = sessions.catalog.create("a", "camp")
    assert sessions.may_auto_start("a", camp.client_id)
    assert not sessions.may_auto_start("b", camp.client_id)  # another account's suffix
    assert not sessions.may_auto_start("a", "camp")
    assert not sessions.may_auto_start("a", "../x-" + camp.client_id.rpartition("-")[2])
    other = camp.client_id.replace("camp", "gone")  # the account's pattern, no such world
    assert asyncio.run(sessions.auto_start("a", other, 5)) is None
    assert asyncio.run(sessions.auto_start("b", camp.client_id, 5)) is None


def test_a_failed_start_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    sessions, revoked = manager(tmp_path)
    camp = sessions.catalog.create("a", "camp")
    starter = AutoStarter(sessions)

    async def run() -> None:
        await sessions.open()
        with pytest.raises(RelayError) as refused:
            await starter.start("a", camp.client_id, 5)
        assert refused.value.status == 408
        assert refused.value.body == {
            "error": f"Auto-start of world '{camp.client_id}' failed: the world process exited",
            "clientId": camp.client_id,
        }
        assert await starter.start("a", "nothing-000000", 5) is False

    asyncio.run(run())
    assert sessions.sessions == {} and sessions._starting == set()
    assert revoked == [f"secret-{camp.client_id}"]  # its connection token is revoked
