"""The relay's database: API keys, connection tokens, pairing codes, known worlds, settings.

SQLite (WAL, the default) or PostgreSQL (shared by every relay instance), with one schema managed
by yoyo-migrations (the SQL files in `migrations/`) and each statement written once
(`store.database` is the connection layer). Secrets are never stored: keys and tokens are kept as
SHA-256 hex digests and shown once at creation. This module is plain synchronous I/O; the request
hot path never calls it (see `auth.KeyCache`), and the relay runs its other calls in a thread.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Container, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

import orjson

from vttrelay.protocol import valid_id
from vttrelay.relay.accounts.client_ids import keeps_id, new_client_id, same_world
from vttrelay.relay.store.database import Connection, Database, Row, SqliteDatabase, open_database

DEFAULT_ACCOUNT = "default"
PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0, O, I, 1
PAIRING_CODE_LENGTH = 6
PAIRING_TTL = 600.0
KEY_PREFIX = 8  # characters of a key kept in the clear so that lists can tell keys apart


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
    monthly_limit: int | None = None  # calls per calendar month (UTC); None: no limit
    user_ids: tuple[tuple[str, str], ...] = ()  # (clientId, forced userId) per world
    usage_month: str = ""  # the month `month_requests` counts ("2026-11")
    month_requests: int = 0
    updated_at: float | None = None
    key_prefix: str = ""  # the key's first KEY_PREFIX characters ("" for keys made before)
    # its account is disabled (`vttrelay accounts disable`): the key is then not `enabled`
    # either; only the lookups by secret (the key cache's) read it
    account_disabled: bool = False

    def forced_user(self, client_id: str) -> str | None:
        """The userId every call of this key to world `client_id` acts as: the key's user for
        that world (`scopedUserIds`), else its user for every world, else None."""
        for world, user in self.user_ids:
            if world == client_id:
                return user
        return self.user_id

    def over_monthly_limit(self, pending: int = 0) -> bool:
        """Whether the key has used its calls of this month (UTC); `pending`: calls counted
        here but not written to the store yet."""
        if not self.monthly_limit:
            return False
        month = usage_periods(time.time())[0]
        used = self.month_requests if self.usage_month == month else 0
        return used + pending >= self.monthly_limit

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
    account_disabled: bool = False  # read by `token_by_secret` only (the /relay handshake)


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


def _key_row(row: Row) -> KeyRecord:
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
        monthly_limit=row["monthly_limit"],
        user_ids=tuple(orjson.loads(row["user_ids"]).items()),
        usage_month=row["usage_month"],
        month_requests=row["month_requests"],
        updated_at=row["updated_at"],
        key_prefix=row["key_prefix"],
    )


# The column a lookup by secret adds: whether the row's account is disabled (accounts without a
# login, such as the operator's `default`, have no users row: never disabled).
ACCOUNT_DISABLED = (
    "COALESCE((SELECT disabled FROM users WHERE users.account = {table}.account), 0)"
    " AS account_disabled"
)
# The condition that a row's account is not disabled.
ACCOUNT_ENABLED = "account NOT IN (SELECT account FROM users WHERE disabled = 1)"


def _looked_up_key(row: Row) -> KeyRecord:
    """A key read by its secret: a key of a disabled account does not work (`enabled` False)."""
    key = _key_row(row)
    if not row["account_disabled"]:
        return key
    return replace(key, enabled=False, account_disabled=True)


def usage_periods(ts: float) -> tuple[str, str]:
    """The month and day (UTC) a call at `ts` counts in: `("2026-11", "2026-11-27")`."""
    day = time.strftime("%Y-%m-%d", time.gmtime(ts))
    return day[:7], day


def _token_row(row: Row) -> TokenRecord:
    return TokenRecord(
        id=row["id"],
        account=row["account"],
        client_id=row["client_id"],
        name=row["name"],
        ip_allow=row["ip_allow"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
    )


def _client_row(row: Row) -> KnownClient:
    return KnownClient(
        client_id=row["client_id"],
        account=row["account"],
        metadata=orjson.loads(row["metadata"]),
        token_name=row["token_name"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
    )


def insert_key(
    db: Connection,
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
        "INSERT INTO api_keys (id, account, name, key_hash, key_prefix, scopes, client_ids,"
        " user_id, expires_at, enabled, rate_per_minute, created_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,1,?,?)",
        (
            key_id,
            account,
            name,
            sha256_hex(secret),
            secret[:KEY_PREFIX],
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


def insert_with_new_code(db: Connection, sql: str, length: int, args: tuple[Any, ...]) -> str:
    """Run an `INSERT ... ON CONFLICT DO NOTHING` whose first value is a fresh code of `length`
    characters, drawing again while the code is taken (a failed INSERT would end a PostgreSQL
    transaction, so taken codes are skipped, not caught)."""
    while True:
        code = new_code(length)
        if db.execute(sql, (code, *args)).rowcount == 1:
            return code


def insert_pairing_code(db: Connection, account: str, ttl: float, now: float | None = None) -> str:
    """Insert a single-use 6-character pairing code valid `ttl` seconds (inside the caller's
    transaction); a code already taken is drawn again."""
    now = time.time() if now is None else now
    return insert_with_new_code(
        db,
        "INSERT INTO pairing_codes (code, account, created_at, expires_at) VALUES (?,?,?,?)"
        " ON CONFLICT DO NOTHING",
        PAIRING_CODE_LENGTH,
        (account, now, now + ttl),
    )


class RelayStore:
    """The relay's store on SQLite or PostgreSQL. Safe to share between threads; one per process
    is enough. `target` is a SQLite file's path or a `postgresql://` URL (`store.database`)."""

    def __init__(self, target: Path | str) -> None:
        self.db: Database = open_database(target)

    @property
    def url(self) -> str:
        """Where the store lives (`sqlite:///<path>` or the PostgreSQL URL)."""
        return self.db.url

    @property
    def path(self) -> Path | None:
        """The SQLite file, or None on PostgreSQL."""
        return self.db.path if isinstance(self.db, SqliteDatabase) else None

    def close(self) -> None:
        self.db.close()

    def transaction(self) -> AbstractContextManager[Connection]:
        """One write transaction that runs alone: committed when the block ends, rolled back if
        it raises, so a call that fails changes nothing. Other processes and instances sharing
        the database wait for it."""
        return self.db.transaction()

    def _oldest_first(self, table: str, account: str | None) -> list[Row]:
        """Every row of `table` (of one account, or of all), oldest first."""
        if account is None:
            return self.db.all(f"SELECT * FROM {table} ORDER BY created_at, id")
        return self.db.all(
            f"SELECT * FROM {table} WHERE account = ? ORDER BY created_at, id", (account,)
        )

    def _purge(self, table: str, revoked: str, account: str | None) -> int:
        """Delete the revoked rows of `table` (`revoked`: the SQL condition), of one account or
        of all; how many went."""
        if account is None:
            return self.db.run(f"DELETE FROM {table} WHERE {revoked}")
        return self.db.run(f"DELETE FROM {table} WHERE {revoked} AND account = ?", (account,))

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
        with self.transaction() as db:
            return insert_key(
                db, account, scopes, client_ids, user_id, expires_at, rate_per_minute, name
            )

    def key_by_secret(self, secret: str) -> KeyRecord | None:
        """The key whose secret this is, enabled or not; None if unknown."""
        row = self.db.one(
            f"SELECT *, {ACCOUNT_DISABLED.format(table='api_keys')} FROM api_keys"
            " WHERE key_hash = ?",
            (sha256_hex(secret),),
        )
        return _looked_up_key(row) if row else None

    def keys_by_secret(self, wanted: Iterable[str]) -> dict[str, KeyRecord]:
        """The keys of these secrets that exist, by secret: one query per 500 secrets (the key
        cache's refresh)."""
        by_hash = {sha256_hex(secret): secret for secret in wanted}
        hashes = list(by_hash)
        found: dict[str, KeyRecord] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = (
                f"SELECT *, {ACCOUNT_DISABLED.format(table='api_keys')} FROM api_keys"
                f" WHERE key_hash IN ({marks})"
            )
            for row in self.db.all(sql, chunk):
                found[by_hash[row["key_hash"]]] = _looked_up_key(row)
        return found

    def get_key(self, key_id: str) -> KeyRecord | None:
        row = self.db.one("SELECT * FROM api_keys WHERE id = ?", (key_id,))
        return _key_row(row) if row else None

    def list_keys(self, account: str | None = None) -> list[KeyRecord]:
        return [_key_row(r) for r in self._oldest_first("api_keys", account)]

    def revoke_key(self, key_id: str) -> bool:
        """Disable a key for good. True if it existed and was enabled."""
        return (
            self.db.run("UPDATE api_keys SET enabled = 0 WHERE id = ? AND enabled = 1", (key_id,))
            > 0
        )

    def purge_revoked_keys(self, account: str | None = None) -> int:
        """Remove revoked keys for good (`vttrelay keys purge`); how many."""
        return self._purge("api_keys", "enabled = 0", account)

    def add_usage(self, usage: Mapping[str, tuple[int, float]]) -> None:
        """Add batched request counts: key id -> (count, last used at); the month's and the
        day's counts start again at a new month or day (UTC)."""
        if not usage:
            return
        month, day = usage_periods(time.time())
        with self.transaction() as db:
            db.executemany(
                "UPDATE api_keys SET request_count = request_count + ?,"
                " last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ?"
                " ELSE last_used_at END,"
                " month_requests = CASE WHEN usage_month = ? THEN month_requests + ? ELSE ? END,"
                " usage_month = ?,"
                " day_requests = CASE WHEN usage_day = ? THEN day_requests + ? ELSE ? END,"
                " usage_day = ? WHERE id = ?",
                [
                    (n, last, last, month, n, n, month, day, n, n, day, key_id)
                    for key_id, (n, last) in sorted(usage.items())
                ],
            )

    # Pairing and connection tokens ----------------------------------------------------------

    def create_pairing_code(self, account: str = DEFAULT_ACCOUNT, ttl: float = PAIRING_TTL) -> str:
        """A single-use 6-character code, valid `ttl` seconds."""
        with self.transaction() as db:
            return insert_pairing_code(db, account, ttl)

    def redeem_pairing_code(
        self,
        code: str,
        existing_client_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        live: Container[str] = (),
    ) -> Pairing | PairingError:
        """Trade a code for a new connection token (atomically: a code works once, on whichever
        instance redeems it first). The world keeps `existing_client_id` only as
        `client_ids.keeps_id` allows, else pairs as the account's world with its world id
        (`client_ids.same_world`); `live`: the ids connected now (of the code's account)."""
        now = time.time()
        with self.transaction() as db:
            row = db.execute(
                "SELECT * FROM pairing_codes WHERE code = ?", (code.upper(),)
            ).fetchone()
            if row is None:
                return PairingError.INVALID
            if row["used_at"] is not None:
                return PairingError.USED
            if row["expires_at"] <= now:
                return PairingError.EXPIRED
            db.execute("UPDATE pairing_codes SET used_at = ? WHERE code = ?", (now, row["code"]))
            account = row["account"]
            meta = dict(metadata or {})
            client_id = existing_client_id
            if row["client_id"]:  # a code its account minted for one of its worlds
                client_id = row["client_id"]
            elif client_id is not None:
                known = db.execute(
                    "SELECT account, metadata FROM known_clients WHERE client_id = ?", (client_id,)
                ).fetchone()
                owner, stored = (
                    (known["account"], orjson.loads(known["metadata"])) if known else (None, None)
                )
                world_id = str(meta.get("worldId") or "")
                if not keeps_id(owner, stored, account, world_id, client_id in live):
                    client_id = None
            if client_id is None:
                known = db.execute(
                    "SELECT client_id, metadata FROM known_clients WHERE account = ?"
                    " ORDER BY first_seen, client_id",
                    (account,),
                ).fetchall()
                client_id = same_world(
                    ((r["client_id"], orjson.loads(r["metadata"])) for r in known),
                    str(meta.get("worldId") or ""),
                    str(meta.get("publicUrl") or ""),
                    live,
                )
            client_id = client_id or new_client_id()
            name = str(meta.get("worldTitle") or "")
            token = _insert_token(db, account, client_id, name, now)
            _upsert_client(db, client_id, account, meta, name, now)
        return Pairing(token=token, client_id=client_id, account=account)

    def create_connection_token(
        self, account: str, client_id: str, name: str = "", ip_allow: str = ""
    ) -> str:
        """Mint a connection token directly (no pairing); returns the token, shown once.
        ValueError if `client_id` is not an id a world may have (`protocol.ID_PATTERN`)."""
        if not valid_id(client_id):
            raise ValueError(f"invalid client id {client_id!r}")
        now = time.time()
        with self.transaction() as db:
            token = _insert_token(db, account, client_id, name, now, ip_allow)
            _upsert_client(db, client_id, account, {}, name, now)
        return token

    def token_by_secret(self, token: str) -> TokenRecord | None:
        """The live (not revoked) connection token with this secret (`account_disabled` says
        whether its account is disabled)."""
        row = self.db.one(
            f"SELECT *, {ACCOUNT_DISABLED.format(table='connection_tokens')}"
            " FROM connection_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (sha256_hex(token),),
        )
        if row is None:
            return None
        return replace(_token_row(row), account_disabled=bool(row["account_disabled"]))

    def live_token_ids(self, token_ids: Iterable[str]) -> set[str]:
        """Which of these token ids are still live (not revoked, account not disabled): one
        query per 500."""
        return self._token_ids(token_ids, ACCOUNT_ENABLED)

    def suspended_token_ids(self, token_ids: Iterable[str]) -> set[str]:
        """Which of these token ids are not revoked but belong to a disabled account."""
        return self._token_ids(token_ids, f"NOT {ACCOUNT_ENABLED}")

    def _token_ids(self, token_ids: Iterable[str], condition: str) -> set[str]:
        ids = list(dict.fromkeys(token_ids))
        found: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.all(
                f"SELECT id FROM connection_tokens WHERE id IN ({marks}) AND revoked_at IS NULL"
                f" AND {condition}",
                chunk,
            )
            found.update(row["id"] for row in rows)
        return found

    def revoke_token(self, token: str) -> TokenRecord | None:
        """Revoke a connection token by its secret; returns it if it was live."""
        record = self.token_by_secret(token)
        if record is None or not self.revoke_token_id(record.id):
            return None
        return record

    def list_tokens(self, account: str | None = None) -> list[TokenRecord]:
        """Connection tokens (never their secrets), oldest first, revoked ones included."""
        return [_token_row(r) for r in self._oldest_first("connection_tokens", account)]

    def get_token(self, token_id: str) -> TokenRecord | None:
        row = self.db.one("SELECT * FROM connection_tokens WHERE id = ?", (token_id,))
        return _token_row(row) if row else None

    def revoke_token_id(self, token_id: str) -> bool:
        """Revoke a connection token by its id. True if it existed and was live."""
        return (
            self.db.run(
                "UPDATE connection_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (time.time(), token_id),
            )
            > 0
        )

    def purge_revoked_tokens(self, account: str | None = None) -> int:
        """Remove revoked connection tokens for good (`vttrelay tokens purge`); how many."""
        return self._purge("connection_tokens", "revoked_at IS NOT NULL", account)

    def revoke_tokens_named(self, account: str, name: str) -> int:
        """Revoke every live token of an account with this name (used by `serve`)."""
        return self.db.run(
            "UPDATE connection_tokens SET revoked_at = ? WHERE account = ? AND name = ?"
            " AND revoked_at IS NULL",
            (time.time(), account, name),
        )

    # Known worlds ---------------------------------------------------------------------------

    def remember_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str = ""
    ) -> None:
        """Record (or refresh) a world seen on /relay, and log the connection."""
        now = time.time()
        with self.transaction() as db:
            _upsert_client(db, client_id, account, metadata, token_name, now)
            _log_connection(db, client_id, account, metadata, token_name, now)

    def known_client(self, client_id: str) -> KnownClient | None:
        row = self.db.one("SELECT * FROM known_clients WHERE client_id = ?", (client_id,))
        return _client_row(row) if row else None

    def known_clients(self, account: str | None) -> list[KnownClient]:
        """Known worlds of one account (or of all, for None), last seen first."""
        if account is None:
            rows = self.db.all("SELECT * FROM known_clients ORDER BY last_seen DESC")
        else:
            rows = self.db.all(
                "SELECT * FROM known_clients WHERE account = ? ORDER BY last_seen DESC", (account,)
            )
        return [_client_row(r) for r in rows]

    # Settings -------------------------------------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        row = self.db.one("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row["value"]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        self.db.run(
            "INSERT INTO settings (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def claim_setting(self, key: str, value: str) -> bool:
        """Set `key` unless it is set: True for the one caller that set it (a thing done once
        per store, even by processes starting together)."""
        return bool(
            self.db.run(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, value),
            )
        )


def _insert_token(
    db: Connection, account: str, client_id: str, name: str, now: float, ip_allow: str = ""
) -> str:
    token = secrets.token_hex(32)
    db.execute(
        "INSERT INTO connection_tokens (id, account, client_id, name, token_hash, ip_allow,"
        " created_at) VALUES (?,?,?,?,?,?,?)",
        ("tok_" + secrets.token_hex(6), account, client_id, name, sha256_hex(token), ip_allow, now),
    )
    return token


def _upsert_client(
    db: Connection,
    client_id: str,
    account: str,
    metadata: Mapping[str, Any],
    token_name: str,
    now: float,
) -> None:
    row = db.execute(
        "SELECT metadata FROM known_clients WHERE client_id = ?", (client_id,)
    ).fetchone()
    merged = {**(orjson.loads(row["metadata"]) if row else {}), **metadata}
    db.execute(
        "INSERT INTO known_clients (client_id, account, metadata, token_name, first_seen,"
        " last_seen) VALUES (?,?,?,?,?,?) ON CONFLICT (client_id) DO UPDATE SET"
        " account = excluded.account, metadata = excluded.metadata,"
        " token_name = CASE WHEN excluded.token_name = '' THEN known_clients.token_name"
        " ELSE excluded.token_name END, last_seen = excluded.last_seen",
        (client_id, account, orjson.dumps(merged).decode(), token_name, now, now),
    )


CONNECTION_LOG_DAYS = 90  # connection log rows are kept this long
CONNECTION_LOG_ROWS = 1000  # and at most this many per account (the newest)


def _log_connection(
    db: Connection,
    client_id: str,
    account: str,
    metadata: Mapping[str, Any],
    token_name: str,
    now: float,
) -> None:
    def text(name: str) -> str:
        return str(metadata.get(name) or "")[:256]

    db.execute(
        "INSERT INTO connection_logs (id, account, client_id, token_name, ip_address, world_id,"
        " world_title, system_id, foundry_version, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            "conn_" + secrets.token_hex(8),
            account,
            client_id,
            token_name[:256],
            text("ipAddress"),
            text("worldId"),
            text("worldTitle"),
            text("systemId"),
            text("foundryVersion"),
            now,
        ),
    )
    db.execute(
        "DELETE FROM connection_logs WHERE created_at < ?", (now - CONNECTION_LOG_DAYS * 86400,)
    )
    db.execute(
        "DELETE FROM connection_logs WHERE account = ? AND id NOT IN (SELECT id FROM"
        " connection_logs WHERE account = ? ORDER BY created_at DESC LIMIT ?)",
        (account, account, CONNECTION_LOG_ROWS),
    )
