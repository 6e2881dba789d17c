"""The one way the shared backends open a Redis client: `open_redis(url, instance_id)`, and
stop their background tasks: `stop_tasks(tasks)`.

The client counts its round trips to Redis for `/metrics` (`vttrelay_redis_round_trips_total`
of that instance): each command is one, and so is each pipeline (counted when it is made; the
backends execute every pipeline they make once). Messages a pub/sub subscription receives are
not round trips and are not counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.connection import BlockingConnectionPool

from vttrelay.relay.metrics import RoundTrips, redis_round_trips


class CountingRedis(Redis):
    """A redis-py asyncio client that adds its round trips to `round_trips`."""

    round_trips: RoundTrips = RoundTrips()

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.round_trips.count += 1
        return await super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        self.round_trips.count += 1
        return super().pipeline(transaction, shard_hint)


# Connections one client opens at most; more commands at once wait for one to be free (redis-py's
# default pool raises MaxConnectionsError past 100, which failed calls under a burst).
MAX_CONNECTIONS = 64


def open_redis(url: str, instance_id: str) -> Redis:
    """A client of the Redis at `url` whose round trips count for the instance `instance_id`."""
    pool = BlockingConnectionPool.from_url(url, max_connections=MAX_CONNECTIONS, timeout=None)
    client = CountingRedis.from_pool(pool)  # owns the pool: aclose() closes it
    assert isinstance(client, CountingRedis)
    client.round_trips = redis_round_trips(instance_id)
    return client


# How long `stop_tasks` waits for a cancelled task before it cancels it again.
RECANCEL_AFTER = 0.5


async def stop_tasks(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel a backend's background tasks and wait for each to end, whatever it raised.

    A task still running after `RECANCEL_AFTER` seconds is cancelled again: a cancellation can be
    lost on the way (seen in CI: a directory check loop cancelled inside a Redis call carried on
    with its next sleep, its `except (RedisError, OSError)` having caught what the call turned
    the cancellation into), and stopping must not wait for ever."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        while not task.done():
            await asyncio.wait({task}, timeout=RECANCEL_AFTER)
            task.cancel()
        if not task.cancelled():
            task.exception()  # retrieved: a task that failed is not reported again at exit
