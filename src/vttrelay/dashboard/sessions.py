"""Dashboard sign-in: one-time sign-in tokens and the browser sessions they open.

Who is looking is a `Viewer`: the relay's operator (`account` None: sees and manages every
account) or the owner of one account (sees and manages only that account's keys, worlds and
streams). Accounts are the `account` names keys and worlds already carry; there is no other
user record. A sign-in token is minted by `vttrelay serve` (operator) or `vttrelay
dashboard-link [--account NAME]`, works once, and expires; redeeming it opens a session whose
secret lives in an HttpOnly cookie and whose CSRF token every change must send back.

Only SHA-256 digests of the token and session secrets are stored. Each function is one store
transaction.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass

from vttrelay.relay.store import ACCOUNT_DISABLED, RelayStore, sha256_hex
from vttrelay.relay.store.database import Connection

SIGNIN_TTL = 3600.0  # seconds a printed sign-in link stays valid
SESSION_TTL = 12 * 3600.0  # seconds a session lasts
PURGE_AFTER = 86400.0  # used or expired tokens and sessions are deleted a day later


@dataclass(frozen=True)
class Viewer:
    """A signed-in dashboard user: the operator (`account` None) or one account's owner."""

    account: str | None
    csrf: str
    expires_at: float

    @property
    def operator(self) -> bool:
        return self.account is None

    def sees(self, account: str | None) -> bool:
        """Whether this viewer may see and manage things of `account`."""
        return self.account is None or self.account == account

    @property
    def label(self) -> str:
        return "operator (all accounts)" if self.account is None else f"account {self.account}"

    def csrf_ok(self, sent: str | None) -> bool:
        return bool(sent) and hmac.compare_digest(self.csrf, sent or "")


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def issue_signin_token(
    store: RelayStore, account: str | None = None, ttl: float = SIGNIN_TTL, now: float | None = None
) -> str:
    """A new one-time sign-in token for the operator (`account` None) or an account's owner."""
    now = _now(now)
    token = secrets.token_urlsafe(32)
    with store.transaction() as db:
        db.execute("DELETE FROM dashboard_signin_tokens WHERE expires_at < ?", (now - PURGE_AFTER,))
        db.execute(
            "INSERT INTO dashboard_signin_tokens (token_hash, account, created_at, expires_at)"
            " VALUES (?,?,?,?)",
            (sha256_hex(token), account, now, now + ttl),
        )
    return token


def redeem_signin_token(
    store: RelayStore, token: str, session_ttl: float = SESSION_TTL, now: float | None = None
) -> tuple[str, Viewer] | None:
    """Trade a sign-in token (once, before it expires) for a new session: returns the session
    secret (for the cookie) and its viewer, or None if the token is unknown, used or expired."""
    now = _now(now)
    if not token or len(token) > 256:
        return None
    with store.transaction() as db:
        row = db.execute(
            f"SELECT *, {ACCOUNT_DISABLED.format(table='dashboard_signin_tokens')}"
            " FROM dashboard_signin_tokens WHERE token_hash = ?",
            (sha256_hex(token),),
        ).fetchone()
        if row is None or row["used_at"] is not None or row["expires_at"] <= now:
            return None
        if row["account_disabled"]:  # `vttrelay accounts disable`
            return None
        db.execute(
            "UPDATE dashboard_signin_tokens SET used_at = ? WHERE token_hash = ?",
            (now, row["token_hash"]),
        )
        return _open(db, row["account"], session_ttl, now)


def _open(db: Connection, account: str | None, ttl: float, now: float) -> tuple[str, Viewer]:
    db.execute("DELETE FROM dashboard_sessions WHERE expires_at < ?", (now - PURGE_AFTER,))
    secret = secrets.token_urlsafe(32)
    viewer = Viewer(account, secrets.token_urlsafe(24), now + ttl)
    db.execute(
        "INSERT INTO dashboard_sessions (session_hash, account, csrf, created_at, expires_at)"
        " VALUES (?,?,?,?,?)",
        (sha256_hex(secret), viewer.account, viewer.csrf, now, viewer.expires_at),
    )
    return secret, viewer


def open_session(
    store: RelayStore, account: str, session_ttl: float = SESSION_TTL, now: float | None = None
) -> tuple[str, Viewer]:
    """A new session of an account's owner who signed in with email and password."""
    with store.transaction() as db:
        return _open(db, account, session_ttl, _now(now))


def session_viewer(
    store: RelayStore, secret: str | None, now: float | None = None
) -> Viewer | None:
    """The viewer of a live session, or None (no cookie, unknown, ended or expired)."""
    if not secret or len(secret) > 256:
        return None
    now = _now(now)
    with store.transaction() as db:
        row = db.execute(
            f"SELECT *, {ACCOUNT_DISABLED.format(table='dashboard_sessions')}"
            " FROM dashboard_sessions WHERE session_hash = ?",
            (sha256_hex(secret),),
        ).fetchone()
    if row is None or row["expires_at"] <= now or row["account_disabled"]:
        return None
    return Viewer(row["account"], row["csrf"], row["expires_at"])


def end_session(store: RelayStore, secret: str) -> None:
    """Sign out: the session is deleted."""
    with store.transaction() as db:
        db.execute("DELETE FROM dashboard_sessions WHERE session_hash = ?", (sha256_hex(secret),))
