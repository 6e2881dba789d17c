"""Session limits of the manager: sessions per account and on the relay, checked before any
process starts; a stored world of another account cannot be started; the sweep ends a session
whose world has left."""

from __future__ import annotations

import asyncio
from pathlib import Path

from vttrelay.sessions.manager import SessionManager
from vttrelay.sessions.model import RelayHooks, Session, SessionConfig


def manager(tmp_path: Path, **config: int) -> SessionManager:
    async def mint(account: str, client_id: str, name: str) -> str:
        raise AssertionError("no token is minted for a refused start")

    async def revoke(secret: str) -> None:
        return None

    hooks = RelayHooks(mint, revoke, lambda client_id, account: False, "ws://127.0.0.1:1/relay")
    return SessionManager(SessionConfig(tmp_path, **config), hooks)  # type: ignore[arg-type]


def running(sessions: SessionManager, account: str, n: int) -> None:
    for i in range(n):
        sid = f"{account}-{i}"
        sessions.sessions[sid] = Session(sid, account, f"w{sid}", "embedded", "", "", "", 0, "t")


def test_per_account_and_relay_limits(tmp_path: Path) -> None:
    sessions = manager(tmp_path, max_per_account=2, max_total=3)
    sessions.catalog.create("a", "camp")
    sessions.catalog.create("b", "camp")
    running(sessions, "a", 2)
    status, body = asyncio.run(sessions.start("a", {"worldName": "camp"}))
    assert (status, body) == (
        429,
        {"error": "maximum headless sessions (2) reached for this account"},
    )
    running(sessions, "c", 1)
    status, body = asyncio.run(sessions.start("b", {"worldName": "camp"}))
    assert (status, body) == (429, {"error": "maximum headless sessions (3) reached on this relay"})
    status, body = asyncio.run(sessions.start("c", {"worldName": "camp"}))
    assert status == 404  # "camp" is a and b's, not c's


def test_the_sweep_ends_the_sessions_whose_world_left(tmp_path: Path) -> None:
    sessions = manager(tmp_path, idle_timeout=0)  # never idle: only the world's leaving counts
    running(sessions, "a", 2)  # worlds wa-0 and wa-1
    sessions.hooks.is_live = lambda client_id, account: client_id == "wa-0" and account == "a"
    asyncio.run(sessions.sweep(lambda client_id: None))
    assert list(sessions.sessions) == ["a-0"]
