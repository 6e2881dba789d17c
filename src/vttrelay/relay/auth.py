"""API keys on the hot path without database I/O: `KeyCache` and `UsageCounter`.

Key lookups go through `KeyCache` (hits and misses cached for a few seconds) and usage is counted
in memory and flushed in batches by `UsageCounter`. The rules that use a key (authentication,
scopes, rate, allowed worlds, forced user) live in `core.py`, shared by REST, SSE and /ws/api.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from vttrelay.relay.store import KeyRecord, RelayStore

log = logging.getLogger("vttrelay.relay")


class KeyCache:
    """Secret -> KeyRecord lookups cached for `ttl` seconds (negative results too)."""

    def __init__(self, store: RelayStore, ttl: float = 5.0, max_entries: int = 100_000) -> None:
        self.store = store
        self.ttl = ttl
        self.max_entries = max_entries
        self._cache: dict[str, tuple[float, KeyRecord | None]] = {}

    def lookup(self, secret: str) -> KeyRecord | None:
        now = time.monotonic()
        hit = self._cache.get(secret)
        if hit is not None and hit[0] > now:
            return hit[1]
        record = self.store.key_by_secret(secret) if len(secret) <= 256 else None
        if len(self._cache) >= self.max_entries:
            self._cache.clear()
        self._cache[secret] = (now + self.ttl, record)
        return record

    def clear(self) -> None:
        self._cache.clear()


class UsageCounter:
    """Request counts per key, kept in memory and written to the store in batches."""

    def __init__(self, store: RelayStore) -> None:
        self.store = store
        self._counts: dict[str, tuple[int, float]] = {}

    def count(self, key_id: str) -> None:
        n, _ = self._counts.get(key_id, (0, 0.0))
        self._counts[key_id] = (n + 1, time.time())

    def flush(self) -> None:
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
                self.flush()
        finally:
            with contextlib.suppress(Exception):
                self.flush()
