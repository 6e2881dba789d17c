"""Per-IP limits, counted in the relay's `Counters` so that every instance draws from one budget.

Seven limits count a client by its address (`ratelimit.peer_key`: an IPv4 address, an IPv6
/64): `POST /auth/pair` (PAIR), `POST /api/self-unpair` (UNPAIR), the `/api/clients/{id}/active`
probe (PROBE), pair and key requests (REQUESTS), lookups of unknown request codes (MISSES),
dashboard sign-ins (SIGNIN) and unknown API keys looked up (UNKNOWN_KEYS, `KeyCache.load`). In one
process they are token buckets in memory; scaled out (`--redis`) they live in Redis beside the
API keys' budgets, so ten instances behind a balancer do not give a client ten budgets to guess
codes with. Unknown codes are also counted per dashboard account (`take_named` with
`account_bucket`: a signed-in owner deciding requests by code) and over all callers at once
(`ALL_MISSES`), so many addresses do not add up to many budgets (issue 20 item 12).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Final

from aiohttp import web

from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.ratelimit import peer_key

PAIR: Final = "pair"
UNPAIR: Final = "unpair"
PROBE: Final = "probe"
REQUESTS: Final = "requests"
MISSES: Final = "misses"
SIGNIN: Final = "signin"
UNKNOWN_KEYS: Final = "unknown-keys"


ALL_MISSES: Final = "all:misses"  # the unknown-code budget of every caller together


def account_bucket(limit: str, account: str | None) -> str:
    """The budget's name in `Counters` for a dashboard account (None: the operator)."""
    return f"account:{limit}:{'*' if account is None else account}"


def bucket(limit: str, address: str) -> str:
    """The budget's name in `Counters` for a client at `address` under `limit`."""
    return f"ip:{limit}:{peer_key(address)}"


async def take(
    counters: Counters, limit: str, request: web.Request, per_window: int, window: float
) -> bool:
    """Take one token of the caller's budget under `limit` (False: spent)."""
    return await _decided(
        counters.allow(bucket(limit, request.remote or ""), per_window, window=window)
    )


async def has_token(
    counters: Counters, limit: str, request: web.Request, per_window: int, window: float
) -> bool:
    """Whether the caller has a token left under `limit`, taking none."""
    return await _decided(
        counters.has_token(bucket(limit, request.remote or ""), per_window, window=window)
    )


async def take_named(counters: Counters, name: str, per_window: int, window: float) -> bool:
    """Take one token of the budget `name` (`ALL_MISSES`, an `account_bucket`); False: spent."""
    return await _decided(counters.allow(name, per_window, window=window))


async def has_token_named(counters: Counters, name: str, per_window: int, window: float) -> bool:
    """Whether the budget `name` has a token left, taking none."""
    return await _decided(counters.has_token(name, per_window, window=window))


async def _decided(answer: bool | Awaitable[bool]) -> bool:
    """`Counters` answer at once in one process, after a round trip when shared."""
    return answer if isinstance(answer, bool) else await answer
