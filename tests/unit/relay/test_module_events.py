"""The rules of a `module-notify` report (accounts/module_events.py): what is kept of a frame,
what is dropped, and the per-world rate."""

from __future__ import annotations

from typing import Any

from vttrelay.relay.accounts import module_events
from vttrelay.relay.accounts.module_events import PER_MINUTE, ModuleEvent, ModuleEventLog, parse


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


def test_each_world_keeps_per_minute_reports_and_the_next_minute_starts_anew() -> None:
    log = ModuleEventLog(store=None)  # type: ignore[arg-type]  # `allowed` reads no store
    minute = 600.0
    assert all(log.allowed("w-1", minute + i / 100) for i in range(PER_MINUTE))
    assert not log.allowed("w-1", minute + 59)
    assert log.allowed("w-2", minute + 59)  # another world has its own count
    assert log.allowed("w-1", minute + 60)
