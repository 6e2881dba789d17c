"""The log of module events (accounts-auth.md §2.13, §10): what a world reports on its own
socket with `module-notify` (`{type, event, details, actor, world}`, wire-protocol.md §3: a
setting changed, a script run, ...), one row per report, listed by GET /auth/activity as
`module_event` entries (`action` the event type, `actor`, `description` the details).

A report is a plain frame the world sends unasked, so it is bounded before anything is stored
(`parse`): `event` a short name (`EVENT`), `details` a string or a JSON object of at most
`MAX_DETAILS` characters, `actor` and `world` strings of at most `MAX_TEXT`; anything else
(a missing or malformed field, an oversized one) is dropped, and the socket stays open, as the
reference ignores what it cannot read. At most `PER_MINUTE` reports of one world are kept per
minute on an instance (the rest dropped and counted in `dropped`). Rows are kept `KEEP_DAYS`
days and at most the newest `MAX_ROWS` per account. `ModuleEventLog.record` is called on the
event loop and writes in a worker thread (`log_writes.py`: at most `MAX_IN_FLIGHT` writes
wait), so the world's frame loop never waits for the store. No owner notification is sent for them.
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

import orjson

from vttrelay.relay.accounts.log_writes import LogWrites
from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.relay")

KEEP_DAYS: Final = 7  # the reference's retention of module events
MAX_ROWS: Final = 1000  # per account
MAX_IN_FLIGHT: Final = 100
PER_MINUTE: Final = 30  # reports kept per world and minute
MAX_TEXT: Final = 256  # actor, world title
MAX_DETAILS: Final = 2000
EVENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


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
    """Takes the worlds' `module-notify` frames: checks them, counts them per world and
    minute, and writes the kept ones in worker threads."""

    def __init__(self, store: RelayStore) -> None:
        super().__init__(functools.partial(write, store), "a module event", MAX_IN_FLIGHT)
        self.store = store
        self._minute = 0
        self._counts: dict[str, int] = {}  # reports per world in `_minute` (worlds heard then)

    def allowed(self, client_id: str, now: float) -> bool:
        """Whether one more report of this world fits its rate this minute."""
        minute = int(now // 60)
        if minute != self._minute:
            self._minute, self._counts = minute, {}
        count = self._counts.get(client_id, 0)
        if count >= PER_MINUTE:
            return False
        self._counts[client_id] = count + 1
        return True

    def record(self, account: str, client_id: str, title: str, frame: dict[str, Any]) -> None:
        """Log the event a world's frame reports (called on the event loop; returns at once)."""
        now = time.time()
        entry = parse(frame, account, client_id, title)
        if entry is None:
            log.debug("world %s sent a malformed module-notify: dropped", client_id)
        elif not self.allowed(client_id, now):
            self.dropped += 1
        else:
            self.submit(entry, now)
