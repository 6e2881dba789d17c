"""The four interfaces a relay's shared state sits behind, and `Backends`, one of each.

Each interface is a `typing.Protocol` that names no implementation: the implementations
(`backends.local`, `backends.redis`) satisfy them structurally. Calls on the forward hot path
(`get`, `allow`) are plain synchronous calls in one process: no await, lock or allocation. A
shared directory answers `get` from local state it keeps current in the background; a shared
rate budget needs a round trip, so its `allow` answers an awaitable (awaited only then).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vttrelay.relay.events.model import LoggedEvent, Resume, StreamEvent
    from vttrelay.relay.link.connection import WorldConnection, WorldListener
    from vttrelay.relay.link.pending import Reply
    from vttrelay.relay.store import KnownClient, TokenRecord


class WorldHandle(Protocol):
    """A live world as a call sees it, wherever its socket is: its connection on this instance,
    or a stand-in for a world another instance holds.

    `request` sends a frame and returns the reply with the same `requestId`; it raises
    `TimeoutError` after `timeout` seconds and `link.pending.WorldGone` when the world (or the
    instance holding it) goes away first.
    """

    client_id: str
    account: str
    system_id: str
    token_id: str  # the connection token it authenticated with
    token_name: str
    metadata: dict[str, Any]
    users: list[dict[str, Any]]
    closed: bool
    instance_id: str | None  # the holding instance; None: this one

    async def request(self, frame: dict[str, Any], timeout: float) -> Reply: ...

    async def send(self, frame: dict[str, Any]) -> None: ...


class WorldDirectory(Protocol):
    """Where each world lives, cluster-wide, and the worlds connected to this instance.

    - `get(client_id)` / `for_account(account)`: live worlds wherever they are (sync: the hot
      path). Iterating, `len` and the token operations cover only this instance's sockets.
    - `claim(world)`: make this instance the holder of `world.client_id` (cluster-wide duplicate
      rule: the same host and account replace the holder, wherever it is, and the replaced
      socket is closed with 1000; any other holder wins and `claim` returns False, which the
      gateway answers with 4004 before `auth-success`). No await before the decision in the
      in-process implementation.
    - `release(world)`: give the id up if `world` still holds it (True: tell the listeners).
    - `updated(world)`: a local world's users or metadata changed (other instances see them).
    - `instances()`: the live instances (by heartbeat) this instance knows of, itself included.
    - `start()` / `stop()`: background work (heartbeat, failure detection), run by the app.
    """

    instance_id: str

    def get(self, client_id: str) -> WorldHandle | None: ...

    def for_account(self, account: str) -> list[WorldHandle]: ...

    def __iter__(self) -> Iterator[WorldConnection]: ...

    def __len__(self) -> int: ...

    def add_listener(self, listener: WorldListener) -> None: ...

    def remove_listener(self, listener: WorldListener) -> None: ...

    def notify(self, method: str, *args: Any) -> None: ...

    async def claim(self, world: WorldConnection) -> bool: ...

    def release(self, world: WorldConnection) -> bool: ...

    def updated(self, world: WorldConnection) -> None: ...

    def instances(self) -> list[str]: ...

    async def close_all(self, code: int, reason: str) -> None: ...

    async def close_token(self, token_id: str, code: int, reason: str) -> int: ...

    async def check_tokens(self, store: Store) -> int: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


# Called with a world's id and each of its events, in order, with the event's id set.
EventSink = Callable[[str, "LoggedEvent"], None]


class EventLog(Protocol):
    """The bounded replay history of each (world, channel), and how events reach the instances
    whose clients subscribed.

    - `bind(sink)`: where this instance's events go (the hub's fan-out): `sink(client_id,
      logged)` for each event of a world this instance appended or `listen`s to, in order, once.
    - `append(client_id, event)`: log an event of a world held here; it gets the next id of its
      channel and reaches the sink (at once in-process; after one round trip when shared) and
      every instance listening to it.
    - `resume(client_id, channel, last_seen)`: start listening to the channel, then snapshot its
      log: where a subscriber resumes (`Resume`: cursor, gap, events after `last_seen`; with
      `last_seen` None, from now) and the newest id the snapshot covers.
    - `unlisten(client_id, channel)`: this instance has no subscriber of it any more.
    - `last_id(client_id, channel)`: the newest id this instance knows of (0: none).
    - `forget(client_id)`: drop what this instance keeps of a world gone for good.
    - `start()` / `stop()`: background work (the shared log's reader and writer).
    """

    def bind(self, sink: EventSink) -> None: ...

    def append(self, client_id: str, event: StreamEvent) -> None: ...

    async def resume(self, client_id: str, channel: str, last_seen: int | None) -> Resume: ...

    def unlisten(self, client_id: str, channel: str) -> None: ...

    def last_id(self, client_id: str, channel: str) -> int: ...

    def forget(self, client_id: str) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class CountListener(Protocol):
    """What receives a world's subscriber totals (the hub, for the worlds it holds)."""

    def totals_known(self, client_id: str, totals: Mapping[str, tuple[int, bool]]) -> None: ...

    def total_changed(self, client_id: str, channel: str, count: int, lingering: bool) -> None: ...


class Counters(Protocol):
    """Counters shared by every instance: rate budgets and subscriber counts.

    - `allow(key, per_minute, window=60.0)`: take one call from a key's budget of `per_minute`
      calls per `window` seconds (a limit of 0 or less means unlimited). In-process the answer
      is a bool at once (the hot path: no await, no allocation); a shared budget needs a round
      trip, so it answers an awaitable of the bool (`core.Gate.admit` awaits only then).
      `has_token` says whether `allow` would say yes, without taking. API keys' budgets are
      named by key id, the per-IP limits' by `peer_limits.bucket`.
    - Subscriber counts: `report(client_id, channel, count, lingering)` gives this instance's
      share of a world's channel (its subscribers, and whether the channel lingers here). The
      instance holding the world `watch`es it: the listener's `totals_known` gets the totals
      over the live instances (count summed, lingering anywhere) once, then `total_changed` on
      each change, including when an instance dies and its share disappears; `unwatch` stops.
    - `start()` / `stop()`: background work (the shared counts' reader).
    """

    def allow(
        self, key: str, per_minute: int, *, window: float = 60.0
    ) -> bool | Awaitable[bool]: ...

    def has_token(
        self, key: str, per_minute: int, *, window: float = 60.0
    ) -> bool | Awaitable[bool]: ...

    def bind(self, listener: CountListener) -> None: ...

    def report(self, client_id: str, channel: str, count: int, lingering: bool) -> None: ...

    def watch(self, client_id: str) -> None: ...

    def unwatch(self, client_id: str) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Store(Protocol):
    """Accounts, keys, tokens, pairing: the part of the relay's store the world socket uses."""

    def token_by_secret(self, secret: str) -> TokenRecord | None: ...

    def known_client(self, client_id: str) -> KnownClient | None: ...

    def remember_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str = ""
    ) -> None: ...

    def live_token_ids(self, token_ids: Iterable[str]) -> set[str]: ...

    def suspended_token_ids(self, token_ids: Iterable[str]) -> set[str]: ...

    def close(self) -> None: ...


class BackendUnavailable(RuntimeError):
    """A shared backend (Redis, PostgreSQL) cannot be reached at start-up; the message says
    which and why (`vttrelay serve` prints it and exits with 1)."""


@dataclass
class Backends:
    """One implementation of each interface; `create_app(config, store, backends=...)`."""

    directory: WorldDirectory
    events: EventLog
    counters: Counters
