"""A session ends as soon as its world leaves the relay (files-sheet-sessions §4.7: "its session
is ended at once"), not at the next sweep: the relay's world directory tells the manager
(`server.sessions.WorldDepartures`, a directory listener) and the session is unlisted, its slot
free, its process stopped and its token revoked, with no time passing on the manager's clock. A
reconnect that replaced the world's socket is no leaving; the sweep stays the backstop; a
session is stopped once when both come for it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.support.clock import FakeClock

from vttrelay.relay.backends.local import LocalDirectory
from vttrelay.server.sessions import WorldDepartures
from vttrelay.sessions.manager import SessionManager
from vttrelay.sessions.model import RelayHooks, Session, SessionConfig


def manager(
    tmp_path: Path, clock: FakeClock, live: set[str], **config: int
) -> tuple[SessionManager, list[str]]:
    revoked: list[str] = []

    async def mint(account: str, client_id: str, name: str) -> str:
        return f"secret-{client_id}"

    async def revoke(secret: str) -> None:
        revoked.append(secret)

    hooks = RelayHooks(mint, revoke, lambda client_id, account: client_id in live, "ws://x/relay")
    settings = SessionConfig(tmp_path, idle_timeout=0, **config)  # type: ignore[arg-type]
    return SessionManager(settings, hooks, clock=clock, sleep=clock.sleep), revoked


async def running(sessions: SessionManager, client_id: str, account: str = "a") -> Session:
    """A registered session of `client_id` whose process (a real child, `sleep`) runs."""
    sid = f"s-{client_id}"
    session = Session(sid, account, client_id, "embedded", "", "", client_id, 0, f"tok-{sid}")
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    session.child = await sessions.processes.spawn(sid, argv, {}, sessions.logs / f"{sid}.log")
    sessions.sessions[sid] = session
    return session


def test_a_world_that_leaves_ends_its_session_at_once(tmp_path: Path) -> None:
    clock = FakeClock()
    live = {"camp", "keep"}
    sessions, revoked = manager(tmp_path, clock, live, max_per_account=2)
    departures = WorldDepartures(sessions)
    directory = LocalDirectory()
    directory.add_listener(departures)

    async def run() -> None:
        await sessions.open()
        camp = await running(sessions, "camp")
        keep = await running(sessions, "keep")
        assert sessions._full("a") is not None  # two sessions: the account is at its limit
        started = clock.now

        live.discard("camp")  # the gateway releases the world, then tells the listeners
        directory.notify("world_disconnected", SimpleNamespace(client_id="camp", account="a"))
        # unlisted and its slot free before anything is awaited
        assert [s["clientId"] for s in sessions.listing("a", lambda _: None)] == ["keep"]
        assert sessions._full("a") is None
        await asyncio.gather(*sessions._ending)  # its stop, in a task: no sweep, no time
        assert clock.now == started and clock.pending() == 0
        assert camp.child is not None and not camp.child.running
        assert not (sessions.processes.folder / f"{camp.id}.json").exists()
        assert revoked == [camp.token]
        assert keep.child is not None and keep.child.running  # another world's session lives
        await sessions.close()
        assert revoked == [camp.token, keep.token]

    asyncio.run(run())


def test_a_reconnect_that_replaced_the_socket_keeps_the_session(tmp_path: Path) -> None:
    clock = FakeClock()
    live = {"camp"}
    sessions, revoked = manager(tmp_path, clock, live)

    async def run() -> None:
        await sessions.open()
        camp = await running(sessions, "camp")
        # a late notice of the old socket while the world is live again (a directory that
        # tells its listeners after a delay: scaled-out relays): the world did not leave
        sessions.world_left("camp")
        assert list(sessions.sessions) == [camp.id] and not sessions._ending
        await sessions.sweep(lambda _: None)  # the sweep agrees
        assert list(sessions.sessions) == [camp.id]
        assert camp.child is not None and camp.child.running
        live.clear()
        sessions.world_left("camp")  # now it has left
        assert sessions.sessions == {}
        await sessions.close()  # waits for the stop under way
        assert not camp.child.running and revoked == [camp.token]

    asyncio.run(run())


def test_the_sweep_and_the_leaving_stop_a_session_once(tmp_path: Path) -> None:
    clock = FakeClock()
    sessions, revoked = manager(tmp_path, clock, set())

    async def run() -> None:
        await sessions.open()
        first = await running(sessions, "w1")
        second = await running(sessions, "w2")
        sweep = asyncio.ensure_future(sessions.sweep(lambda _: None))
        await asyncio.sleep(0)  # the sweep is stopping w1's process
        sessions.world_left("w1")
        sessions.world_left("w2")  # the sweep will find it gone
        await sweep
        await asyncio.gather(*sessions._ending)
        assert sessions.sessions == {}
        assert sorted(revoked) == sorted([first.token, second.token])  # each once
        assert first.child is not None and not first.child.running
        assert second.child is not None and not second.child.running

    asyncio.run(run())
