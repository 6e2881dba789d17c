"""An account's API keys, connection tokens and known worlds in the relay store, as the /auth
routes manage them: every read and change is scoped to the caller's account (another account's
id is "not found"). Plain blocking I/O, one statement or transaction each."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from vttrelay.relay.accounts import worlds
from vttrelay.relay.store import (
    KeyRecord,
    KnownClient,
    RelayStore,
    TokenRecord,
    insert_key,
    insert_pairing_code,
    sha256_hex,
)

MAX_KEYS = 1000  # API keys per account
MAX_OPEN_CODES = 20  # pairing codes of an account waiting to be used

# The columns `key_fields.key_changes` may set.
KEY_COLUMNS = frozenset(
    {
        "name",
        "scopes",
        "client_ids",
        "user_id",
        "user_ids",
        "monthly_limit",
        "rate_per_minute",
        "expires_at",
        "enabled",
    }
)


def _set(changes: Mapping[str, Any]) -> tuple[str, list[Any]]:
    assert set(changes) <= KEY_COLUMNS, set(changes) - KEY_COLUMNS
    columns = sorted(changes)
    return ", ".join(f"{c} = ?" for c in columns), [changes[c] for c in columns]


def create_key(
    store: RelayStore, account: str, changes: Mapping[str, Any]
) -> tuple[str, str] | None:
    """A new key of the account with these columns; `(key_id, secret)` (the secret shown once),
    or None when the account has MAX_KEYS keys already."""
    now = time.time()
    with store.transaction() as db:
        count = db.execute(
            "SELECT COUNT(*) AS n FROM api_keys WHERE account = ?", (account,)
        ).fetchone()["n"]
        if count >= MAX_KEYS:
            return None
        key_id, secret = insert_key(db, account, [])
        assignments, values = _set(changes)
        db.execute(
            f"UPDATE api_keys SET {assignments}, updated_at = ? WHERE id = ?",
            (*values, now, key_id),
        )
    return key_id, secret


def account_key(store: RelayStore, account: str, key_id: str) -> KeyRecord | None:
    """The account's key with this id (None: unknown, or another account's)."""
    key = store.get_key(key_id)
    return key if key is not None and key.account == account else None


def update_key(
    store: RelayStore, account: str, key_id: str, changes: Mapping[str, Any]
) -> KeyRecord | None:
    """Change the account's key; the key as it is now, or None if it is not the account's."""
    if changes:
        assignments, values = _set(changes)
        store.db.run(
            f"UPDATE api_keys SET {assignments}, updated_at = ? WHERE id = ? AND account = ?",
            (*values, time.time(), key_id, account),
        )
    return account_key(store, account, key_id)


def delete_key(store: RelayStore, account: str, key_id: str) -> bool:
    with store.transaction() as db:
        db.execute(
            "DELETE FROM notification_settings WHERE kind = 'key' AND owner = ? AND account = ?",
            (key_id, account),
        )
        gone = db.execute(
            "DELETE FROM api_keys WHERE id = ? AND account = ?", (key_id, account)
        ).rowcount
    return gone == 1


def regenerate_key(store: RelayStore, account: str, key_id: str) -> str | None:
    """A new secret for the account's key (same id, scopes, limits, counts); None if unknown."""
    secret = secrets.token_hex(32)
    changed = store.db.run(
        "UPDATE api_keys SET key_hash = ?, updated_at = ? WHERE id = ? AND account = ?",
        (sha256_hex(secret), time.time(), key_id, account),
    )
    return secret if changed == 1 else None


# Connection tokens and worlds ----------------------------------------------------------------


def live_tokens(store: RelayStore, account: str) -> list[TokenRecord]:
    return [t for t in store.list_tokens(account) if t.revoked_at is None]


def account_token(store: RelayStore, account: str, token_id: str) -> TokenRecord | None:
    token = store.get_token(token_id)
    if token is None or token.account != account or token.revoked_at is not None:
        return None
    return token


def update_token(
    store: RelayStore, account: str, token_id: str, name: str | None, ip_allow: str | None
) -> bool:
    changes = {k: v for k, v in (("name", name), ("ip_allow", ip_allow)) if v is not None}
    if not changes:
        return account_token(store, account, token_id) is not None
    columns = sorted(changes)
    return (
        store.db.run(
            f"UPDATE connection_tokens SET {', '.join(f'{c} = ?' for c in columns)}"
            " WHERE id = ? AND account = ? AND revoked_at IS NULL",
            (*[changes[c] for c in columns], token_id, account),
        )
        == 1
    )


def pairing_code(store: RelayStore, account: str, ttl: float, client_id: str | None) -> str | None:
    """A pairing code of the account; bound to one of its worlds when `client_id` is given.
    None when the account has MAX_OPEN_CODES codes unused and unexpired already."""
    now = time.time()
    with store.transaction() as db:
        open_codes = db.execute(
            "SELECT COUNT(*) AS n FROM pairing_codes WHERE account = ? AND used_at IS NULL"
            " AND expires_at > ?",
            (account, now),
        ).fetchone()["n"]
        if open_codes >= MAX_OPEN_CODES:
            return None
        code = insert_pairing_code(db, account, ttl)
        if client_id:
            db.execute("UPDATE pairing_codes SET client_id = ? WHERE code = ?", (client_id, code))
    return code


def pairing_code_account(store: RelayStore, code: str) -> str | None:
    """The account a pairing code pairs with (None: no such code); it is not spent."""
    row = store.db.one("SELECT account FROM pairing_codes WHERE code = ?", (code.upper(),))
    return str(row["account"]) if row else None


def account_world(store: RelayStore, account: str, client_id: str) -> KnownClient | None:
    world = store.known_client(client_id)
    return world if world is not None and world.account == account else None


def forget_world(store: RelayStore, account: str, client_id: str) -> list[str] | None:
    """Revoke every connection token of the account's world and forget the world (its settings,
    users, notification settings, and its place in its siblings' target lists); the revoked
    token ids (to close their sockets), or None if the world is not the account's."""
    now = time.time()
    with store.transaction() as db:
        row = db.execute(
            "SELECT account FROM known_clients WHERE client_id = ?", (client_id,)
        ).fetchone()
        if row is None or row["account"] != account:
            return None
        ids = [
            r["id"]
            for r in db.execute(
                "SELECT id FROM connection_tokens WHERE account = ? AND client_id = ?"
                " AND revoked_at IS NULL",
                (account, client_id),
            ).fetchall()
        ]
        db.execute(
            "UPDATE connection_tokens SET revoked_at = ? WHERE account = ? AND client_id = ?"
            " AND revoked_at IS NULL",
            (now, account, client_id),
        )
        db.execute("DELETE FROM known_clients WHERE client_id = ?", (client_id,))
        db.execute(
            "DELETE FROM notification_settings WHERE kind = 'world' AND owner = ? AND account = ?",
            (client_id, account),
        )
        worlds.forget_target(db, account, client_id)
    return ids


def connection_logs(
    store: RelayStore, account: str, limit: int, offset: int
) -> tuple[int, list[dict[str, Any]]]:
    """The account's world connections, newest first: `(total, one page)`."""
    total = store.db.one("SELECT COUNT(*) AS n FROM connection_logs WHERE account = ?", (account,))[
        "n"
    ]
    rows = store.db.all(
        "SELECT * FROM connection_logs WHERE account = ? ORDER BY created_at DESC, id"
        " LIMIT ? OFFSET ?",
        (account, limit, offset),
    )
    return int(total), [dict(row) for row in rows]
