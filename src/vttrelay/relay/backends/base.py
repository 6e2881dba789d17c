"""The four interfaces a relay's shared state sits behind, and `Backends`, one of each.

Each interface is a `typing.Protocol`: the in-process implementations (`local.py`) and the
Redis/PostgreSQL ones satisfy them structurally. Calls on the forward hot path (`get`, `allow`)
are plain synchronous calls: the in-process implementation adds no await, lock or allocation, and
the shared ones answer them from local state they keep current in the background.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vttrelay.relay.events import Gap, LoggedEvent, StreamEvent
    from vttrelay.relay.store import KnownClient, TokenRecord
    from vttrelay.relay.worlds import Reply, WorldConnection, WorldListener


class WorldHandle(Protocol):
    """A live world as a call sees it, wherever its socket is: a `worlds.WorldConnection` on
    this instance, or a stand-in for a world held by another instance (`redis_directory`).

    `request` sends a frame and returns the reply with the same `requestId`; it raises
    `TimeoutError` after `timeout` seconds and `worlds.WorldGone` when the world (or the
    instance holding it) goes away first.
    """

    client_id: str
    account: str
    system_id: str
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

    def instances(self) -> list[str]: ...

    async def close_all(self, code: int, reason: str) -> None: ...

    async def close_token(self, token_id: str, code: int, reason: str) -> int: ...

    async def check_tokens(self, store: Store) -> int: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class EventLog(Protocol):
    """The bounded replay history of each (world, channel): an appended event gets the next id
    of its channel; `since` returns (cursor, gap or None, events after `last_seen`)."""

    def append(self, client_id: str, channel: str, event: StreamEvent) -> LoggedEvent: ...

    def since(
        self, client_id: str, channel: str, last_seen: int
    ) -> tuple[int, Gap | None, list[LoggedEvent]]: ...

    def last_id(self, client_id: str, channel: str) -> int: ...

    def forget(self, client_id: str) -> None: ...


class Counters(Protocol):
    """Shared counters: `allow(key, per_minute)` takes one call from a key's rate budget (a
    limit of 0 or less means unlimited)."""

    def allow(self, key: str, per_minute: int) -> bool: ...


class Store(Protocol):
    """Accounts, keys, tokens, pairing: the part of `store.RelayStore` the world socket uses
    (the rest of its public methods are the same on every store)."""

    def token_by_secret(self, secret: str) -> TokenRecord | None: ...

    def known_client(self, client_id: str) -> KnownClient | None: ...

    def remember_client(
        self, client_id: str, account: str, metadata: Mapping[str, Any], token_name: str = ""
    ) -> None: ...

    def live_token_ids(self, token_ids: Iterable[str]) -> set[str]: ...

    def close(self) -> None: ...


@dataclass
class Backends:
    """One implementation of each interface; `create_app(config, store, backends=...)`."""

    directory: WorldDirectory
    events: EventLog
    counters: Counters
