"""The session handshake of the reference relay (files-sheet-sessions §4.3-4.4), exactly:
a fresh RSA-2048 key pair per handshake, a 16-byte nonce (32 hex) and a 32-byte token (64 hex),
kept in this process's memory for five minutes and usable once. The client encrypts
`{"password": ..., "nonce": ...}` with RSA-OAEP (SHA-256 for the hash and MGF1, no label) under
the handshake's public key and sends it base64 as `encryptedPassword`. Keys come from
`cryptography`. At most `MAX_HANDSHAKES` wait at once (the oldest is dropped), expired ones are
dropped as new ones come, and an account makes at most `PER_ACCOUNT_PER_MINUTE` a minute (each
costs an RSA key: 429 past it).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import orjson
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from vttrelay.sessions.errors import Refused

HANDSHAKE_TTL: Final = 300.0
MAX_HANDSHAKES: Final = 10_000
# An RSA key costs ~50-100 ms of CPU: an account makes at most this many handshakes a minute.
PER_ACCOUNT_PER_MINUTE: Final = 10
OAEP: Final = padding.OAEP(
    mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None
)


class HandshakeError(Refused):
    """A start-session request the handshake refuses: HTTP status and the reference's text."""


@dataclass(frozen=True)
class Handshake:
    token: str
    nonce: str
    private_key: rsa.RSAPrivateKey
    foundry_url: str
    username: str
    world_name: str
    account: str
    expires: float  # seconds since the epoch

    def public_pem(self) -> str:
        return (
            self.private_key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def answer(self, instance_id: str) -> dict[str, Any]:
        """The handshake's 200 body (the reference's keys)."""
        expires = datetime.fromtimestamp(self.expires, UTC).replace(microsecond=0)
        return {
            "expires": expires.isoformat().replace("+00:00", "Z"),
            "foundryUrl": self.foundry_url,
            "instanceId": instance_id,
            "nonce": self.nonce,
            "publicKey": self.public_pem(),
            "token": self.token,
            "username": self.username,
        }


class Handshakes:
    """The handshakes waiting for their start-session, by token."""

    def __init__(
        self,
        ttl: float = HANDSHAKE_TTL,
        limit: int = MAX_HANDSHAKES,
        per_minute: int = PER_ACCOUNT_PER_MINUTE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ttl = ttl
        self.clock = clock  # seconds since the epoch: when a handshake expires (tests pass a fake)
        self.limit = limit
        self.per_minute = per_minute
        self._items: OrderedDict[str, Handshake] = OrderedDict()
        self._made: dict[str, deque[float]] = {}  # account -> when its recent ones were made
        self._lock = threading.Lock()

    def allow(self, account: str) -> bool:
        """May `account` make another handshake now (counted if so)?"""
        now = time.monotonic()
        with self._lock:
            made = self._made.setdefault(account, deque())
            while made and now - made[0] > 60:
                made.popleft()
            if len(made) >= self.per_minute:
                return False
            made.append(now)
            if len(self._made) > self.limit:  # forget accounts that made none lately
                for quiet in [a for a, d in self._made.items() if not d]:
                    del self._made[quiet]
            return True

    def create(self, account: str, foundry_url: str, username: str, world_name: str) -> Handshake:
        """A new handshake (the RSA key takes ~50 ms: call it off the event loop)."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        made = Handshake(
            token=secrets.token_hex(32),
            nonce=secrets.token_hex(16),
            private_key=key,
            foundry_url=foundry_url,
            username=username,
            world_name=world_name,
            account=account,
            expires=self.clock() + self.ttl,
        )
        with self._lock:
            self._drop_expired()
            while len(self._items) >= self.limit:
                self._items.popitem(last=False)
            self._items[made.token] = made
        return made

    def take(self, token: str, account: str) -> Handshake:
        """The handshake of `token`, removed (single use, even if what follows fails); one that
        is unknown, expired or another account's is refused."""
        with self._lock:
            found = self._items.pop(token, None)
        if found is None or found.expires < self.clock() or found.account != account:
            raise HandshakeError(400, "Invalid or expired handshake token")
        return found

    def _drop_expired(self) -> None:
        now = self.clock()
        for token in [t for t, h in self._items.items() if h.expires < now]:
            del self._items[token]


def decrypt_password(handshake: Handshake, encrypted: str) -> str:
    """The password sent encrypted for `handshake` (checks 4-7 of the reference, its texts)."""
    try:
        cipher = base64.b64decode(encrypted, validate=True)
    except (binascii.Error, ValueError):
        raise HandshakeError(400, "Invalid encrypted password encoding") from None
    try:
        plain = handshake.private_key.decrypt(cipher, OAEP)
    except ValueError:
        raise HandshakeError(400, "Failed to decrypt password") from None
    try:
        credential = orjson.loads(plain)
    except orjson.JSONDecodeError:
        raise HandshakeError(400, "Invalid decrypted credential format") from None
    if not isinstance(credential, dict):
        raise HandshakeError(400, "Invalid decrypted credential format")
    if credential.get("nonce") != handshake.nonce:
        raise HandshakeError(401, "Nonce mismatch")
    password = credential.get("password")
    return password if isinstance(password, str) else ""


def encrypt_password(public_pem: str, password: str, nonce: str) -> str:
    """What a client sends (the peer suite's way): for tests and the SDK."""
    key = serialization.load_pem_public_key(public_pem.encode())
    assert isinstance(key, rsa.RSAPublicKey)
    plain = orjson.dumps({"password": password, "nonce": nonce})
    return base64.b64encode(key.encrypt(plain, OAEP)).decode()
