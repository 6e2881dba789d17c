"""The rules of a `module-notify` report (accounts/module_events.py): what is kept of a frame,
what is dropped, and the per-world budget in the relay's counters (in-process, and answered
later as a shared one is)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.support.clock import FakeClock

from vttrelay.relay import ratelimit
from vttrelay.relay.accounts import module_events
from vttrelay.relay.accounts.module_events import PER_MINUTE, ModuleEvent, ModuleEventLog, parse
from vttrelay.relay.backends.local import LocalCounters
from vttrelay.relay.store import RelayStore


def frame(**fields: Any) -> dict[str, Any]:
    return {"type": "module-notify", "event": "settings-change", **fields}


def test_a_report_is_kept_with_its_fields_and_the_known_title_by_default() -> None:
    made = parse(frame(details="d", actor="GM"), "acct", "w-1", "Known")
    assert made == ModuleEvent("acct", "w-1", "Known", "settings-change", "GM", "d")
    assert parse(frame(world="Named"), "acct", "w-1", "Known") == ModuleEvent(
        "acct", "w-1", "Named", "settings-change", "", ""
    )
    at_bound = "d" * module_events.MAX_DETAILS
    assert parse(frame(details=at_bound), "a", "w", "") is not None


def test_malformed_or_oversized_reports_are_dropped() -> None:
    for bad in (
        {"event": ""},
        {"event": "-leading"},
        {"event": "e" * 65},
        {"details": "d" * (module_events.MAX_DETAILS + 1)},
        {"details": {"big": "d" * module_events.MAX_DETAILS}},
        {"details": {"n": 2**70}},
        {"details": 3},
        {"actor": "a" * (module_events.MAX_TEXT + 1)},
        {"world": ["w"]},
    ):
        assert parse(frame(**bad), "a", "w", "") is None, bad
    assert parse({"type": "module-notify"}, "a", "w", "") is None


class SharedCounters(LocalCounters):
    """`Counters` answering as a shared budget does: an awaitable per check, decided later by
    the test (`answer`), in the order asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, asyncio.Future[bool]]] = []

    def allow(  # type: ignore[override]
        self, key: str, per_minute: int, *, window: float = 60.0
    ) -> Awaitable[bool]:
        decision: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.asked.append((key, decision))
        return decision


async def logged(log: ModuleEventLog, store: RelayStore) -> list[str]:
    """The actors of the events written so far, oldest first."""
    await asyncio.sleep(0)  # the decisions' callbacks run
    await log.close()
    return [e["actor"] for e in reversed(module_events.every(store, "acct"))]


async def test_each_world_keeps_per_minute_reports_from_its_budget_in_the_counters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(monotonic=clock))
    store = RelayStore(tmp_path / "relay.db")
    counters = LocalCounters()
    log = ModuleEventLog(store, counters)
    for n in range(PER_MINUTE + 2):
        log.record("acct", "w-1", "", frame(actor=f"a{n}"))
    log.record("acct", "w-2", "", frame(actor="other"))  # another world has its own budget
    assert log.dropped == 2
    assert await logged(log, store) == [f"a{n}" for n in range(PER_MINUTE)] + ["other"]
    # the budget is the world's bucket in the counters: another log on the same counters (an
    # instance the world reconnects through) finds it spent
    again = ModuleEventLog(store, counters)
    again.record("acct", "w-1", "", frame(actor="elsewhere"))
    assert again.dropped == 1 and not counters.has_token(module_events.budget("w-1"), PER_MINUTE)
    clock.advance(60 / PER_MINUTE)  # one report's worth refilled
    again.record("acct", "w-1", "", frame(actor="later"))
    again.record("acct", "w-1", "", frame(actor="too soon"))
    assert again.dropped == 2
    assert (await logged(again, store))[-1] == "later"
    store.close()


async def test_a_shared_budget_decides_after_the_frame_loop_has_moved_on(tmp_path: Path) -> None:
    """With a shared budget `record` returns before the answer: kept when it says yes, dropped
    when it says no or fails; at most MAX_IN_FLIGHT reports wait for an answer."""
    store = RelayStore(tmp_path / "relay.db")
    counters = SharedCounters()
    log = ModuleEventLog(store, counters)
    for actor in ("kept", "refused", "failed", "also kept"):
        log.record("acct", "w-1", "", frame(actor=actor))
    assert [key for key, _ in counters.asked] == [module_events.budget("w-1")] * 4
    assert log.dropped == 0 and module_events.every(store, "acct") == []
    for (_, decision), answer in zip(counters.asked, (True, False, None, True), strict=True):
        if answer is None:
            decision.set_exception(ConnectionError("redis went away"))
        else:
            decision.set_result(answer)
    assert await logged(log, store) == ["kept", "also kept"]
    assert log.dropped == 2
    counters.asked.clear()
    for n in range(module_events.MAX_IN_FLIGHT + 5):  # the answers are slow: bounded waiting
        log.record("acct", "w-2", "", frame(actor=f"b{n}"))
    assert len(counters.asked) == module_events.MAX_IN_FLIGHT and log.dropped == 2 + 5
    for _, decision in counters.asked:
        decision.set_result(False)
    await asyncio.sleep(0)
    log.record("acct", "w-2", "", frame(actor="after"))  # the waiting room is free again
    assert len(counters.asked) == module_events.MAX_IN_FLIGHT + 1
    counters.asked[-1][1].set_result(True)
    assert (await logged(log, store))[-1] == "after"
    store.close()
