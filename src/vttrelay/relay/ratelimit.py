"""Per-key token buckets: N requests per minute with a burst of N (wire-protocol §7.5), and the
key a per-IP limit counts a client under.

Pure in-memory state: no I/O, a clock passed in for tests.
"""

from __future__ import annotations

import ipaddress
import time


def peer_key(address: str) -> str:
    """The key a per-IP limit counts `address` under: an IPv6 client's /64 (one host usually
    holds a whole /64, so counting single addresses would not limit it), an IPv4 address (also
    when IPv4-mapped) as is; anything that is not an address, unchanged."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class TokenBuckets:
    """One bucket per key. `allow(key, per_minute)` takes a token or says no."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)

    def _tokens(self, key: str, capacity: float, now: float, window: float) -> float:
        tokens, last = self._buckets.get(key, (capacity, now))
        return min(capacity, tokens + (now - last) * capacity / window)

    def allow(
        self, key: str, per_minute: int, now: float | None = None, window: float = 60.0
    ) -> bool:
        """Take one token from `key`'s bucket of `per_minute` tokens refilled every `window`
        seconds (60 by default); a limit of 0 or less means unlimited."""
        if per_minute <= 0:
            return True
        now = time.monotonic() if now is None else now
        tokens = self._tokens(key, float(per_minute), now, window)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        return True

    def has_token(
        self, key: str, per_minute: int, now: float | None = None, window: float = 60.0
    ) -> bool:
        """Whether `allow` would say yes now, without taking the token (for limits charged only
        for some outcomes of a request, which are known after it ran)."""
        if per_minute <= 0:
            return True
        now = time.monotonic() if now is None else now
        return self._tokens(key, float(per_minute), now, window) >= 1.0

    def forget(self, key: str) -> None:
        self._buckets.pop(key, None)
