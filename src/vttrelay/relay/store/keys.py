"""The relay store's API keys (table `api_keys`): created with their secret shown once, found by
secret (the key cache), listed, revoked and purged, and their batched usage counts."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import orjson

from vttrelay.relay.store.base import ACCOUNT_DISABLED, StoreBase, sha256_hex
from vttrelay.relay.store.database import Connection, Row

KEY_PREFIX = 8  # characters of a key kept in the clear so that lists can tell keys apart


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


class KeysTable(StoreBase):
    """The API keys of `RelayStore`."""

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
