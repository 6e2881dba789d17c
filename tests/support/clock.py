"""A fake clock for unit tests of timers: it reads `now` (seconds) and runs the callbacks
scheduled on it with `call_later` when a test `advance`s it, so a test of a timeout or a grace
period moves time instead of sleeping through it. Its `sleep` stands in for `asyncio.sleep` in
code that polls: each sleep advances the clock (running what falls due) instead of waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class FakeTimer:
    """One scheduled callback (as `asyncio.TimerHandle`: `when()`, `cancel()`, `cancelled()`)."""

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self._when = when
        self._callback = callback
        self._args = args
        self._cancelled = False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self._cancelled = True

    def cancelled(self) -> bool:
        return self._cancelled

    def run(self) -> None:
        self._cancelled = True  # runs once
        self._callback(*self._args)


class FakeClock:
    """A settable clock in seconds, with the timers scheduled on it."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self._timers: list[FakeTimer] = []

    def __call__(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback, args)
        self._timers.append(timer)
        return timer

    def pending(self) -> int:
        """The timers still to run (not run, not cancelled)."""
        return sum(1 for t in self._timers if not t.cancelled())

    def advance(self, seconds: float) -> None:
        """Move time on by `seconds`, running each timer that falls due, in time order."""
        until = self.now + seconds
        while True:
            due = [t for t in self._timers if not t.cancelled() and t.when() <= until]
            if not due:
                break
            timer = min(due, key=lambda t: t.when())
            self.now = max(self.now, timer.when())
            timer.run()
        self._timers = [t for t in self._timers if not t.cancelled()]
        self.now = until

    async def sleep(self, seconds: float) -> None:
        """`asyncio.sleep` on this clock: advance it by `seconds`, then yield to the loop once."""
        self.advance(seconds)
        await asyncio.sleep(0)
