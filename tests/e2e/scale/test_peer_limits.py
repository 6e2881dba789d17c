"""Per-IP limits scaled out (relay.peer_limits): each is one budget over all instances, in Redis,
so a client cannot multiply its tries by the number of instances behind the balancer; a lookup
of a code (or an API key) that exists costs nothing on any instance."""

from __future__ import annotations

import secrets
from typing import Any

from vttrelay.relay import peer_limits
from vttrelay.relay.accounts import pairing
from vttrelay.relay.accounts.key_cache import TOO_MANY_UNKNOWN_KEYS

TOO_MANY = {"error": "Too many requests, please try again later"}


APP = {"appName": "Shared budgets", "scopes": ["entity:read"]}


def _guess() -> str:
    return secrets.token_hex(4).upper()


async def test_pairing_attempts_share_one_budget_over_the_instances(cluster: Any) -> None:
    a, b, c = await cluster(3, pair_rate_limit=4)
    body = {"code": "ZZZZZZ", "worldId": "w"}
    statuses = [(await r.call("POST", "/auth/pair", json=body)).status for r in (a, b, c, a)]
    assert statuses == [404] * 4
    for relay in (a, b, c):  # spent: every instance refuses
        got = await relay.call("POST", "/auth/pair", json=body)
        assert (got.status, got.json()) == (
            429,
            {"error": "Too many pairing attempts, please try again later"},
        )


async def test_unknown_codes_share_one_budget_and_known_ones_cost_nothing(cluster: Any) -> None:
    a, b = await cluster(2, code_miss_limit=3)
    made = await a.call("POST", "/auth/key-request", json=APP)
    assert made.status == 201
    code = made.json()["code"]
    for relay in (a, b, a, b):  # polls of a code that exists: free on every instance
        assert (await relay.call("GET", f"/auth/key-request/{code}/status")).status == 200
    # three unknown codes, through three lookups on two instances...
    assert (await a.call("GET", f"/auth/pair-request/{_guess()}/status")).status == 404
    assert (await b.call("GET", f"/auth/key-request/{_guess()}/status")).status == 404
    assert (await a.call("GET", f"/approve/{_guess()}")).status == 404
    for relay in (a, b):  # ...spend the one budget: every lookup refused, the real code too
        for path in (f"/auth/key-request/{_guess()}/status", f"/auth/key-request/{code}/status"):
            got = await relay.call("GET", path)
            assert (got.status, got.json()) == (429, {"error": pairing.TOO_MANY})


async def test_a_peek_takes_no_token_on_redis(cluster: Any) -> None:
    (a,) = await cluster(1)
    counters = a.state.counters
    name = peer_limits.bucket(peer_limits.MISSES, "203.0.113.7")
    for _ in range(10):  # has_token only looks
        assert await counters.has_token(name, 2, window=900.0)
    assert [await counters.allow(name, 2, window=900.0) for _ in range(3)] == [True, True, False]
    assert not await counters.has_token(name, 2, window=900.0)
    other = peer_limits.bucket(peer_limits.MISSES, "203.0.113.8")  # another address: untouched
    assert await counters.has_token(other, 2, window=900.0)


async def test_the_probe_budget_is_shared_too(cluster: Any) -> None:
    a, b = await cluster(2, probe_rate_limit=2)
    statuses = [
        (await r.call("GET", "/api/clients/never-seen/active")).status for r in (a, b, a, b)
    ]
    assert statuses == [404, 404, 429, 429]
    got = await b.call("GET", "/api/clients/never-seen/active")
    assert got.json() == TOO_MANY


async def test_unknown_api_keys_share_one_budget_over_the_instances(cluster: Any) -> None:
    a, b = await cluster(2)  # the default budget: 60 unknown keys a minute per address
    valid = a.key()
    assert (await b.call("GET", "/clients", key=valid)).status == 200  # known keys cost nothing
    for n in range(60):  # sixty guesses, every other one on each instance: each read, 401
        relay = (a, b)[n % 2]
        assert (await relay.call("GET", "/clients", key=f"{n:064x}")).status == 401, n
    for relay in (a, b):  # the 61st is refused on either instance, without a store read
        got = await relay.call("GET", "/clients", key=f"{61:064x}")
        assert (got.status, got.json()) == (429, {"error": TOO_MANY_UNKNOWN_KEYS})
        assert relay.state.keys.missing(f"{61:064x}")
    assert (await b.call("GET", "/clients", key=valid)).status == 200  # known there: still works
