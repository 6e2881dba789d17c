"""The log of module events (accounts-auth.md §2.13, §10): what a world reports on its own
socket with `module-notify` (`{type, event, details, actor, world}`, wire-protocol.md §3: a
setting changed, a script run, ...), one row per report, listed by GET /auth/activity as
`module_event` entries (`action` the event type, `actor`, `description` the details).

A report is a plain frame the world sends unasked, so it is bounded before anything is stored
(`parse`): `event` a short name (`EVENT`), `details` a string or a JSON object of at most
`MAX_DETAILS` characters, `actor` and `world` strings of at most `MAX_TEXT`; anything else
(a missing or malformed field, an oversized one) is dropped, and the socket stays open, as the
reference ignores what it cannot read. A world's reports are kept at `PER_MINUTE` a minute (a
token bucket of `PER_MINUTE`, its `budget` in the relay's `Counters`, so one budget over every
instance the world connects through; the rest dropped and counted in `dropped`). Rows are kept
`KEEP_DAYS` days and at most the newest `MAX_ROWS` per account. `ModuleEventLog.record` is
called on the event loop and returns at once: a shared budget's answer is waited for in a
callback (at most `MAX_IN_FLIGHT` at once), and each kept report is written in a worker thread
(`log_writes.py`: at most `MAX_IN_FLIGHT` writes wait), so the world's frame loop never waits
for Redis or the store. No owner notification is sent for them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

import orjson

from vttrelay.relay.accounts.log_writes import LogWrites
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.relay")

KEEP_DAYS: Final = 7  # the reference's retention of module events
MAX_ROWS: Final = 1000  # per account
MAX_IN_FLIGHT: Final = 100
PER_MINUTE: Final = 30  # reports kept per world and minute
MAX_TEXT: Final = 256  # actor, world title
MAX_DETAILS: Final = 2000
EVENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def budget(client_id: str) -> str:
    """The name of a world's report budget in `Counters`."""
    return f"world:module-events:{client_id}"


@dataclass(frozen=True)
class ModuleEvent:
    """One reported event as logged."""

    account: str
    client_id: str
    world_title: str
    event_type: str
    actor: str
    description: str


def _text(value: Any, limit: int) -> str | None:
    """An optional string field: "" when absent, None when malformed or longer than `limit`."""
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > limit:
        return None
    return value


def parse(frame: dict[str, Any], account: str, client_id: str, title: str) -> ModuleEvent | None:
    """The event a `module-notify` frame of world `client_id` reports, or None when the frame
    is malformed or oversized (see the module docstring). `title` is the world's known title,
    used when the frame names none."""
    event = frame.get("event")
    if not isinstance(event, str) or not EVENT.fullmatch(event):
        return None
    details = frame.get("details")
    if isinstance(details, dict):
        try:
            details = orjson.dumps(details).decode()
        except TypeError:  # not JSON (integers past 64 bits, ...)
            return None
    description = _text(details, MAX_DETAILS)
    actor = _text(frame.get("actor"), MAX_TEXT)
    world = _text(frame.get("world"), MAX_TEXT)
    if description is None or actor is None or world is None:
        return None
    return ModuleEvent(account, client_id, world or title[:MAX_TEXT], event, actor, description)


def write(store: RelayStore, entry: ModuleEvent, now: float | None = None) -> None:
    """Log one event reported at `now`; prune the rows past their time or the account's
    count."""
    now = time.time() if now is None else now
    with store.transaction() as db:
        db.execute(
            "INSERT INTO module_event_logs (id, account, client_id, world_title, event_type,"
            " actor, description, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (
                "me_" + secrets.token_hex(8),
                entry.account,
                entry.client_id,
                entry.world_title,
                entry.event_type,
                entry.actor,
                entry.description,
                now,
            ),
        )
        db.execute("DELETE FROM module_event_logs WHERE created_at < ?", (now - KEEP_DAYS * 86400,))
        db.execute(
            "DELETE FROM module_event_logs WHERE account = ? AND id NOT IN (SELECT id FROM"
            " module_event_logs WHERE account = ? ORDER BY created_at DESC LIMIT ?)",
            (entry.account, entry.account, MAX_ROWS),
        )


def every(store: RelayStore, account: str) -> list[dict[str, Any]]:
    """All of the account's logged module events (at most MAX_ROWS), newest first."""
    rows = store.db.all(
        "SELECT * FROM module_event_logs WHERE account = ? ORDER BY created_at DESC, id LIMIT ?",
        (account, MAX_ROWS),
    )
    return [dict(row) for row in rows]


class ModuleEventLog(LogWrites[ModuleEvent]):
    """Takes the worlds' `module-notify` frames: checks them, takes each from its world's
    budget in `counters`, and writes the kept ones in worker threads."""

    def __init__(self, store: RelayStore, counters: Counters) -> None:
        super().__init__(functools.partial(write, store), "a module event", MAX_IN_FLIGHT)
        self.store = store
        self.counters = counters
        self._deciding = 0  # reports waiting for a shared budget's answer

    def record(self, account: str, client_id: str, title: str, frame: dict[str, Any]) -> None:
        """Log the event a world's frame reports (called on the event loop; returns at once)."""
        now = time.time()
        entry = parse(frame, account, client_id, title)
        if entry is None:
            log.debug("world %s sent a malformed module-notify: dropped", client_id)
            return
        if self._deciding >= MAX_IN_FLIGHT:  # a shared budget answering slowly
            self.dropped += 1
            return
        allowed = self.counters.allow(budget(client_id), PER_MINUTE)
        if allowed is True:
            self.submit(entry, now)
        elif allowed is False:
            self.dropped += 1
        else:  # a shared budget: kept or dropped once it answers
            self._deciding += 1
            answer = asyncio.ensure_future(allowed)
            answer.add_done_callback(functools.partial(self._decided, entry, now))

    def _decided(self, entry: ModuleEvent, now: float, answer: asyncio.Future[bool]) -> None:
        self._deciding -= 1
        if answer.cancelled():
            self.dropped += 1
        elif answer.exception() is not None:
            self.dropped += 1
            log.warning("could not check a module event's budget: %r", answer.exception())
        elif answer.result():
            self.submit(entry, now)
        else:
            self.dropped += 1
