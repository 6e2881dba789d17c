"""The relay store's pairing codes and connection tokens (tables `pairing_codes`,
`connection_tokens`): a code traded once for a token (the world's id kept as
`accounts.client_ids.keeps_id` allows), tokens minted directly, found by secret, listed,
revoked and purged."""

from __future__ import annotations

import secrets
import time
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

import orjson

from vttrelay.protocol import valid_id
from vttrelay.relay.accounts.client_ids import keeps_id, new_client_id, same_world
from vttrelay.relay.store.base import (
    ACCOUNT_DISABLED,
    ACCOUNT_ENABLED,
    DEFAULT_ACCOUNT,
    StoreBase,
    insert_with_new_code,
    sha256_hex,
)
from vttrelay.relay.store.clients import upsert_client
from vttrelay.relay.store.database import Connection, Row

PAIRING_CODE_LENGTH = 6
PAIRING_TTL = 600.0


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


class TokensTable(StoreBase):
    """The pairing codes and connection tokens of `RelayStore`."""

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
            upsert_client(db, client_id, account, meta, name, now)
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
            upsert_client(db, client_id, account, {}, name, now)
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
