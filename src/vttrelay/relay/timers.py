"""How the relay's one-shot timers are scheduled (the event hub's slow-consumer grace,
subscription linger and history retention; the access log's flush): a `Later` schedules a
callback after a delay and returns a `Timer` it can cancel; `wait` sleeps on one (the event hub's
sweeper between passes). They run on `loop_later` (the running loop's `call_later`); unit tests
pass a fake clock's `call_later` and move its time instead of sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol


class Timer(Protocol):
    """A scheduled callback (`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None: ...


class Later(Protocol):
    """Schedule `callback(*args)` after `delay` seconds."""

    def __call__(self, delay: float, callback: Callable[..., object], *args: Any) -> Timer: ...


def loop_later(delay: float, callback: Callable[..., object], *args: Any) -> Timer:
    """On the running event loop (`loop.call_later`)."""
    return asyncio.get_running_loop().call_later(delay, callback, *args)


async def wait(later: Later, delay: float) -> None:
    """Sleep `delay` seconds on `later`'s clock (`asyncio.sleep` on `loop_later`); cancelled, the
    sleeper's timer is cancelled too."""
    woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    timer = later(delay, _wake, woken)
    try:
        await woken
    finally:
        timer.cancel()


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
