"""The activity log: every API call's facts (`accesslog.RequestRecord`: time, account, key,
world, route, status, duration, client address; never a secret or a body) kept in the relay's
store for `RelayConfig.activity_days` and at most `activity_max_rows` rows, and read back
filtered (`Filter`, `find`) or counted per key and hour (`usage`) by the dashboard.

On the hot path a call costs one list append (`ActivityLog.add`); the rows are written with one
`executemany` per `activity_flush_interval` seconds in a worker thread (`run`), and at most
`MAX_PENDING` wait in memory (past it the oldest are dropped and counted in `dropped`). Old rows
are pruned after a write at most once a minute (`prune`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from vttrelay.relay.accesslog import RequestRecord
from vttrelay.relay.database import Database

log = logging.getLogger("vttrelay.activity")

MAX_PENDING = 50_000  # records waiting for the next write (a slow store drops the oldest)
PRUNE_EVERY = 60.0
MAX_SHOWN = 500  # rows one query returns
MAX_FILTER_TEXT = 256
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")

INSERT = (
    "INSERT INTO activity (at, hour, account, key_id, key_name, world, method, route, status,"
    " ms, peer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class ActivityLog:
    """API calls collected in memory and written to the store in batches."""

    def __init__(self, db: Database, days: float, max_rows: int) -> None:
        self.db = db
        self.keep_seconds = days * 86400.0
        self.max_rows = max_rows
        self.enabled = days > 0 and max_rows > 0
        self._pending: deque[RequestRecord] = deque(maxlen=MAX_PENDING)
        self.dropped = 0
        self._pruned_at = 0.0

    def add(self, record: RequestRecord) -> None:
        pending = self._pending
        if len(pending) == MAX_PENDING:
            self.dropped += 1
        pending.append(record)

    def flush(self) -> int:
        """Write what is pending (blocking: `run` calls it in a worker thread); the count."""
        batch = []
        pending = self._pending
        while pending:
            batch.append(pending.popleft())
        if batch:
            rows = [(r.at, int(r.at // 3600), *r[1:]) for r in batch]
            with self.db.transaction() as conn:
                conn.executemany(INSERT, rows)
        now = time.time()
        if now - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = now
            self.prune(now)
        return len(batch)

    def prune(self, now: float) -> None:
        """Forget rows older than the kept time, then the oldest past `max_rows`."""
        self.db.run("DELETE FROM activity WHERE at < ?", (now - self.keep_seconds,))
        row = self.db.one(
            "SELECT at FROM activity ORDER BY at DESC LIMIT 1 OFFSET ?", (self.max_rows,)
        )
        if row is not None:
            self.db.run("DELETE FROM activity WHERE at <= ?", (row["at"],))

    async def run(self, interval: float) -> None:
        """Write every `interval` seconds until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(interval)
                try:
                    await asyncio.to_thread(self.flush)
                except Exception:
                    log.exception("could not write the activity log")
        finally:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.flush)


@dataclass(frozen=True)
class Filter:
    """What the activity page asks for (every field optional; texts match exactly)."""

    world: str = ""
    key_id: str = ""
    route: str = ""
    status_class: str = ""  # one of STATUS_CLASSES
    failures: bool = False  # status 400 and above
    since: float | None = None
    until: float | None = None

    def __post_init__(self) -> None:
        for text in (self.world, self.key_id, self.route):
            if len(text) > MAX_FILTER_TEXT:
                raise ValueError(f"a filter text is at most {MAX_FILTER_TEXT} characters")
        if self.status_class and self.status_class not in STATUS_CLASSES:
            raise ValueError("status class: one of " + ", ".join(STATUS_CLASSES))


@dataclass(frozen=True)
class Activity:
    """One recorded call, as read back."""

    at: float
    account: str
    key_id: str
    key_name: str
    world: str
    method: str
    route: str
    status: int
    ms: float
    peer: str


def _where(account: str | None, f: Filter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    for column, value in (
        ("account", account),
        ("world", f.world),
        ("key_id", f.key_id),
        ("route", f.route),
    ):
        if value:
            clauses.append(f"{column} = ?")
            args.append(value)
    if f.status_class:
        low = int(f.status_class[0]) * 100
        clauses.append("status >= ? AND status < ?")
        args += [low, low + 100]
    if f.failures:
        clauses.append("status >= 400")
    if f.since is not None:
        clauses.append("at >= ?")
        args.append(f.since)
    if f.until is not None:
        clauses.append("at < ?")
        args.append(f.until)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def find(db: Database, account: str | None, f: Filter, limit: int = MAX_SHOWN) -> list[Activity]:
    """The newest calls matching `f`, of `account` (None: every account, the operator's view)."""
    where, args = _where(account, f)
    rows = db.all(
        "SELECT at, account, key_id, key_name, world, method, route, status, ms, peer"
        f" FROM activity{where} ORDER BY at DESC LIMIT ?",
        (*args, min(limit, MAX_SHOWN)),
    )
    return [Activity(**{k: row[k] for k in Activity.__dataclass_fields__}) for row in rows]


@dataclass(frozen=True)
class KeyUsage:
    """One key's calls per hour over the last 24 hours and per day over the last 30 days
    (oldest first; the last element is the current hour or day)."""

    key_id: str
    key_name: str
    hours: tuple[int, ...]
    days: tuple[int, ...]


HOURS_SHOWN = 24
DAYS_SHOWN = 30
MAX_KEYS_CHARTED = 20


def usage(db: Database, account: str | None, now: float) -> list[KeyUsage]:
    """Calls per key per hour and day (the keys with the most calls in 30 days first)."""
    hour_now = int(now // 3600)
    day_now = hour_now // 24
    first_hour = (day_now - DAYS_SHOWN + 1) * 24
    where, args = _where(account, Filter())
    where += (" AND" if where else " WHERE") + " hour >= ?"
    rows = db.all(
        "SELECT key_id, MAX(key_name) AS key_name, hour, COUNT(*) AS n FROM activity"
        f"{where} GROUP BY key_id, hour",
        (*args, first_hour),
    )
    names: dict[str, str] = {}
    hours: dict[str, list[int]] = {}
    days: dict[str, list[int]] = {}
    for row in rows:
        key = row["key_id"]
        names[key] = row["key_name"]
        h = hours.setdefault(key, [0] * HOURS_SHOWN)
        d = days.setdefault(key, [0] * DAYS_SHOWN)
        hour, n = int(row["hour"]), int(row["n"])
        if hour_now - hour < HOURS_SHOWN:
            h[HOURS_SHOWN - 1 - (hour_now - hour)] += n
        if day_now - hour // 24 < DAYS_SHOWN:
            d[DAYS_SHOWN - 1 - (day_now - hour // 24)] += n
    ordered = sorted(days, key=lambda k: -sum(days[k]))[:MAX_KEYS_CHARTED]
    return [KeyUsage(k, names[k], tuple(hours[k]), tuple(days[k])) for k in ordered]
