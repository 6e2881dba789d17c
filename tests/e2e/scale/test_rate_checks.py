"""A key's shared rate budget (backends.redis.counters) when many calls check it at once: the
checks of one loop iteration go to Redis in one pipeline, each still takes its own token, so
exactly the budget passes over the instances; and a Redis that lost its scripts (a restart)
loads the bucket script again without refusing a call."""

from __future__ import annotations

import asyncio
from typing import Any

import redis

from vttrelay.relay.metrics import redis_round_trips

CALLS = 24
BUDGET = 10


async def statuses(relays: list[Any], key: str, count: int) -> list[int]:
    async def call(i: int) -> int:
        return (await relays[i % len(relays)].call("GET", "/clients", key=key)).status

    return list(await asyncio.gather(*(call(i) for i in range(count))))


async def test_checks_at_once_take_exactly_the_budget_over_the_instances(cluster: Any) -> None:
    a, b = await cluster(2)
    key = a.key(rate_per_minute=BUDGET)
    got = await statuses([a, b], key, CALLS)
    assert sorted(got) == [200] * BUDGET + [429] * (CALLS - BUDGET)


async def test_the_checks_of_one_iteration_take_one_round_trip(cluster: Any) -> None:
    (a,) = await cluster(1)
    trips = redis_round_trips(a.config.instance_id)
    assert await a.state.counters.allow("warm-up", 5)  # loads the script
    before = trips.count
    checks = [a.state.counters.allow("some-key", 5) for _ in range(8)]
    assert await asyncio.gather(*checks) == [True] * 5 + [False] * 3  # in the order asked
    assert trips.count - before <= 2  # one pipeline (and perhaps one heartbeat meanwhile)


async def test_a_redis_that_lost_its_scripts_still_answers_checks(
    cluster: Any, redis_server: Any
) -> None:
    (a,) = await cluster(1)
    key = a.key(rate_per_minute=3)
    assert await statuses([a], key, 1) == [200]
    with redis.Redis.from_url(redis_server.url) as client:
        client.script_flush()
    assert sorted(await statuses([a], key, 3)) == [200, 200, 429]
