"""Pair requests and API-key requests (endpoints-beyond-seed §12): what both kinds share, their
states and the store helpers over their two tables of one shape. The requests themselves:
`pair_requests.py` (a world asks to be paired) and `key_requests.py` (an app asks for a key).

A world's module (its "Pair" and "Upgrade" buttons) or an app asks without credentials; the
relay's owner approves or refuses; the asker polls the status and receives, once, a pairing code
(which it trades at `POST /auth/pair` as usual), an "upgraded" answer, or an API key. Those two
modules are the one place where that happens: the HTTP handlers (`pairing.py`), the CLI
(`vttrelay pair approve`, `vttrelay keys approve`, ...) and a dashboard call them. Refusals
raise the relay's one error type, `core.RelayError`, with the reference's statuses and texts,
and change nothing; each change is one store transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import orjson

from vttrelay.relay.core import error
from vttrelay.relay.store import RelayStore, insert_with_new_code
from vttrelay.relay.store.database import Connection, Row

Answer = tuple[int, dict[str, Any]]  # an HTTP status and a JSON body

REQUEST_TTL = 600.0  # a request waits 10 minutes for a decision
PURGE_AFTER = 86400.0  # requests are deleted a day after they expire

PENDING = "pending"
APPROVED = "approved"
DENIED = "denied"
EXCHANGED = "exchanged"
EXPIRED = "expired"


def state_of(status: str, expires_at: float, now: float | None) -> str:
    now = time.time() if now is None else now
    return EXPIRED if status == PENDING and expires_at <= now else status


def texts(text: str) -> tuple[str, ...]:
    return tuple(orjson.loads(text))


def json_list(items: tuple[str, ...]) -> str:
    return orjson.dumps(list(items)).decode()


def now_or(now: float | None) -> float:
    return time.time() if now is None else now


# Both kinds of request live in a table of the same shape (code, status, expires_at, ...); these
# helpers take the table ("pair_requests" or "key_requests") and the noun its errors use.
PAIR_TABLE = "pair_requests"
KEY_TABLE = "key_requests"
_NOUN = {PAIR_TABLE: "Pair request", KEY_TABLE: "Key request"}


class Stored(Protocol):
    """A stored request of either kind (`pair_requests.PairRequest`, `key_requests.KeyRequest`)."""

    def state(self, now: float | None = None) -> str: ...


_Request = TypeVar("_Request", bound=Stored)


def create(
    store: RelayStore,
    table: str,
    columns: str,
    code_length: int,
    values: tuple[Any, ...],
    now: float,
) -> Row:
    """Insert a new request (a fresh code, then `values` for `columns`) and return its row;
    forget requests of that table that expired long ago."""
    with store.transaction() as db:
        db.execute(f"DELETE FROM {table} WHERE expires_at < ?", (now - PURGE_AFTER,))
        marks = ",".join("?" * (len(values) + 1))
        sql = f"INSERT INTO {table} (code, {columns}) VALUES ({marks}) ON CONFLICT DO NOTHING"
        code = insert_with_new_code(db, sql, code_length, values)
        row: Row = db.execute(f"SELECT * FROM {table} WHERE code = ?", (code,)).fetchone()
    return row


def row_of(db: Connection, table: str, code: str) -> Row | None:
    """The request stored under `code` (as typed: case and spaces do not matter), or None."""
    row: Row | None = db.execute(
        f"SELECT * FROM {table} WHERE code = ?", (code.strip().upper(),)
    ).fetchone()
    return row


def get(
    store: RelayStore, table: str, code: str, read: Callable[[Row], _Request]
) -> _Request | None:
    with store.transaction() as db:
        row = row_of(db, table, code)
    return read(row) if row else None


def listed(
    store: RelayStore,
    table: str,
    read: Callable[[Row], _Request],
    pending_only: bool,
    now: float | None,
) -> list[_Request]:
    """The table's requests, oldest first: only those still waiting for a decision, or all."""
    now = now_or(now)
    with store.transaction() as db:
        rows = db.execute(f"SELECT * FROM {table} ORDER BY created_at, code").fetchall()
    requests = [read(r) for r in rows]
    return [r for r in requests if r.state(now) == PENDING] if pending_only else requests


def pending(db: Connection, table: str, code: str) -> Row:
    """The request under `code`, which must exist and still wait for a decision."""
    row = row_of(db, table, code)
    if row is None:
        raise error(404, f"{_NOUN[table]} not found")
    if row["status"] != PENDING:
        raise error(400, f"{_NOUN[table]} is not pending")
    return row


def refuse(store: RelayStore, table: str, code: str, now: float | None) -> Row:
    """Mark a pending request denied; return its row as it was."""
    now = now_or(now)
    with store.transaction() as db:
        row = pending(db, table, code)
        db.execute(
            f"UPDATE {table} SET status = ?, decided_at = ? WHERE code = ?",
            (DENIED, now, row["code"]),
        )
    return row
