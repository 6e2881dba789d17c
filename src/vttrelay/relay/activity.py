"""The activity log: every API call's facts (time, account, key id and name, world, route,
status, duration, client address; never a secret or a body) kept in the relay's store for
`RelayConfig.activity_days` and at most `activity_max_rows` calls, and read back filtered
(`Filter`, `find`) or counted per key and hour (`usage`) by the dashboard.

On the hot path a call costs one append (`ActivityLog.add`) of the request's
`accesslog.RequestRecord`, the tuple the middleware made for the access line too (the key object
the key cache holds, not its fields). Every `activity_flush_interval` seconds a worker thread
completes what is pending (the key's account, id and name, once per key) and writes it as one
row per account and key (`activity_batches`: the key once and the calls as one JSON array), so
the store sees one insert a second, not one per request (a row per call cost the forwarded mix
+14 % instructions per request, bench/RESULTS.md). At most `MAX_PENDING` wait in memory (past
it the oldest are dropped and counted in `dropped`). Old batches are pruned after a write at
most once a minute (`prune`). Reading decodes the batches newest first, one at a time (each at
most `MAX_BATCH` calls: a few ms of CPU each).
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
from operator import itemgetter
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
        """Write what is pending (blocking: `run` calls it in a worker thread); the count.

        Per call only C-level work: the pending records taken, each one's stored fields picked
        by one `itemgetter`, and the batch encoded by one `orjson.dumps`. The key's id and name
        and the account are looked up once per key per batch (a row holds one key's calls)."""
        pending = self._pending
        popleft = pending.popleft
        records = [popleft() for _ in range(len(pending))]
        if records:
            rows = [
                (secrets.token_hex(8), account, chunk[0][0], chunk[-1][0], len(chunk), data)
                for account, key_id, key_name, calls in _by_key(records)
                for i in range(0, len(calls), MAX_BATCH)
                for chunk in (calls[i : i + MAX_BATCH],)
                for data in (orjson.dumps({"key": [key_id, key_name], "calls": chunk}).decode(),)
            ]
            with self.db.transaction() as conn:
                conn.executemany(INSERT, rows)
        now = time.time()
        if now - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = now
            self.prune(now)
        return len(records)

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


# a call as stored: (at, world, method, route, status, ms, peer), picked from a RequestRecord
_STORED = itemgetter(0, 3, 4, 6, 7, 8, 9)
_KEY = itemgetter(1)
_ACCOUNT = itemgetter(2)


def _by_key(records: list[RequestRecord]) -> Iterator[tuple[str, str, str, list[tuple[Any, ...]]]]:
    """The records' stored calls per (account, key id, key name), in order. The key objects
    (one per key in the key cache) are read once each; one key and one account (the usual
    batch) cost no Python per call, several cost one dict look-up and append per call."""
    calls = list(map(_STORED, records))
    keys = list(map(_KEY, records))
    accounts = list(map(_ACCOUNT, records))
    named: dict[int, tuple[str, str, str]] = {}  # id of a key object -> (account, id, name)
    for ref, key in dict(zip(map(id, keys), keys, strict=True)).items():
        named[ref] = ("", "", "") if key is None else (key.account, key.id, key.name)
    distinct_accounts = set(accounts)
    if len(set(named.values())) == 1 and len(distinct_accounts) == 1:
        account, key_id, key_name = next(iter(named.values()))
        yield distinct_accounts.pop() or account, key_id, key_name, calls
        return
    groups: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
    for ref, acting, call in zip(map(id, keys), accounts, calls, strict=True):
        account, key_id, key_name = named[ref]
        group = (acting or account, key_id, key_name)
        found = groups.get(group)
        if found is None:
            groups[group] = found = []
        found.append(call)
    for (account, key_id, key_name), group_calls in groups.items():
        yield account, key_id, key_name, group_calls


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
        data = orjson.loads(row["data"])
        if isinstance(data, list):  # written before the key was stored once per batch
            for at, key_id, key_name, world, method, route, status, ms, peer in reversed(data):
                yield Activity(at, owner, key_id, key_name, world, method, route, status, ms, peer)
            continue
        key_id, key_name = data["key"]
        for at, world, method, route, status, ms, peer in reversed(data["calls"]):
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
