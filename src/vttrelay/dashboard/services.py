"""What the dashboard uses of the relay (`RelayServices`): the services `mount.install` is given
by `server.assemble` (the relay's application state), named here so that the dashboard depends
on these and not on the relay's whole state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from vttrelay.relay.accounts.key_cache import KeyCache, UsageCounter
    from vttrelay.relay.activity import ActivityLog
    from vttrelay.relay.backends.ports import Counters, WorldDirectory
    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.core import Gate
    from vttrelay.relay.events.streams import Streams
    from vttrelay.relay.store import RelayStore


class RelayServices(Protocol):
    """The relay's services the dashboard's pages use."""

    config: RelayConfig
    store: RelayStore
    registry: WorldDirectory  # the live worlds, on any instance
    counters: Counters  # the per-address and per-account budgets
    keys: KeyCache  # a changed key is dropped from it
    usage: UsageCounter  # flushed before usage is shown
    gate: Gate  # the request core: a session's calls
    streams: Streams  # the event hub a session's stream reads
    activity: ActivityLog  # the API calls recorded
