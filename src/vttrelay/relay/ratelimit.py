"""Per-key token buckets: N requests per minute with a burst of N (wire-protocol §7.5).

Pure in-memory state: no I/O, a clock passed in for tests.
"""

from __future__ import annotations

import time


class TokenBuckets:
    """One bucket per key. `allow(key, per_minute)` takes a token or says no."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)

    def allow(
        self, key: str, per_minute: int, now: float | None = None, window: float = 60.0
    ) -> bool:
        """Take one token from `key`'s bucket of `per_minute` tokens refilled every `window`
        seconds (60 by default); a limit of 0 or less means unlimited."""
        if per_minute <= 0:
            return True
        now = time.monotonic() if now is None else now
        capacity = float(per_minute)
        tokens, last = self._buckets.get(key, (capacity, now))
        tokens = min(capacity, tokens + (now - last) * capacity / window)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        return True

    def forget(self, key: str) -> None:
        self._buckets.pop(key, None)
