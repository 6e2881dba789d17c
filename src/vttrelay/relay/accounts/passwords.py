"""Password hashing with argon2id (argon2-cffi), off the event loop and bounded.

`PasswordHasher.verify` takes the same time for an unknown account as for a wrong password: the
caller passes None as the stored hash and a dummy hash made at start-up is checked instead, so
the answer's time tells nothing about whether an email is registered. Hashes run in worker
threads, at most `MAX_CONCURRENT` at once per process (each takes argon2's memory cost, 64 MiB
by default): more sign-ins wait their turn instead of exhausting memory.
"""

from __future__ import annotations

import asyncio
import secrets
import threading

import argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MAX_CONCURRENT = 2


class Passwords:
    """Hash and check account passwords; one per relay (`hasher` is argon2id's RFC 9106 low
    memory profile unless given, e.g. a cheaper one in unit tests)."""

    def __init__(self, hasher: argon2.PasswordHasher | None = None) -> None:
        self.hasher = hasher or argon2.PasswordHasher()  # argon2id, t=3, m=64 MiB, p=4
        self._dummy: str | None = None
        self._dummy_lock = threading.Lock()
        self._slots: asyncio.Semaphore | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CONCURRENT)
        return self._slots

    async def hash(self, password: str) -> str:
        async with self._semaphore():
            return await asyncio.to_thread(self.hasher.hash, password)

    def _dummy_hash(self) -> str:
        with self._dummy_lock:
            if self._dummy is None:
                self._dummy = self.hasher.hash(secrets.token_hex(16))
            return self._dummy

    def check(self, stored: str | None, password: str) -> bool:
        """Whether `password` matches `stored` (blocking). None checks the dummy and is False."""
        dummy = self._dummy_hash()  # made by the first check, whichever account it is for
        try:
            ok = self.hasher.verify(stored or dummy, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return ok and stored is not None

    async def verify(self, stored: str | None, password: str) -> bool:
        """`check` in a worker thread, at most MAX_CONCURRENT at once."""
        async with self._semaphore():
            return await asyncio.to_thread(self.check, stored, password)
