"""The log of cross-world requests (accounts-auth.md §2.13, §10): one row per `remote-request`
a world sends to another world of its account, on its own socket (the tunnel, `tunnel.py`) or
from a `/ws/api` socket bound to it, read back by GET /auth/remote-request-logs and
GET /auth/activity.

Kept `KEEP_DAYS` days and at most the newest `MAX_ROWS` rows per account; not written when the
account's notification settings say `logCrossWorldRequests: false`. `RemoteRequestLog.record`
is called on the event loop and writes in a worker thread (`log_writes.py`: at most
`MAX_IN_FLIGHT` writes wait; past that a record is dropped and counted in `dropped`), so a
request never waits for the log.
"""

from __future__ import annotations

import functools
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

from vttrelay.relay.accounts import notifications
from vttrelay.relay.accounts.log_writes import LogWrites
from vttrelay.relay.store import RelayStore

KEEP_DAYS: Final = 30
MAX_ROWS: Final = 1000  # per account
MAX_IN_FLIGHT: Final = 100
MAX_TEXT: Final = 256


@dataclass(frozen=True)
class RemoteRequest:
    """One cross-world request as logged."""

    account: str
    source_client_id: str
    source_token_id: str  # what authenticated the caller (an API key's id on /ws/api)
    target_client_id: str
    action: str
    success: bool
    error_message: str
    source_ip: str


def write(store: RelayStore, entry: RemoteRequest, now: float | None = None) -> bool:
    """Log one request made at `now` unless the account turned the log off; prune old rows.
    Whether written."""
    settings = notifications.current(store, notifications.ACCOUNT, entry.account, entry.account)
    if not settings.get("logCrossWorldRequests", True):
        return False
    now = time.time() if now is None else now
    with store.transaction() as db:
        db.execute(
            "INSERT INTO remote_request_logs (id, account, source_client_id, source_token_id,"
            " target_client_id, action, success, error_message, source_ip, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                "rr_" + secrets.token_hex(8),
                entry.account,
                entry.source_client_id[:MAX_TEXT],
                entry.source_token_id[:MAX_TEXT],
                entry.target_client_id[:MAX_TEXT],
                entry.action[:MAX_TEXT],
                1 if entry.success else 0,
                entry.error_message[:1024],
                entry.source_ip[:MAX_TEXT],
                now,
            ),
        )
        db.execute(
            "DELETE FROM remote_request_logs WHERE created_at < ?", (now - KEEP_DAYS * 86400,)
        )
        db.execute(
            "DELETE FROM remote_request_logs WHERE account = ? AND id NOT IN (SELECT id FROM"
            " remote_request_logs WHERE account = ? ORDER BY created_at DESC LIMIT ?)",
            (entry.account, entry.account, MAX_ROWS),
        )
    return True


def page(
    store: RelayStore, account: str, limit: int, offset: int
) -> tuple[int, list[dict[str, Any]]]:
    """The account's cross-world requests, newest first: `(total, one page)`."""
    total = store.db.one(
        "SELECT COUNT(*) AS n FROM remote_request_logs WHERE account = ?", (account,)
    )["n"]
    rows = store.db.all(
        "SELECT * FROM remote_request_logs WHERE account = ? ORDER BY created_at DESC, id"
        " LIMIT ? OFFSET ?",
        (account, limit, offset),
    )
    return int(total), [dict(row) for row in rows]


def every(store: RelayStore, account: str) -> list[dict[str, Any]]:
    """All of the account's logged requests (at most MAX_ROWS), newest first."""
    rows = store.db.all(
        "SELECT * FROM remote_request_logs WHERE account = ? ORDER BY created_at DESC, id LIMIT ?",
        (account, MAX_ROWS),
    )
    return [dict(row) for row in rows]


class RemoteRequestLog(LogWrites[RemoteRequest]):
    """Writes logged requests in worker threads, never holding up the request."""

    def __init__(self, store: RelayStore) -> None:
        super().__init__(functools.partial(write, store), "a cross-world request", MAX_IN_FLIGHT)
        self.store = store

    def record(self, entry: RemoteRequest) -> None:
        """Log `entry` (called on the event loop; returns at once)."""
        self.submit(entry, time.time())
