"""The relay application's parts, one `RelayState` per application (`app[STATE]`): what
`create_app` builds and the background tasks, the plug-ins and the local handlers are given."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry

from vttrelay.relay.accesslog import AccessLog
from vttrelay.relay.accounts.key_cache import KeyCache, UsageCounter
from vttrelay.relay.activity import ActivityLog
from vttrelay.relay.backends import Backends, Counters, WorldDirectory
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import Gate
from vttrelay.relay.events.streams import Streams
from vttrelay.relay.link.gateway import WorldGateway
from vttrelay.relay.metrics import RequestMetrics
from vttrelay.relay.sessions_api import SessionService
from vttrelay.relay.store import RelayStore


@dataclass
class RelayState:
    """The application's parts; one per application (`app[STATE]`). The request core's
    adapters (forward routes, SSE, /ws/api) get only its `gate`."""

    config: RelayConfig
    store: RelayStore
    backends: Backends
    registry: WorldDirectory  # backends.directory: where each world lives
    keys: KeyCache
    usage: UsageCounter
    counters: Counters  # backends.counters: the per-key rate budgets
    gateway: WorldGateway
    access: AccessLog
    gate: Gate  # the request core (core.py): what a keyed call may use
    activity: ActivityLog  # every API call's facts, written in batches (activity.py)
    streams: Streams = field(init=False)  # set by create_app: it needs the state
    metrics: RequestMetrics = field(default_factory=RequestMetrics)
    prometheus: CollectorRegistry = field(init=False)  # what /metrics exposes (metrics.py)
    started_at: float = field(default_factory=time.time)
    owns_store: bool = False
    sessions: SessionService | None = None  # the session routes' manager; None: turned off
    # the route-table path of each resource the app serves (what the activity log records)
    api_routes: dict[Any, str] = field(default_factory=dict)


STATE = web.AppKey("vttrelay_state", RelayState)
