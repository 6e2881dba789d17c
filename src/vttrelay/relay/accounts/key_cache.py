"""API keys on the hot path without database I/O: `KeyCache` and `UsageCounter`.

Key lookups go through `KeyCache` and usage is counted in memory and flushed in batches by
`UsageCounter`; both read and write the store in a worker thread, never on the event loop (the
store may be a PostgreSQL server across the network). The rules that use a key (authentication,
scopes, rate, allowed worlds, forced user) live in `core.py`, shared by REST, SSE and /ws/api.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from vttrelay.relay import peer_limits
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.store import KeyRecord, RelayStore

log = logging.getLogger("vttrelay.relay")

MINUTE = 60.0  # the unknown-secret budget's window
MAX_SECRET = 256  # longer secrets are never looked up: no key has one
TOO_MANY_UNKNOWN_KEYS = "Too many unknown API keys from this address, please try again later"


class KeyCache:
    """Secret -> KeyRecord without a database read on the hot path.

    A secret this instance has not seen is read once from the store: callers on the event loop
    `await load(secret)` first when `missing(secret)` (the read runs in a worker thread; the
    middleware and the /ws/api auth do it), so `lookup` then answers from memory. Known keys
    stay in memory and `run` re-reads them all in one batch every `ttl` seconds (in a thread),
    so a key revoked or changed anywhere (another relay instance, the CLI) stops working here
    within `ttl` seconds plus one batch. Unknown secrets are remembered as misses for `ttl`.

    Each unknown secret costs one store read, so a caller's address may try at most
    `unknown_per_minute` unknown secrets a minute (`load` with the address; 0 or no `counters`:
    no limit): past that its new secrets are not read until its budget refills. The budget is
    the address's `peer_limits.UNKNOWN_KEYS` bucket in the relay's `Counters`, so scaled-out
    instances draw from one budget. Only the first read of a secret is counted, and only when
    it names no key: known keys never pay anything.
    """

    def __init__(
        self,
        store: RelayStore,
        ttl: float = 5.0,
        max_entries: int = 100_000,
        unknown_per_minute: int = 0,
        clock: Callable[[], float] = time.monotonic,
        counters: Counters | None = None,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock  # seconds, when a miss is forgotten (tests pass a fake)
        self.max_entries = max_entries
        self.unknown_per_minute = unknown_per_minute if counters is not None else 0
        self.counters = counters  # the budgets of unknown secrets looked up, per address
        # secret -> (time a miss is forgotten; known keys: 0.0, kept until a refresh drops them)
        self._cache: dict[str, tuple[float, KeyRecord | None]] = {}
        self._loading: dict[str, asyncio.Future[None]] = {}

    def lookup(self, secret: str) -> KeyRecord | None:
        """The key with this secret, or None. From memory unless `missing(secret)`; then it is
        read here, blocking (tests and tools; the relay loads first)."""
        hit = self._cache.get(secret)
        if hit is not None and (hit[1] is not None or hit[0] > self.clock()):
            return hit[1]
        return self._put(secret, self._fetch(secret))

    def cached(self, secret: str) -> KeyRecord | None:
        """The key with this secret if the cache holds it (never reads the store)."""
        hit = self._cache.get(secret)
        return hit[1] if hit is not None else None

    def missing(self, secret: str) -> bool:
        """Whether `lookup(secret)` would read the store."""
        hit = self._cache.get(secret)
        return hit is None or (hit[1] is None and hit[0] <= self.clock())

    async def load(self, secret: str, address: str | None = None) -> bool:
        """Read one secret's key into the cache in a worker thread (concurrent loads of the same
        secret share one read). From a caller at `address` whose budget of unknown secrets is
        spent, nothing is read: False (answer 429 `TOO_MANY_UNKNOWN_KEYS`)."""
        limit, counters = self.unknown_per_minute, self.counters
        bucket = None
        if address is not None and limit > 0 and counters is not None:
            bucket = peer_limits.bucket(peer_limits.UNKNOWN_KEYS, address)
            if not await peer_limits.has_token_named(counters, bucket, limit, MINUTE):
                return False
        pending = self._loading.get(secret)
        if pending is None:
            pending = self._loading[secret] = asyncio.ensure_future(self._load(secret))
        await asyncio.shield(pending)  # a caller that goes away does not cancel the others'
        if bucket is not None and counters is not None and self.cached(secret) is None:
            await peer_limits.take_named(counters, bucket, limit, MINUTE)
        return True

    async def _load(self, secret: str) -> None:
        try:
            self._put(secret, await asyncio.to_thread(self._fetch, secret))
        finally:
            del self._loading[secret]

    def _fetch(self, secret: str) -> KeyRecord | None:
        return self.store.key_by_secret(secret) if len(secret) <= MAX_SECRET else None

    def _put(self, secret: str, record: KeyRecord | None) -> KeyRecord | None:
        if len(self._cache) >= self.max_entries:
            self._cache.clear()
        self._cache[secret] = (0.0 if record else self.clock() + self.ttl, record)
        return record

    async def refresh(self) -> None:
        """Re-read every known key in one batch (in a thread) and forget expired misses."""
        now = self.clock()
        for secret in [s for s, (until, r) in self._cache.items() if r is None and until <= now]:
            del self._cache[secret]
        known = [secret for secret, (_, record) in self._cache.items() if record is not None]
        if not known:
            return
        found = await asyncio.to_thread(self.store.keys_by_secret, known)
        for secret in known:
            if secret in self._cache:
                self._put(secret, found.get(secret))

    async def run(self) -> None:
        """`refresh` every `ttl` seconds until cancelled (a failed read keeps the keys known)."""
        while True:
            await asyncio.sleep(self.ttl)
            try:
                await self.refresh()
            except Exception:
                log.exception("could not refresh the key cache")

    def clear(self) -> None:
        self._cache.clear()


class UsageCounter:
    """Request counts per key, kept in memory and written to the store in batches."""

    def __init__(self, store: RelayStore) -> None:
        self.store = store
        self._counts: dict[str, tuple[int, float]] = {}

    def pending(self, key_id: str) -> int:
        """Calls of this key counted here and not yet written to the store."""
        entry = self._counts.get(key_id)
        return entry[0] if entry else 0

    def count(self, key_id: str) -> None:
        n, _ = self._counts.get(key_id, (0, 0.0))
        self._counts[key_id] = (n + 1, time.time())

    def flush(self) -> None:
        """Write the counts so far (blocking; `run` calls it in a worker thread)."""
        counts, self._counts = self._counts, {}
        try:
            self.store.add_usage(counts)
        except Exception:
            log.exception("could not flush usage counters")

    async def run(self, interval: float) -> None:
        """Flush every `interval` seconds until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(interval)
                await asyncio.to_thread(self.flush)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.flush)
