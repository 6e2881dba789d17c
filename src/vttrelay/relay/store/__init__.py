"""The relay's database: API keys, connection tokens, pairing codes, known worlds, settings.

SQLite (WAL, the default) or PostgreSQL (shared by every relay instance), with one schema managed
by yoyo-migrations (the SQL files in `migrations/`) and each statement written once
(`store.database` is the connection layer). Secrets are never stored: keys and tokens are kept as
SHA-256 hex digests and shown once at creation. This module is plain synchronous I/O; the request
hot path never calls it (see `auth.KeyCache`), and the relay runs its other calls in a thread.
"""

from __future__ import annotations

from pathlib import Path

from vttrelay.relay.store.base import (
    ACCOUNT_DISABLED,
    ACCOUNT_ENABLED,
    DEFAULT_ACCOUNT,
    PAIRING_ALPHABET,
    insert_with_new_code,
    new_code,
    sha256_hex,
)
from vttrelay.relay.store.clients import (
    CONNECTION_LOG_DAYS,
    CONNECTION_LOG_ROWS,
    ClientsTable,
    KnownClient,
)
from vttrelay.relay.store.database import Database, SqliteDatabase, open_database
from vttrelay.relay.store.keys import KEY_PREFIX, KeyRecord, KeysTable, insert_key, usage_periods
from vttrelay.relay.store.settings import SettingsTable
from vttrelay.relay.store.tokens import (
    PAIRING_CODE_LENGTH,
    PAIRING_TTL,
    Pairing,
    PairingError,
    TokenRecord,
    TokensTable,
    insert_pairing_code,
)


class RelayStore(KeysTable, TokensTable, ClientsTable, SettingsTable):
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


__all__ = [
    "ACCOUNT_DISABLED",
    "ACCOUNT_ENABLED",
    "CONNECTION_LOG_DAYS",
    "CONNECTION_LOG_ROWS",
    "DEFAULT_ACCOUNT",
    "KEY_PREFIX",
    "PAIRING_ALPHABET",
    "PAIRING_CODE_LENGTH",
    "PAIRING_TTL",
    "KeyRecord",
    "KnownClient",
    "Pairing",
    "PairingError",
    "RelayStore",
    "TokenRecord",
    "insert_key",
    "insert_pairing_code",
    "insert_with_new_code",
    "new_code",
    "sha256_hex",
    "usage_periods",
]
