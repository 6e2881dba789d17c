"""Stored Foundry credentials (accounts-auth.md §2.9, §8): the Foundry URL, user name and
password an account keeps on the relay so that a headless session can log in for it.

The password is encrypted at rest with AES-256-GCM (`cryptography`), a fresh 12-byte nonce per
encryption, under the operator's key: `AccountSettings.credentials_key`, else the environment
variable `VTTRELAY_CREDENTIALS_KEY` (64 hex digits, or base64 of 32 bytes), else the file
`credentials.key` in the data dir, made on first use with owner-only permissions (0600). Relays
that share a PostgreSQL store must share the key (set the variable on each). The ciphertext is
bound to its row (associated data: account and credential id), so a row's password cannot be
moved to another row or account. Only `Vault.password` decrypts; no route ever returns it.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from vttrelay.relay.accounts.settings import CREDENTIALS_KEY_ENV
from vttrelay.relay.accounts.worlds import unlink_credential
from vttrelay.relay.store import RelayStore
from vttrelay.relay.store.database import Row

KEY_FILE: Final = "credentials.key"
MAX_PER_ACCOUNT: Final = 100


class VaultUnavailable(Exception):
    """The operator's key is malformed: credentials cannot be stored or read."""


def parse_key(text: str) -> bytes:
    """32 key bytes from 64 hex digits or standard base64; VaultUnavailable otherwise."""
    text = text.strip()
    try:
        if len(text) == 64:
            return bytes.fromhex(text)
        raw = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise VaultUnavailable("the credentials key is neither 64 hex digits nor base64") from None
    if len(raw) != 32:
        raise VaultUnavailable("the credentials key is not 32 bytes")
    return raw


def load_key(configured: str | None, data_dir: Path) -> bytes:
    """The operator's key (see the module docstring), making the key file if there is none."""
    text = configured or os.environ.get(CREDENTIALS_KEY_ENV)
    if text:
        return parse_key(text)
    path = Path(data_dir) / KEY_FILE
    try:
        return parse_key(path.read_text())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return parse_key(path.read_text())
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32) + "\n")
    return parse_key(path.read_text())


@dataclass(frozen=True)
class Credential:
    """A stored credential without its password."""

    id: str
    account: str
    name: str
    foundry_url: str
    foundry_username: str
    world: str
    created_at: float
    updated_at: float


def _credential(row: Row) -> Credential:
    return Credential(
        id=row["id"],
        account=row["account"],
        name=row["name"],
        foundry_url=row["foundry_url"],
        foundry_username=row["foundry_username"],
        world=row["world"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class Vault:
    """Credentials of accounts in the store, their passwords sealed with the operator's key."""

    def __init__(self, store: RelayStore, configured: str | None, data_dir: Path) -> None:
        self.store = store
        self._configured = configured
        self._data_dir = data_dir
        self._aead: AESGCM | None = None

    def _cipher(self) -> AESGCM:
        if self._aead is None:
            self._aead = AESGCM(load_key(self._configured, self._data_dir))
        return self._aead

    def _seal(self, account: str, credential_id: str, password: str) -> tuple[str, str, str]:
        nonce = secrets.token_bytes(12)
        sealed = self._cipher().encrypt(
            nonce, password.encode(), f"{account}:{credential_id}".encode()
        )
        return sealed[:-16].hex(), nonce.hex(), sealed[-16:].hex()

    def create(
        self, account: str, name: str, url: str, username: str, password: str, world: str
    ) -> Credential | None:
        """Store a credential; None when the account has MAX_PER_ACCOUNT already."""
        credential_id = "cred_" + secrets.token_hex(6)
        ciphertext, nonce, tag = self._seal(account, credential_id, password)
        now = time.time()
        with self.store.transaction() as db:
            count = db.execute(
                "SELECT COUNT(*) AS n FROM credentials WHERE account = ?", (account,)
            ).fetchone()["n"]
            if count >= MAX_PER_ACCOUNT:
                return None
            db.execute(
                "INSERT INTO credentials (id, account, name, foundry_url, foundry_username,"
                " password_ciphertext, password_nonce, password_tag, world, created_at,"
                " updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (credential_id, account, name, url, username, ciphertext, nonce, tag, world,
                 now, now),
            )  # fmt: skip
        return self.get(account, credential_id)

    def get(self, account: str, credential_id: str) -> Credential | None:
        row = self.store.db.one(
            "SELECT * FROM credentials WHERE id = ? AND account = ?", (credential_id, account)
        )
        return _credential(row) if row else None

    def list(self, account: str) -> list[Credential]:
        rows = self.store.db.all(
            "SELECT * FROM credentials WHERE account = ? ORDER BY created_at, id", (account,)
        )
        return [_credential(r) for r in rows]

    def update(
        self,
        account: str,
        credential_id: str,
        password: str,
        name: str | None,
        url: str | None,
        username: str | None,
        world: str | None,
    ) -> Credential | None:
        """Change a credential (its password re-sealed with a new nonce); None if unknown."""
        ciphertext, nonce, tag = self._seal(account, credential_id, password)
        fields = {
            "name": name,
            "foundry_url": url,
            "foundry_username": username,
            "world": world,
            "password_ciphertext": ciphertext,
            "password_nonce": nonce,
            "password_tag": tag,
        }
        columns = sorted(k for k, v in fields.items() if v is not None)
        changed = self.store.db.run(
            f"UPDATE credentials SET {', '.join(f'{c} = ?' for c in columns)}, updated_at = ?"
            " WHERE id = ? AND account = ?",
            (*[fields[c] for c in columns], time.time(), credential_id, account),
        )
        return self.get(account, credential_id) if changed == 1 else None

    def delete(self, account: str, credential_id: str) -> bool:
        """Delete a credential; the worlds it was linked to are unlinked (no dangling link, as
        the reference leaves)."""
        with self.store.transaction() as db:
            gone = db.execute(
                "DELETE FROM credentials WHERE id = ? AND account = ?", (credential_id, account)
            ).rowcount
            unlink_credential(db, account, credential_id)
        return gone == 1

    def password(self, account: str, credential_id: str) -> str | None:
        """The decrypted password (for a headless session); None if unknown or not readable
        with this key."""
        row = self.store.db.one(
            "SELECT * FROM credentials WHERE id = ? AND account = ?", (credential_id, account)
        )
        if row is None:
            return None
        sealed = bytes.fromhex(row["password_ciphertext"]) + bytes.fromhex(row["password_tag"])
        try:
            plain = self._cipher().decrypt(
                bytes.fromhex(row["password_nonce"]), sealed, f"{account}:{credential_id}".encode()
            )
        except InvalidTag:
            return None
        return plain.decode()

    def available(self) -> str | None:
        """None when credentials can be stored, else why not."""
        try:
            self._cipher()
        except VaultUnavailable as exc:
            return str(exc)
        return None
