"""What the account routes' handlers are given (`AccountDeps`): the relay's services they use,
built once by the application (`handlers.local_handlers`), instead of the whole `RelayState`."""

from __future__ import annotations

from dataclasses import dataclass

from vttrelay.relay.accounts.key_cache import KeyCache
from vttrelay.relay.backends.ports import Counters, WorldDirectory
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import Gate
from vttrelay.relay.store import RelayStore


@dataclass(frozen=True, slots=True)
class AccountDeps:
    """The services of the /auth, pairing and request handlers (relay/accounts/*_http.py,
    pairing.py, sessions.py): settings, the store, the per-address budgets, the key cache (a
    changed key is dropped from it), the live worlds (closed when their token goes) and the
    request core (a key request names the worlds a key may reach)."""

    config: RelayConfig
    store: RelayStore
    counters: Counters
    keys: KeyCache
    registry: WorldDirectory
    gate: Gate
