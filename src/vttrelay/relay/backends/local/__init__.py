"""The in-process implementations of the backend interfaces: one relay process, nothing shared.

- `LocalDirectory`: the live worlds of this process by client id and by account (the world
  registry, moved here from worlds.py), with the duplicate-id rule.
- `LocalEventLog`: one bounded `events.model.EventLog` per (world, channel).
- `LocalCounters`: the per-key token buckets (`ratelimit.TokenBuckets`) and the subscriber
  counts of this process.

This is the default and the fast path: `get` is one dict lookup, `allow` one bucket step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from vttrelay.protocol import ACCOUNT_DISABLED, Close
from vttrelay.relay.backends.ports import Backends, CountListener, EventSink, Store
from vttrelay.relay.events.model import EventLog, LoggedEvent, Resume, StreamEvent
from vttrelay.relay.ratelimit import TokenBuckets

if TYPE_CHECKING:
    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.link.connection import WorldConnection, WorldListener

log = logging.getLogger("vttrelay.relay")


class Indexed(Protocol):
    client_id: str
    account: str


W = TypeVar("W", bound=Indexed)


class WorldIndex(Generic[W]):
    """Worlds by client id, and by account (so `for_account` does not scan every world)."""

    __slots__ = ("by_id", "by_account")

    def __init__(self) -> None:
        self.by_id: dict[str, W] = {}
        self.by_account: dict[str, dict[str, W]] = {}

    def put(self, world: W) -> W | None:
        """Index `world` under its id; returns the world it replaces, if any."""
        previous = self.pop(world.client_id)
        self.by_id[world.client_id] = world
        self.by_account.setdefault(world.account, {})[world.client_id] = world
        return previous

    def pop(self, client_id: str) -> W | None:
        world = self.by_id.pop(client_id, None)
        if world is not None:
            of_account = self.by_account.get(world.account)
            if of_account is not None:
                of_account.pop(client_id, None)
                if not of_account:
                    del self.by_account[world.account]
        return world

    def of_account(self, account: str) -> list[W]:
        found = self.by_account.get(account)
        return list(found.values()) if found else []


class LocalDirectory:
    """The live worlds of this relay, by client id and by account; its listeners."""

    def __init__(self, instance_id: str = "") -> None:
        self.instance_id = instance_id
        self.index: WorldIndex[WorldConnection] = WorldIndex()  # also read by RedisDirectory
        self._by_id = self.index.by_id  # read directly by `get`: the hot path
        self._listeners: list[WorldListener] = []

    def add_listener(self, listener: WorldListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: WorldListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def get(self, client_id: str) -> WorldConnection | None:
        return self._by_id.get(client_id)

    def for_account(self, account: str) -> list[Any]:
        return self.index.of_account(account)

    def __iter__(self) -> Iterator[WorldConnection]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def instances(self) -> list[str]:
        return [self.instance_id]

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def holder_conflict(self, world: WorldConnection) -> bool:
        """Does a live socket of another host or account hold `world`'s id here?"""
        existing = self._by_id.get(world.client_id)
        return (
            existing is not None
            and existing is not world
            and not existing.closed
            and (existing.peer_host != world.peer_host or existing.account != world.account)
        )

    def take(self, world: WorldConnection) -> None:
        """Register `world`, closing a socket it replaces (1000, no `world_disconnected`: the
        new connection's `world_connected` follows, so streams of the id live on)."""
        existing = self.index.put(world)
        if existing is not None and existing is not world:
            log.info("world %s replaced by a reconnect from %s", world.client_id, world.peer_host)
            asyncio.ensure_future(existing.close(Close.NORMAL, "Replaced by reconnect"))

    async def claim(self, world: WorldConnection) -> bool:
        """The duplicate-id rule and registration, with no await in between."""
        if self.holder_conflict(world):
            return False
        self.take(world)
        return True

    def release(self, world: WorldConnection) -> bool:
        """Remove `world` if it is still the registered one for its id."""
        if self._by_id.get(world.client_id) is world:
            self.index.pop(world.client_id)
            return True
        return False

    def updated(self, world: WorldConnection) -> None:
        """Nothing to tell: the registered object is the world itself."""

    def notify(self, method: str, *args: Any) -> None:
        for listener in list(self._listeners):
            try:
                getattr(listener, method)(*args)
            except Exception:
                log.exception("world listener %s failed", method)

    async def close_all(
        self, code: int = Close.GOING_AWAY, reason: str = "Server shutting down"
    ) -> None:
        """Close every world (relay shutdown: 1001, so modules reconnect)."""
        await asyncio.gather(*(w.close(code, reason) for w in self), return_exceptions=True)

    async def check_tokens(self, store: Store) -> int:
        """Close worlds whose token was revoked (e.g. from another process): 4002; and those of
        a disabled account: 4005 `Account disabled` (the module keeps its token and tries again,
        so the world comes back once the account is enabled)."""
        worlds = [w for w in self if not w.closed]
        live = await asyncio.to_thread(store.live_token_ids, {w.token_id for w in worlds})
        revoked = [w for w in worlds if w.token_id not in live]
        suspended = (
            await asyncio.to_thread(store.suspended_token_ids, {w.token_id for w in revoked})
            if revoked
            else set()
        )
        for world in revoked:
            if world.token_id in suspended:
                log.info("world %s: its account is disabled", world.client_id)
                await world.close(Close.TRY_AGAIN, ACCOUNT_DISABLED)
            else:
                log.info("world %s: connection token revoked", world.client_id)
                await world.close(Close.AUTH_PROTOCOL, "Connection token revoked")
        return len(revoked)

    async def close_token(self, token_id: str, code: int, reason: str) -> int:
        """Close every world of this instance authenticated with this token; returns how many."""
        worlds = [w for w in self if w.token_id == token_id]
        for world in worlds:
            await world.close(code, reason)
        return len(worlds)


class LocalEventLog:
    """One bounded `events.model.EventLog` per (world, channel), created on first use; an appended
    event goes straight to the sink (the hub's fan-out)."""

    def __init__(self, capacity: int, max_bytes: int | None) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._logs: dict[tuple[str, str], EventLog] = {}
        self._sink: EventSink = _no_sink

    def bind(self, sink: EventSink) -> None:
        self._sink = sink

    def log(self, client_id: str, channel: str) -> EventLog:
        """The replay log of a world's channel (created empty on first use)."""
        key = (client_id, channel)
        found = self._logs.get(key)
        if found is None:
            found = self._logs[key] = EventLog(self.capacity, self.max_bytes)
        return found

    def append(self, client_id: str, event: StreamEvent) -> None:
        self._sink(client_id, self.log(client_id, event.channel).append(event))

    async def resume(self, client_id: str, channel: str, last_seen: int | None) -> Resume:
        """No await inside: registration and snapshot happen together in-process."""
        log = self.log(client_id, channel)
        if last_seen is None:
            return Resume(log.last_seq, None, [], log.last_seq)
        cursor, gap, replay = log.since(last_seen)
        return Resume(cursor, gap, replay, log.last_seq)

    def unlisten(self, client_id: str, channel: str) -> None:
        return None

    def last_id(self, client_id: str, channel: str) -> int:
        found = self._logs.get((client_id, channel))
        return found.last_seq if found is not None else 0

    def forget(self, client_id: str) -> None:
        """Drop every channel's history of a world."""
        for key in [k for k in self._logs if k[0] == client_id]:
            del self._logs[key]

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


def _no_sink(client_id: str, logged: LoggedEvent) -> None:
    return None


class LocalCounters(TokenBuckets):
    """The counters of one process: a token bucket per key (`allow` answers a bool at once) and
    the subscriber counts this process reports, which are the totals."""

    def __init__(self) -> None:
        super().__init__()
        self._shares: dict[tuple[str, str], tuple[int, bool]] = {}
        self._listener: CountListener | None = None

    def bind(self, listener: CountListener) -> None:
        self._listener = listener

    def report(self, client_id: str, channel: str, count: int, lingering: bool) -> None:
        key = (client_id, channel)
        if count or lingering:
            self._shares[key] = (count, lingering)
        else:
            self._shares.pop(key, None)
        if self._listener is not None:  # the listener skips worlds it does not hold
            self._listener.total_changed(client_id, channel, count, lingering)

    def watch(self, client_id: str) -> None:
        if self._listener is not None:
            totals = {ch: share for (cid, ch), share in self._shares.items() if cid == client_id}
            self._listener.totals_known(client_id, totals)

    def unwatch(self, client_id: str) -> None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


def local_backends(config: RelayConfig) -> Backends:
    """The in-process set: the default of `create_app`."""
    from vttrelay.relay.events.settings import settings_from

    settings = settings_from(config)
    return Backends(
        directory=LocalDirectory(config.instance_id),
        events=LocalEventLog(settings.event_buffer_size, settings.event_buffer_bytes),
        counters=LocalCounters(),
    )
