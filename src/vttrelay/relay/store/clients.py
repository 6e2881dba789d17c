"""The relay store's known worlds and their connection log (tables `known_clients`,
`connection_logs`): each world seen on /relay recorded with its metadata, each connection logged
(kept `CONNECTION_LOG_DAYS`, at most `CONNECTION_LOG_ROWS` per account)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from vttrelay.relay.store.base import StoreBase
from vttrelay.relay.store.database import Connection, Row


@dataclass(frozen=True)
class KnownClient:
    """A world this relay has paired or seen."""

    client_id: str
    account: str
    metadata: dict[str, Any]
    token_name: str
    first_seen: float
    last_seen: float


def _client_row(row: Row) -> KnownClient:
    return KnownClient(
        client_id=row["client_id"],
        account=row["account"],
        metadata=orjson.loads(row["metadata"]),
        token_name=row["token_name"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
    )


def upsert_client(
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


def log_connection(
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


class ClientsTable(StoreBase):
    """The known worlds of `RelayStore`."""

    def remember_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str = ""
    ) -> None:
        """Record (or refresh) a world seen on /relay, and log the connection."""
        now = time.time()
        with self.transaction() as db:
            upsert_client(db, client_id, account, metadata, token_name, now)
            log_connection(db, client_id, account, metadata, token_name, now)

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
