"""Auto-start of stored worlds in the manager and its starter for the request core: which ids
it may start (the account's own, from the id alone), and a start that fails comes back to the
caller as a clear error (the world process exits here: `false` stands in for Python). A paired
Foundry world starts only when its owner armed it, and each missing piece (no credential
linked, a credential gone or unreadable, a host the operator does not allow) is the reference's
refusal, with nothing started."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.support.clock import FakeClock

from vttrelay.relay.core import RelayError
from vttrelay.server.sessions import AutoStarter
from vttrelay.sessions.manager import FOREIGN_HOST, SessionManager
from vttrelay.sessions.model import (
    ArmedWorld,
    PairedWorld,
    RelayHooks,
    SessionConfig,
    StoredLogin,
)


def manager(tmp_path: Path, clock: FakeClock | None = None) -> tuple[SessionManager, list[str]]:
    revoked: list[str] = []

    async def mint(account: str, client_id: str, name: str) -> str:
        return f"secret-{client_id}"

    async def revoke(secret: str) -> None:
        revoked.append(secret)

    hooks = RelayHooks(mint, revoke, lambda client_id, account: False, "ws://127.0.0.1:1/relay")
    config = SessionConfig(tmp_path, python="false", auto_start_worlds=True)
    if clock is None:
        return SessionManager(config, hooks), revoked
    return SessionManager(config, hooks, clock=clock, sleep=clock.sleep), revoked


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


def foundry_manager(
    tmp_path: Path, armed: ArmedWorld | None, login: StoredLogin | str | None
) -> SessionManager:
    async def mint(account: str, client_id: str, name: str) -> str:
        return "secret"

    async def revoke(secret: str) -> None:
        return None

    async def find_armed(account: str, client_id: str) -> ArmedWorld | None:
        return armed if account == "a" and armed and client_id == armed.paired.client_id else None

    async def stored_login(account: str, credential_id: str) -> StoredLogin | str | None:
        return login

    hooks = RelayHooks(
        mint, revoke, lambda c, a: False, armed=find_armed, stored_login=stored_login
    )
    config = SessionConfig(tmp_path, headless_allow=("foundry.example",))
    return SessionManager(config, hooks)


def test_a_paired_foundry_world_starts_only_when_armed_with_a_usable_credential(
    tmp_path: Path,
) -> None:
    paired = PairedWorld("home-world", "home", "Home")
    good = StoredLogin("http://foundry.example/", "Gamemaster", "pw", "")

    async def answer(manager: SessionManager, account: str = "a") -> object:
        return await manager.auto_start(account, "home-world", 5)

    # not armed (auto-start off, or another account's): no start, the usual offline answer
    assert asyncio.run(answer(foundry_manager(tmp_path, None, good))) is None
    armed = ArmedWorld(paired, "cred_1")
    assert asyncio.run(answer(foundry_manager(tmp_path, armed, good), "b")) is None
    cases: list[tuple[ArmedWorld, StoredLogin | str | None, int, str]] = [
        (
            ArmedWorld(paired, None),
            good,
            409,
            "clientId home-world has auto-start enabled but no credential assigned; "
            "select one in Connections",
        ),
        (
            armed,
            None,
            409,
            "KnownClient.credentialId references missing or unauthorized credential cred_1",
        ),
        (armed, "no key", 400, "decrypt credential: no key"),
        (
            armed,
            StoredLogin("http://elsewhere.example/", "Gamemaster", "pw", ""),
            403,
            FOREIGN_HOST,
        ),
    ]
    for world, login, status, text in cases:
        manager = foundry_manager(tmp_path, world, login)
        assert asyncio.run(answer(manager)) == (status, {"error": text})
        assert manager.sessions == {} and manager._starting == set()


def test_a_call_during_a_start_session_of_the_world_waits_for_it(tmp_path: Path) -> None:
    clock = FakeClock()
    sessions, revoked = manager(tmp_path, clock)
    camp = sessions.catalog.create("a", "camp")
    live: set[str] = set()
    sessions.hooks.is_live = lambda client_id, account: client_id in live

    def connects() -> None:  # the world of the /start-session under way connects
        live.add(camp.client_id)
        sessions._starting.discard(camp.client_id)

    async def run() -> None:
        sessions._starting.add(camp.client_id)  # /start-session is starting it
        clock.call_later(4.9, connects)
        started = clock.now
        answer = await sessions.auto_start("a", camp.client_id, 5)
        assert answer == (200, {"clientId": camp.client_id, "success": True})
        assert 4.9 <= clock.now - started < 5  # it waited for it, and no longer

    asyncio.run(run())
    assert list((tmp_path / "sessions" / "run").glob("*.json")) == []  # no second process
    assert revoked == []


def test_a_call_during_a_start_session_that_never_connects_ends_at_its_timeout(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    sessions, revoked = manager(tmp_path, clock)
    camp = sessions.catalog.create("a", "camp")

    async def run() -> None:
        sessions._starting.add(camp.client_id)  # /start-session is starting it, for ever
        started = clock.now
        answer = await sessions.auto_start("a", camp.client_id, 5)
        assert answer == (408, {"error": "the world did not connect within 5 s"})
        assert 5 <= clock.now - started < 5.1

    asyncio.run(run())
    assert revoked == []
