"""The shared backends' Redis client (backends.redis.client) counts each instance's round trips
to Redis for /metrics: a call to a world on another instance that has no direct link takes at
least one (its publish) on the instance the client called, and the counters of two instances
are apart."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from tests.support.e2e import eventually
from tests.support.scale import skill_checks

from vttrelay.relay.metrics import redis_round_trips

CALLS = 40


def scraped_round_trips(text: str) -> float:
    for family in text_string_to_metric_families(text):
        if family.name == "vttrelay_redis_round_trips":
            return float(family.samples[0].value)
    raise AssertionError("no vttrelay_redis_round_trips in /metrics")


async def test_round_trips_are_counted_per_instance(cluster: Any) -> None:
    a, b = await cluster(2)
    a.state.registry.link_address = ""  # its entries name no link: calls to it are published
    await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(rate_per_minute=0)
    on_b = redis_round_trips(b.config.instance_id)
    assert on_b is not redis_round_trips(a.config.instance_id)
    before = on_b.count

    assert await skill_checks(b, key, CALLS) == [200] * CALLS
    assert on_b.count - before >= CALLS  # every call was published to the world's instance
    scraped = scraped_round_trips((await b.call("GET", "/metrics")).body.decode())
    assert scraped >= before + CALLS
