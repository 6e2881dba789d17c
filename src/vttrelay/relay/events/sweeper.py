"""The event hub's sweeper: one task that, every `sweep_interval`, ends the subscriptions whose
client went away (aiohttp does not always tell) and, every `key_check_interval`, those whose key
no longer works. `EventHub` starts it while there are subscribers to watch (`sweep(hub)`); it
sleeps and reads the time on the hub's `later` and `clock` (a fake clock in unit tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Protocol

from vttrelay.relay.events.settings import StreamSettings
from vttrelay.relay.events.subscriber import Subscriber
from vttrelay.relay.timers import Later, wait

SWEEP_SLICE: Final = 1000  # subscribers the sweeper checks before it yields to the loop


class Swept(Protocol):
    """What the sweeper needs of the hub (`hub.EventHub`)."""

    settings: StreamSettings
    key_problem: Callable[[str], str | None] | None  # why a key no longer works (None: it does)
    later: Later  # what the sweeper sleeps on between passes
    clock: Callable[[], float]  # the monotonic time (seconds) of the key checks

    def subscribers(self, client_id: str | None = None) -> list[Subscriber]: ...

    def unsubscribe(self, sub: Subscriber, reason: str = "gone") -> bool: ...

    def refuse(self, sub: Subscriber, reason: str) -> None: ...


def is_watched(hub: Swept, sub: Subscriber) -> bool:
    """Whether the sweeper looks after this subscriber (its connection, its key)."""
    return sub.transport is not None or (bool(sub.secret) and hub.key_problem is not None)


async def sweep(hub: Swept) -> None:
    """End subscriptions whose HTTP client went away (aiohttp does not always tell), and,
    every `key_check_interval`, those whose key no longer works (SSE and /ws/api alike).

    Each key is checked once per pass, however many streams use it, and a pass yields to
    the loop every `SWEEP_SLICE` subscribers: with 10,000 streams a pass is a few ms of CPU,
    which must not hold up the requests meanwhile."""
    next_key_check = hub.clock() + hub.settings.key_check_interval
    while True:
        await wait(hub.later, hub.settings.sweep_interval)
        watched = [s for s in hub.subscribers() if is_watched(hub, s)]
        if not watched:
            return
        key_problem = hub.key_problem
        if hub.clock() < next_key_check:
            key_problem = None
        elif key_problem is not None:
            next_key_check = hub.clock() + hub.settings.key_check_interval
        problems: dict[str, str | None] = {}
        for index, sub in enumerate(watched):
            if index and not index % SWEEP_SLICE:
                await asyncio.sleep(0)
            if sub.dropped:  # gone meanwhile, or an earlier one's refusal ended its socket
                continue
            transport = sub.transport
            if transport is not None and transport.is_closing():
                hub.unsubscribe(sub, "gone")
                sub.mailbox.close()
            elif key_problem is not None and sub.secret:
                if sub.secret not in problems:
                    problems[sub.secret] = key_problem(sub.secret)
                if reason := problems[sub.secret]:
                    hub.refuse(sub, reason)
