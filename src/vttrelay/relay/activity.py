"""The activity log: every API call's facts (time, account, key id and name, world, route,
status, duration, client address; never a secret or a body) kept in the relay's store for
`RelayConfig.activity_days` and at most `activity_max_rows` calls, and read back filtered
(`Filter`, `find`) or counted per key and hour (`usage`) by the dashboard.

On the hot path a call costs one append (`ActivityLog.add`) of the request's
`accesslog.RequestRecord`, the tuple the middleware made for the access line too (the key object
the key cache holds, not its fields). Every `activity_flush_interval` seconds a worker thread
completes what is pending (the key's account, id and name) and writes it as one row per account
(`activity_batches`: the calls as one JSON array), so the store sees one insert a second, not
one per request (a row per call cost the forwarded mix +14 % instructions per request,
bench/RESULTS.md). At most
`MAX_PENDING` wait in memory (past it the oldest are dropped and counted in `dropped`). Old
batches are pruned after a write at most once a minute (`prune`). Reading decodes the batches
newest first, one at a time (each at most `MAX_BATCH` calls: a few ms of CPU each).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from vttrelay.relay.accesslog import RequestRecord
from vttrelay.relay.store.database import Database

log = logging.getLogger("vttrelay.activity")

MAX_PENDING = 50_000  # records waiting for the next write (a slow store drops the oldest)
MAX_BATCH = 2_000  # calls in one stored row
PRUNE_EVERY = 60.0
MAX_SHOWN = 500  # rows one query returns
MAX_FILTER_TEXT = 256
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")

INSERT = (
    "INSERT INTO activity_batches (id, account, first_at, last_at, calls, data)"
    " VALUES (?, ?, ?, ?, ?, ?)"
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
        pending = self._pending
        by_account: dict[str, list[tuple[Any, ...]]] = {}
        count = 0
        while pending:
            r = pending.popleft()
            key = r.key
            key_id, key_name = (key.id, key.name) if key is not None else ("", "")
            account = r.account or (key.account if key is not None else "")
            by_account.setdefault(account, []).append(
                (r.at, key_id, key_name, r.world, r.method, r.route, r.status, r.ms, r.peer)
            )
            count += 1
        if by_account:
            rows = [
                (
                    secrets.token_hex(8),
                    account,
                    calls[i][0],
                    calls[min(i + MAX_BATCH, len(calls)) - 1][0],
                    len(calls[i : i + MAX_BATCH]),
                    orjson.dumps(calls[i : i + MAX_BATCH]).decode(),
                )
                for account, calls in by_account.items()
                for i in range(0, len(calls), MAX_BATCH)
            ]
            with self.db.transaction() as conn:
                conn.executemany(INSERT, rows)
        now = time.time()
        if now - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = now
            self.prune(now)
        return count

    def prune(self, now: float) -> None:
        """Forget batches older than the kept time, then the oldest past `max_rows` calls."""
        self.db.run("DELETE FROM activity_batches WHERE last_at < ?", (now - self.keep_seconds,))
        total = 0
        for row in self.db.all("SELECT last_at, calls FROM activity_batches ORDER BY last_at DESC"):
            total += int(row["calls"])
            if total > self.max_rows:
                self.db.run("DELETE FROM activity_batches WHERE last_at <= ?", (row["last_at"],))
                break

    async def run(self, interval: float) -> None:
        """Write every `interval` seconds until cancelled, then once more. A turn with nothing
        to write and no prune due costs no thread hand-over."""
        try:
            while True:
                await asyncio.sleep(interval)
                if not self._pending and time.time() - self._pruned_at < PRUNE_EVERY:
                    continue
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


def _calls(db: Database, account: str | None, since: float | None) -> Iterator[Activity]:
    """The stored calls (of `account`; None: every account), newest batch first, decoded one
    batch at a time."""
    clauses: list[str] = ["last_at >= ?"]
    args: list[Any] = [since or 0.0]
    if account is not None:
        clauses.append("account = ?")
        args.append(account)
    where = " AND ".join(clauses)
    for batch in db.all(
        f"SELECT id, account FROM activity_batches WHERE {where} ORDER BY last_at DESC", args
    ):
        row = db.one("SELECT data FROM activity_batches WHERE id = ?", (batch["id"],))
        if row is None:  # pruned meanwhile
            continue
        owner = batch["account"]
        for at, key_id, key_name, world, method, route, status, ms, peer in reversed(
            orjson.loads(row["data"])
        ):
            yield Activity(at, owner, key_id, key_name, world, method, route, status, ms, peer)


def _matches(a: Activity, f: Filter) -> bool:
    if f.world and a.world != f.world or f.key_id and a.key_id != f.key_id:
        return False
    if f.route and a.route != f.route:
        return False
    if f.status_class and a.status // 100 != int(f.status_class[0]):
        return False
    if f.failures and a.status < 400:
        return False
    if f.since is not None and a.at < f.since:
        return False
    return not (f.until is not None and a.at >= f.until)


def find(db: Database, account: str | None, f: Filter, limit: int = MAX_SHOWN) -> list[Activity]:
    """The newest calls matching `f`, of `account` (None: every account, the operator's view)."""
    limit = min(limit, MAX_SHOWN)
    found = [a for a in _calls(db, account, f.since) if _matches(a, f)]
    found.sort(key=lambda a: -a.at)
    return found[:limit]


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
    names: dict[str, str] = {}
    hours: dict[str, list[int]] = {}
    days: dict[str, list[int]] = {}
    for a in _calls(db, account, (day_now - DAYS_SHOWN + 1) * 86400.0):
        key = a.key_id
        names.setdefault(key, a.key_name)
        h = hours.setdefault(key, [0] * HOURS_SHOWN)
        d = days.setdefault(key, [0] * DAYS_SHOWN)
        hour = int(a.at // 3600)
        if 0 <= hour_now - hour < HOURS_SHOWN:
            h[HOURS_SHOWN - 1 - (hour_now - hour)] += 1
        if 0 <= day_now - hour // 24 < DAYS_SHOWN:
            d[DAYS_SHOWN - 1 - (day_now - hour // 24)] += 1
    ordered = sorted(days, key=lambda k: -sum(days[k]))[:MAX_KEYS_CHARTED]
    return [KeyUsage(k, names[k], tuple(hours[k]), tuple(days[k])) for k in ordered]


def recent(db: Database, account: str, limit: int, since: float | None = None) -> list[Activity]:
    """The account's newest stored calls, at most `limit` of them (decoded batch by batch and
    no further: the work is bounded by `limit` plus one batch), newest first."""
    found: list[Activity] = []
    for call in _calls(db, account, since):
        found.append(call)
        if len(found) >= limit:
            break
    found.sort(key=lambda a: -a.at)
    return found
