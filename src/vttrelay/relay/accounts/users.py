"""Accounts in the relay store: users, sessions, verification and reset tokens, invite codes.

A user is a password login for one account name (the `account` its keys, connection tokens and
worlds already carry). Every secret handed out (session, verification, reset and invite tokens)
is 32 random bytes in hex, stored only as its SHA-256 digest. Each function is plain blocking
I/O, one store transaction or statement; the HTTP handlers call them in a worker thread.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vttrelay.relay.store import RelayStore, insert_key, sha256_hex, usage_periods
from vttrelay.relay.store.database import Connection, Row

ACCOUNT_PREFIX = "acct_"
MASTER_KEY_NAME = "Master key"
MAX_TOKEN = 256  # longer secrets are never looked up
MAX_SESSIONS = 100  # live sessions per account; a new one ends the oldest past it


def new_secret() -> str:
    """32 random bytes as 64 lowercase hex digits (sessions, tokens, codes)."""
    return secrets.token_hex(32)


@dataclass(frozen=True)
class User:
    """An account's login as stored (the password only as its argon2id hash)."""

    account: str
    email: str
    password_hash: str
    email_verified: bool
    role: str
    disabled: bool
    master_key_id: str | None
    verification_expires_at: float | None
    created_at: float
    updated_at: float


def _user(row: Row) -> User:
    return User(
        account=row["account"],
        email=row["email"],
        password_hash=row["password_hash"],
        email_verified=bool(row["email_verified"]),
        role=row["role"],
        disabled=bool(row["disabled"]),
        master_key_id=row["master_key_id"],
        verification_expires_at=row["verification_expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


@dataclass(frozen=True)
class Session:
    """A signed-in session (the token itself is never stored)."""

    token_hash: str
    account: str
    created_at: float
    expires_at: float
    last_used_at: float | None


def _session(row: Row) -> Session:
    return Session(
        token_hash=row["token_hash"],
        account=row["account"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        last_used_at=row["last_used_at"],
    )


# Users -------------------------------------------------------------------------------------------


def user_by_email(store: RelayStore, email: str) -> User | None:
    row = store.db.one("SELECT * FROM users WHERE email = ?", (email,))
    return _user(row) if row else None


def user_by_account(store: RelayStore, account: str) -> User | None:
    row = store.db.one("SELECT * FROM users WHERE account = ?", (account,))
    return _user(row) if row else None


def list_users(store: RelayStore) -> list[User]:
    return [_user(r) for r in store.db.all("SELECT * FROM users ORDER BY created_at, account")]


def _insert_session(
    db: Connection, account: str, ttl: float, now: float, user_agent: str, ip: str
) -> tuple[str, float]:
    token = new_secret()
    db.execute(
        "INSERT INTO account_sessions (token_hash, account, user_agent, ip_address, created_at,"
        " expires_at) VALUES (?,?,?,?,?,?)",
        (sha256_hex(token), account, user_agent[:512], ip[:64], now, now + ttl),
    )
    return token, now + ttl


@dataclass(frozen=True)
class Registered:
    """A new account: its user row, a session (token shown once) and, with mail, the
    verification token to send."""

    user: User
    session_token: str
    session_expires_at: float
    verification_token: str | None


def create_user(
    store: RelayStore,
    email: str,
    password_hash: str,
    *,
    verified: bool,
    verification_ttl: float,
    session_ttl: float | None,
    user_agent: str = "",
    ip: str = "",
    account: str | None = None,
    invite_hash: str | None = None,
) -> Registered:
    """Create an account login (and its first session unless `session_ttl` is None). Raises
    `Refused("invite")` when the invite code (`invite_hash`: its digest) is not usable and
    `Refused("taken")` when the email or account name is; nothing is written then. `account`
    None makes a new account name."""
    now = time.time()
    account = account or ACCOUNT_PREFIX + secrets.token_hex(6)
    verify_token = None if verified else new_secret()
    with store.transaction() as db:
        if invite_hash is not None and not _take_invite(db, invite_hash, account, now):
            raise Refused("invite")
        inserted = db.execute(
            "INSERT INTO users (account, email, password_hash, email_verified, verification_hash,"
            " verification_expires_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            (
                account,
                email,
                password_hash,
                int(verified),
                sha256_hex(verify_token) if verify_token else None,
                None if verified else now + verification_ttl,
                now,
                now,
            ),
        ).rowcount
        if inserted != 1:
            raise Refused("taken")
        token, expires = ("", 0.0)
        if session_ttl is not None:
            token, expires = _insert_session(db, account, session_ttl, now, user_agent, ip)
        row = db.execute("SELECT * FROM users WHERE account = ?", (account,)).fetchone()
    return Registered(_user(row), token, expires, verify_token)


class Refused(Exception):
    """Why `create_user` wrote nothing: "taken" (email or account) or "invite"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def register(store: RelayStore, email: str, password_hash: str, **kw: Any) -> Registered | str:
    """`create_user`, or the reason (`Refused.reason`) it wrote nothing."""
    try:
        return create_user(store, email, password_hash, **kw)
    except Refused as exc:
        return exc.reason


def set_password(store: RelayStore, account: str, password_hash: str) -> bool:
    return (
        store.db.run(
            "UPDATE users SET password_hash = ?, updated_at = ? WHERE account = ?",
            (password_hash, time.time(), account),
        )
        == 1
    )


def set_verified(store: RelayStore, account: str, verified: bool = True) -> bool:
    return (
        store.db.run(
            "UPDATE users SET email_verified = ?, verification_hash = NULL,"
            " verification_expires_at = NULL, updated_at = ? WHERE account = ?",
            (int(verified), time.time(), account),
        )
        == 1
    )


def new_verification(store: RelayStore, account: str, ttl: float) -> str:
    """A new verification token for an account (the previous one stops working)."""
    token = new_secret()
    store.db.run(
        "UPDATE users SET verification_hash = ?, verification_expires_at = ?, updated_at = ?"
        " WHERE account = ?",
        (sha256_hex(token), time.time() + ttl, time.time(), account),
    )
    return token


def user_by_verification(store: RelayStore, token: str) -> User | None:
    if len(token) > MAX_TOKEN:
        return None
    row = store.db.one("SELECT * FROM users WHERE verification_hash = ?", (sha256_hex(token),))
    return _user(row) if row else None


# Sessions ----------------------------------------------------------------------------------------


def open_session(
    store: RelayStore, account: str, ttl: float, user_agent: str = "", ip: str = ""
) -> tuple[str, float]:
    """A new session of an account: `(token, expires_at)`. Expired sessions are swept, and an
    account keeps its MAX_SESSIONS newest: the oldest beyond them end."""
    now = time.time()
    with store.transaction() as db:
        db.execute("DELETE FROM account_sessions WHERE expires_at < ?", (now,))
        made = _insert_session(db, account, ttl, now, user_agent, ip)
        db.execute(
            "DELETE FROM account_sessions WHERE account = ? AND token_hash NOT IN (SELECT"
            " token_hash FROM account_sessions WHERE account = ? ORDER BY created_at DESC"
            " LIMIT ?)",
            (account, account, MAX_SESSIONS),
        )
        return made


def session_by_token(store: RelayStore, token: str) -> Session | None:
    """The live session of this token, or None (unknown, or expired)."""
    if not token or len(token) > MAX_TOKEN:
        return None
    row = store.db.one(
        "SELECT * FROM account_sessions WHERE token_hash = ? AND expires_at > ?",
        (sha256_hex(token), time.time()),
    )
    return _session(row) if row else None


def touch_session(store: RelayStore, token_hash: str) -> None:
    store.db.run(
        "UPDATE account_sessions SET last_used_at = ? WHERE token_hash = ?",
        (time.time(), token_hash),
    )


def end_session(store: RelayStore, token: str) -> bool:
    """Log out: delete this session. True if it was live."""
    if not token or len(token) > MAX_TOKEN:
        return False
    return (
        store.db.run(
            "DELETE FROM account_sessions WHERE token_hash = ? AND expires_at > ?",
            (sha256_hex(token), time.time()),
        )
        == 1
    )


# Password resets -----------------------------------------------------------------------------


def new_reset(store: RelayStore, account: str, ttl: float) -> str:
    """A new reset token for an account; its earlier unused ones stop working."""
    token = new_secret()
    now = time.time()
    with store.transaction() as db:
        db.execute(
            "UPDATE password_resets SET used_at = ? WHERE account = ? AND used_at IS NULL",
            (now, account),
        )
        db.execute("DELETE FROM password_resets WHERE expires_at < ?", (now - 86400,))
        db.execute(
            "INSERT INTO password_resets (token_hash, account, created_at, expires_at)"
            " VALUES (?,?,?,?)",
            (sha256_hex(token), account, now, now + ttl),
        )
    return token


def reset_valid(store: RelayStore, token: str) -> bool:
    """Whether a reset token is unused, unexpired and its account still exists."""
    if not token or len(token) > MAX_TOKEN:
        return False
    row = store.db.one(
        "SELECT r.account FROM password_resets r JOIN users u ON u.account = r.account"
        " WHERE r.token_hash = ? AND r.used_at IS NULL AND r.expires_at > ?",
        (sha256_hex(token), time.time()),
    )
    return row is not None


def use_reset(store: RelayStore, token: str, password_hash: str) -> bool:
    """Set the password of a valid reset token's account and use up all its tokens (sessions,
    keys and tokens are kept, as the reference). False if the token is not valid."""
    if not token or len(token) > MAX_TOKEN:
        return False
    now = time.time()
    with store.transaction() as db:
        row = db.execute(
            "SELECT r.account FROM password_resets r JOIN users u ON u.account = r.account"
            " WHERE r.token_hash = ? AND r.used_at IS NULL AND r.expires_at > ?",
            (sha256_hex(token), now),
        ).fetchone()
        if row is None:
            return False
        account = row["account"]
        db.execute(
            "UPDATE users SET password_hash = ?, updated_at = ? WHERE account = ?",
            (password_hash, now, account),
        )
        db.execute(
            "UPDATE password_resets SET used_at = ? WHERE account = ? AND used_at IS NULL",
            (now, account),
        )
    return True


# Invite codes ----------------------------------------------------------------------------------


def new_invite(store: RelayStore, ttl: float, note: str = "") -> str:
    """A single-use invite code for `--signup invite`."""
    code = new_secret()
    now = time.time()
    store.db.run(
        "INSERT INTO invite_codes (code_hash, note, created_at, expires_at) VALUES (?,?,?,?)",
        (sha256_hex(code), note[:200], now, now + ttl),
    )
    return code


def _take_invite(db: Connection, code_hash: str, account: str, now: float) -> bool:
    return (
        db.execute(
            "UPDATE invite_codes SET used_at = ?, used_by = ? WHERE code_hash = ?"
            " AND used_at IS NULL AND expires_at > ?",
            (now, account, code_hash, now),
        ).rowcount
        == 1
    )


def set_disabled(store: RelayStore, account: str, disabled: bool) -> bool:
    """Disable an account (`vttrelay accounts disable`) or enable it again; False if there is
    no such login. Disabling ends every session and sign-in link of the account at once; its
    keys and its worlds' tokens are kept but stop working wherever they are checked (the key
    cache's refresh, the relay's token check, each new connection), and work again once it is
    enabled."""
    now = time.time()
    with store.transaction() as db:
        changed = db.execute(
            "UPDATE users SET disabled = ?, updated_at = ? WHERE account = ?",
            (1 if disabled else 0, now, account),
        ).rowcount
        if changed and disabled:
            for table in ("account_sessions", "dashboard_sessions", "dashboard_signin_tokens"):
                db.execute(f"DELETE FROM {table} WHERE account = ?", (account,))
    return changed == 1


# Account-wide revocations ------------------------------------------------------------------------


def _revoke_tokens(db: Connection, account: str, now: float) -> list[str]:
    """Revoke every live connection token of an account; their ids (to close their sockets)."""
    rows = db.execute(
        "SELECT id FROM connection_tokens WHERE account = ? AND revoked_at IS NULL", (account,)
    ).fetchall()
    db.execute(
        "UPDATE connection_tokens SET revoked_at = ? WHERE account = ? AND revoked_at IS NULL",
        (now, account),
    )
    return [row["id"] for row in rows]


def regenerate_master_key(
    store: RelayStore, account: str, scopes: Iterable[str]
) -> tuple[str, list[str]]:
    """The reference's "Reset Credentials": every session (REST and dashboard), API key and
    connection token of the account goes; a new master key (an API key with every scope) is
    made. Returns `(master key, revoked token ids)`. Worlds, credentials and settings stay."""
    now = time.time()
    with store.transaction() as db:
        db.execute("DELETE FROM account_sessions WHERE account = ?", (account,))
        db.execute("DELETE FROM dashboard_sessions WHERE account = ?", (account,))
        db.execute("DELETE FROM api_keys WHERE account = ?", (account,))
        revoked = _revoke_tokens(db, account, now)
        key_id, secret = insert_key(db, account, scopes, name=MASTER_KEY_NAME)
        db.execute(
            "UPDATE users SET master_key_id = ?, updated_at = ? WHERE account = ?",
            (key_id, now, account),
        )
    return secret, revoked


# Tables whose rows belong to one account and go with it (the users row last).
ACCOUNT_TABLES = (
    "api_keys",
    "account_sessions",
    "dashboard_sessions",
    "dashboard_signin_tokens",
    "password_resets",
    "pairing_codes",
    "credentials",
    "notification_settings",
    "known_clients",
    "known_users",
    "connection_logs",
    "remote_request_logs",
    "module_event_logs",
    "users",
)


def delete_account(store: RelayStore, account: str) -> list[str]:
    """Delete an account and everything of it (the reference leaves worlds, credentials,
    settings and sessions behind, §14 Q13; we do not). Connection tokens are revoked (their
    rows stay as the record of what was revoked); returns their ids to close their sockets."""
    now = time.time()
    with store.transaction() as db:
        revoked = _revoke_tokens(db, account, now)
        for table in ACCOUNT_TABLES:
            db.execute(f"DELETE FROM {table} WHERE account = ?", (account,))
    return revoked


def has_key(store: RelayStore, key_id: str | None) -> bool:
    return key_id is not None and store.get_key(key_id) is not None


def account_usage(store: RelayStore, account: str) -> tuple[int, int]:
    """Calls this month and today (UTC) by all keys of an account."""
    month, day = usage_periods(time.time())
    row = store.db.one(
        "SELECT SUM(CASE WHEN usage_month = ? THEN month_requests ELSE 0 END) AS m,"
        " SUM(CASE WHEN usage_day = ? THEN day_requests ELSE 0 END) AS d"
        " FROM api_keys WHERE account = ?",
        (month, day, account),
    )
    return int(row["m"] or 0), int(row["d"] or 0)
