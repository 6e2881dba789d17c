"""What every table group of the relay store shares (`StoreBase`): the database, one write
transaction, the oldest-first listing and the purge of revoked rows; the stored form of a secret
(`sha256_hex`), fresh random codes (`new_code`, `insert_with_new_code`, also used by
`accounts/approvals.py`) and the SQL that tells a disabled account's rows."""

from __future__ import annotations

import hashlib
import secrets
from contextlib import AbstractContextManager
from typing import Any

from vttrelay.relay.store.database import Connection, Database, Row

DEFAULT_ACCOUNT = "default"
PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0, O, I, 1


def sha256_hex(secret: str) -> str:
    """The stored form of a key or token."""
    return hashlib.sha256(secret.encode()).hexdigest()


# The column a lookup by secret adds: whether the row's account is disabled (accounts without a
# login, such as the operator's `default`, have no users row: never disabled).
ACCOUNT_DISABLED = (
    "COALESCE((SELECT disabled FROM users WHERE users.account = {table}.account), 0)"
    " AS account_disabled"
)
# The condition that a row's account is not disabled.
ACCOUNT_ENABLED = "account NOT IN (SELECT account FROM users WHERE disabled = 1)"


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


class StoreBase:
    """The database the table groups (`keys.KeysTable`, `tokens.TokensTable`,
    `clients.ClientsTable`, `settings.SettingsTable`) write to; `RelayStore` opens it."""

    db: Database

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
