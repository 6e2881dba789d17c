"""The relay's database: API keys, connection tokens, pairing codes, known worlds, settings.

SQLite (WAL) with its schema managed by yoyo-migrations (the SQL files in `migrations/`). Secrets
are never stored: keys and tokens are kept as SHA-256 hex digests and shown once at creation.
This module is plain synchronous I/O; the request hot path never calls it (see `auth.KeyCache`).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import orjson
from yoyo import get_backend, read_migrations

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
DEFAULT_ACCOUNT = "default"
PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0, O, I, 1
PAIRING_CODE_LENGTH = 6
PAIRING_TTL = 600.0


def sha256_hex(secret: str) -> str:
    """The stored form of a key or token."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class KeyRecord:
    """An API key as stored (never the secret)."""

    id: str
    account: str
    name: str
    scopes: tuple[str, ...]
    client_ids: tuple[str, ...]
    user_id: str | None
    expires_at: float | None
    enabled: bool
    rate_per_minute: int | None
    created_at: float
    last_used_at: float | None
    request_count: int

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (now or time.time()) >= self.expires_at


@dataclass(frozen=True)
class TokenRecord:
    """A world's connection token as stored."""

    id: str
    account: str
    client_id: str
    name: str
    ip_allow: str
    created_at: float
    revoked_at: float | None


@dataclass(frozen=True)
class KnownClient:
    """A world this relay has paired or seen."""

    client_id: str
    account: str
    metadata: dict[str, Any]
    token_name: str
    first_seen: float
    last_seen: float


class PairingError(Enum):
    """Why a pairing code was refused (wire-protocol §2.6)."""

    INVALID = "Invalid pairing code"
    USED = "Pairing code has already been used"
    EXPIRED = "Pairing code has expired"


@dataclass(frozen=True)
class Pairing:
    """A redeemed pairing code: the new token (shown once) and the world's client id."""

    token: str
    client_id: str
    account: str


def _key_row(row: sqlite3.Row) -> KeyRecord:
    return KeyRecord(
        id=row["id"],
        account=row["account"],
        name=row["name"],
        scopes=tuple(orjson.loads(row["scopes"])),
        client_ids=tuple(orjson.loads(row["client_ids"])),
        user_id=row["user_id"],
        expires_at=row["expires_at"],
        enabled=bool(row["enabled"]),
        rate_per_minute=row["rate_per_minute"],
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
        request_count=row["request_count"],
    )


def _token_row(row: sqlite3.Row) -> TokenRecord:
    return TokenRecord(
        id=row["id"],
        account=row["account"],
        client_id=row["client_id"],
        name=row["name"],
        ip_allow=row["ip_allow"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
    )


def _client_row(row: sqlite3.Row) -> KnownClient:
    return KnownClient(
        client_id=row["client_id"],
        account=row["account"],
        metadata=orjson.loads(row["metadata"]),
        token_name=row["token_name"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
    )


def insert_key(
    db: sqlite3.Connection,
    account: str,
    scopes: Iterable[str],
    client_ids: Iterable[str] = (),
    user_id: str | None = None,
    expires_at: float | None = None,
    rate_per_minute: int | None = None,
    name: str = "",
) -> tuple[str, str]:
    """Insert a new enabled key on `db` (inside the caller's lock or transaction); returns
    `(key_id, secret)`. Only the secret's SHA-256 is stored."""
    key_id = "key_" + secrets.token_hex(6)
    secret = secrets.token_hex(32)
    db.execute(
        "INSERT INTO api_keys (id, account, name, key_hash, scopes, client_ids, user_id,"
        " expires_at, enabled, rate_per_minute, created_at) VALUES (?,?,?,?,?,?,?,?,1,?,?)",
        (
            key_id,
            account,
            name,
            sha256_hex(secret),
            orjson.dumps(list(dict.fromkeys(scopes))).decode(),
            orjson.dumps(list(dict.fromkeys(client_ids))).decode(),
            user_id,
            expires_at,
            rate_per_minute,
            time.time(),
        ),
    )
    return key_id, secret


def new_code(length: int, alphabet: str = PAIRING_ALPHABET) -> str:
    """A random code of `length` characters of `alphabet` (the pairing alphabet by default)."""
    return "".join(secrets.choice(alphabet) for _ in range(length))


def insert_pairing_code(
    db: sqlite3.Connection, account: str, ttl: float, now: float | None = None
) -> str:
    """Insert a single-use 6-character pairing code valid `ttl` seconds (inside the caller's
    lock or transaction); a code already taken is drawn again."""
    now = time.time() if now is None else now
    while True:
        code = new_code(PAIRING_CODE_LENGTH)
        try:
            db.execute(
                "INSERT INTO pairing_codes (code, account, created_at, expires_at)"
                " VALUES (?,?,?,?)",
                (code, account, now, now + ttl),
            )
            return code
        except sqlite3.IntegrityError:
            continue


def migrate(path: Path) -> None:
    """Create or upgrade the schema of the database at `path`."""
    backend = get_backend("sqlite:///" + str(path))
    migrations = read_migrations(str(MIGRATIONS_DIR))
    with backend.lock():
        backend.apply_migrations(backend.to_apply(migrations))
    backend.connection.close()


class RelayStore:
    """The relay's SQLite store. Safe to share between threads; one per process is enough."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        migrate(self.path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _one(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._db.execute(sql, tuple(args)).fetchone()
            return row

    def _all(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    def _run(self, sql: str, args: Iterable[Any] = ()) -> int:
        with self._lock:
            return self._db.execute(sql, tuple(args)).rowcount

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE): committed when the block ends, rolled back
        if it raises, so a call that fails changes nothing. Other processes sharing the file
        (the CLI beside a running relay) wait for it (busy timeout)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _oldest_first(self, table: str, account: str | None) -> list[sqlite3.Row]:
        """Every row of `table` (of one account, or of all), oldest first."""
        if account is None:
            return self._all(f"SELECT * FROM {table} ORDER BY created_at, id")
        return self._all(
            f"SELECT * FROM {table} WHERE account = ? ORDER BY created_at, id", (account,)
        )

    # API keys -----------------------------------------------------------------------------

    def create_key(
        self,
        account: str,
        scopes: Iterable[str],
        client_ids: Iterable[str] = (),
        user_id: str | None = None,
        expires_at: float | None = None,
        rate_per_minute: int | None = None,
        name: str = "",
    ) -> tuple[str, str]:
        """Create a key; returns `(key_id, secret)`. The secret is not stored."""
        with self._lock:
            return insert_key(
                self._db, account, scopes, client_ids, user_id, expires_at, rate_per_minute, name
            )

    def key_by_secret(self, secret: str) -> KeyRecord | None:
        """The key whose secret this is, enabled or not; None if unknown."""
        row = self._one("SELECT * FROM api_keys WHERE key_hash = ?", (sha256_hex(secret),))
        return _key_row(row) if row else None

    def get_key(self, key_id: str) -> KeyRecord | None:
        row = self._one("SELECT * FROM api_keys WHERE id = ?", (key_id,))
        return _key_row(row) if row else None

    def list_keys(self, account: str | None = None) -> list[KeyRecord]:
        return [_key_row(r) for r in self._oldest_first("api_keys", account)]

    def revoke_key(self, key_id: str) -> bool:
        """Disable a key for good. True if it existed and was enabled."""
        return (
            self._run("UPDATE api_keys SET enabled = 0 WHERE id = ? AND enabled = 1", (key_id,)) > 0
        )

    def add_usage(self, usage: Mapping[str, tuple[int, float]]) -> None:
        """Add batched request counts: key id -> (count, last used at)."""
        if not usage:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "UPDATE api_keys SET request_count = request_count + ?,"
                    " last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?",
                    [(n, last, key_id) for key_id, (n, last) in usage.items()],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # Pairing and connection tokens ----------------------------------------------------------

    def create_pairing_code(self, account: str = DEFAULT_ACCOUNT, ttl: float = PAIRING_TTL) -> str:
        """A single-use 6-character code, valid `ttl` seconds."""
        with self._lock:
            return insert_pairing_code(self._db, account, ttl)

    def redeem_pairing_code(
        self,
        code: str,
        existing_client_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Pairing | PairingError:
        """Trade a code for a new connection token (atomically: a code works once)."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT * FROM pairing_codes WHERE code = ?", (code.upper(),)
                ).fetchone()
                if row is None:
                    self._db.execute("ROLLBACK")
                    return PairingError.INVALID
                if row["used_at"] is not None:
                    self._db.execute("ROLLBACK")
                    return PairingError.USED
                if row["expires_at"] <= now:
                    self._db.execute("ROLLBACK")
                    return PairingError.EXPIRED
                self._db.execute(
                    "UPDATE pairing_codes SET used_at = ? WHERE code = ?", (now, row["code"])
                )
                account = row["account"]
                client_id = existing_client_id
                if client_id is not None:
                    owner = self._db.execute(
                        "SELECT account FROM known_clients WHERE client_id = ?", (client_id,)
                    ).fetchone()
                    if owner is not None and owner["account"] != account:
                        client_id = None  # another account's world: never take its id over
                client_id = client_id or "fvtt_" + secrets.token_hex(8)
                meta = dict(metadata or {})
                name = str(meta.get("worldTitle") or "")
                token = self._insert_token(account, client_id, name, now)
                self._upsert_client(client_id, account, meta, name, now)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return Pairing(token=token, client_id=client_id, account=account)

    def _insert_token(self, account: str, client_id: str, name: str, now: float) -> str:
        token = secrets.token_hex(32)
        self._db.execute(
            "INSERT INTO connection_tokens (id, account, client_id, name, token_hash, created_at)"
            " VALUES (?,?,?,?,?,?)",
            ("tok_" + secrets.token_hex(6), account, client_id, name, sha256_hex(token), now),
        )
        return token

    def create_connection_token(
        self, account: str, client_id: str, name: str = "", ip_allow: str = ""
    ) -> str:
        """Mint a connection token directly (no pairing); returns the token, shown once."""
        now = time.time()
        with self._lock:
            token = self._insert_token(account, client_id, name, now)
            if ip_allow:
                self._db.execute(
                    "UPDATE connection_tokens SET ip_allow = ? WHERE token_hash = ?",
                    (ip_allow, sha256_hex(token)),
                )
            self._upsert_client(client_id, account, {}, name, now)
        return token

    def token_by_secret(self, token: str) -> TokenRecord | None:
        """The live (not revoked) connection token with this secret."""
        row = self._one(
            "SELECT * FROM connection_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (sha256_hex(token),),
        )
        return _token_row(row) if row else None

    def live_token_ids(self, token_ids: Iterable[str]) -> set[str]:
        """Which of these token ids are still live (not revoked)."""
        ids = list(token_ids)
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = self._all(
            f"SELECT id FROM connection_tokens WHERE id IN ({marks}) AND revoked_at IS NULL", ids
        )
        return {row["id"] for row in rows}

    def revoke_token(self, token: str) -> TokenRecord | None:
        """Revoke a connection token by its secret; returns it if it was live."""
        record = self.token_by_secret(token)
        if record is None:
            return None
        self._run(
            "UPDATE connection_tokens SET revoked_at = ? WHERE id = ?", (time.time(), record.id)
        )
        return record

    def list_tokens(self, account: str | None = None) -> list[TokenRecord]:
        """Connection tokens (never their secrets), oldest first, revoked ones included."""
        return [_token_row(r) for r in self._oldest_first("connection_tokens", account)]

    def get_token(self, token_id: str) -> TokenRecord | None:
        row = self._one("SELECT * FROM connection_tokens WHERE id = ?", (token_id,))
        return _token_row(row) if row else None

    def revoke_token_id(self, token_id: str) -> bool:
        """Revoke a connection token by its id. True if it existed and was live."""
        return (
            self._run(
                "UPDATE connection_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (time.time(), token_id),
            )
            > 0
        )

    def revoke_tokens_named(self, account: str, name: str) -> int:
        """Revoke every live token of an account with this name (used by `serve`)."""
        return self._run(
            "UPDATE connection_tokens SET revoked_at = ? WHERE account = ? AND name = ?"
            " AND revoked_at IS NULL",
            (time.time(), account, name),
        )

    # Known worlds ---------------------------------------------------------------------------

    def _upsert_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str, now: float
    ) -> None:
        row = self._db.execute(
            "SELECT metadata FROM known_clients WHERE client_id = ?", (client_id,)
        ).fetchone()
        merged = {**(orjson.loads(row["metadata"]) if row else {}), **metadata}
        self._db.execute(
            "INSERT INTO known_clients (client_id, account, metadata, token_name, first_seen,"
            " last_seen) VALUES (?,?,?,?,?,?) ON CONFLICT(client_id) DO UPDATE SET"
            " account = excluded.account, metadata = excluded.metadata,"
            " token_name = CASE WHEN excluded.token_name = '' THEN token_name"
            " ELSE excluded.token_name END, last_seen = excluded.last_seen",
            (client_id, account, orjson.dumps(merged).decode(), token_name, now, now),
        )

    def remember_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str = ""
    ) -> None:
        """Record (or refresh) a world seen on /relay."""
        with self._lock:
            self._upsert_client(client_id, account, metadata, token_name, time.time())

    def known_client(self, client_id: str) -> KnownClient | None:
        row = self._one("SELECT * FROM known_clients WHERE client_id = ?", (client_id,))
        return _client_row(row) if row else None

    def known_clients(self, account: str | None) -> list[KnownClient]:
        """Known worlds of one account (or of all, for None), last seen first."""
        if account is None:
            rows = self._all("SELECT * FROM known_clients ORDER BY last_seen DESC")
        else:
            rows = self._all(
                "SELECT * FROM known_clients WHERE account = ? ORDER BY last_seen DESC", (account,)
            )
        return [_client_row(r) for r in rows]

    # Settings -------------------------------------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        row = self._one("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row["value"]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        self._run(
            "INSERT INTO settings (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
