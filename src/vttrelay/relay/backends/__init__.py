"""The relay's state behind four small interfaces (DESIGN §8), and the set `create_app` receives.

A relay process keeps four kinds of state that must be shared once several processes serve one
API. Each is a `typing.Protocol` here, with an in-process implementation in `local.py` (the
default: one process, today's code) and a Redis/PostgreSQL one beside it:

- `WorldDirectory` (`local.LocalDirectory`, `redis.directory.RedisDirectory`): which instance
  holds a world id, the worlds a call may reach, and how a request reaches its world.
- `EventLog` (`local.LocalEventLog`, `redis.events.RedisEventLog`): the replay history of each
  (world, channel), and how events reach the instances whose clients subscribed.
- `Counters` (`local.LocalCounters`, `redis.counters.RedisCounters`): rate-limit budgets and
  subscriber counts.
- `Store` (`store.RelayStore` on SQLite): accounts, keys, tokens, pairing.

Handlers see only these interfaces (through `RelayState`), never which implementation runs.
`Backends` bundles one of each; `local_backends` makes the in-process set and `backends_for`
the set a config asks for (`RelayConfig.redis_url`: the shared ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vttrelay.relay.backends.local import local_backends
from vttrelay.relay.backends.ports import (
    Backends,
    BackendUnavailable,
    Counters,
    EventLog,
    Store,
    WorldDirectory,
    WorldHandle,
)

if TYPE_CHECKING:
    from vttrelay.relay.config import RelayConfig


def backends_for(config: RelayConfig) -> Backends:
    """In-process backends, or with `config.redis_url` the directory, event log and counters
    over Redis."""
    if not config.redis_url:
        return local_backends(config)
    from vttrelay.relay.backends.redis.counters import RedisCounters
    from vttrelay.relay.backends.redis.directory import redis_directory
    from vttrelay.relay.backends.redis.events import RedisEventLog
    from vttrelay.relay.events.settings import settings_from

    settings = settings_from(config)
    directory = redis_directory(config)
    return Backends(
        directory=directory,
        events=RedisEventLog(
            config.redis_url,
            config.instance_id,
            settings.event_buffer_size,
            settings.event_buffer_bytes,
            settings.history_retention,
        ),
        counters=RedisCounters(
            config.redis_url,
            config.instance_id,
            directory.instances,
            check_interval=config.heartbeat_check_interval,
        ),
    )


__all__ = [
    "BackendUnavailable",
    "Backends",
    "Counters",
    "EventLog",
    "Store",
    "WorldDirectory",
    "WorldHandle",
    "backends_for",
    "local_backends",
]
