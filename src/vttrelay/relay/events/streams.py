"""The relay's event streams as one service: the hub, the SSE routes and `/ws/api`.

`Streams` is what the application holds: it builds the `EventHub` over the backends' event log
and counters and the request core's gate (the world directory; the keys of open streams), is the
world directory's listener (it hands worlds and their events to the hub), holds what the SSE
routes (`sse.serve_sse`) and `/ws/api` (`ws_api.ClientSocket`) share, and ends them all at
shutdown. It imports neither: they are given the `Streams` (the application binds them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from vttrelay.relay.backends.ports import Counters, EventLog
from vttrelay.relay.core import Gate
from vttrelay.relay.events.hub import EventHub
from vttrelay.relay.events.settings import settings_from

if TYPE_CHECKING:
    from vttrelay.relay.accounts.remote_logs import RemoteRequest


class Socket(Protocol):
    """An open `/ws/api` connection (`ws_api.ClientSocket`), as the shutdown sees it."""

    async def shutdown(self) -> None: ...


class Streams:
    """The relay's event streams: the six SSE routes and /ws/api, over one `EventHub`.

    Registered as a listener of the world registry (it forwards to the hub).
    """

    def __init__(self, gate: Gate, events: EventLog, counters: Counters) -> None:
        self.gate = gate  # the request core: streams are admitted like any keyed call
        self.settings = settings_from(gate.config)
        self.hub = EventHub(
            gate.worlds, self.settings, events, counters, key_problem=gate.key_problem
        )
        self.sockets: set[Socket] = set()  # open /ws/api connections
        # told each cross-world `remote-request` (the account services log them)
        self.remote_requests: Callable[[RemoteRequest], None] | None = None

    # WorldListener: the hub does the work
    def world_connected(self, world: Any) -> None:
        self.hub.world_connected(world)

    def world_disconnected(self, world: Any) -> None:
        self.hub.world_disconnected(world)

    def world_event(self, world: Any, frame: dict[str, Any]) -> None:
        self.hub.world_event(world, frame)

    async def close(self, *_: Any) -> None:
        """End every stream and client socket (relay shutdown)."""
        await asyncio.gather(*(s.shutdown() for s in list(self.sockets)), return_exceptions=True)
        await self.hub.close()
