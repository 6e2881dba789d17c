"""Auto-starts of one relay, by client id (files-sheet-sessions §4.10 flow steps 2-3): one start
of a world at a time, joined by the requests that come while it runs (they share its answer);
a start that failed keeps further starts of that world with the same `attempt` (a browser
session's credential) off for `COOLDOWN` seconds, answering its error at once with
`(auto-start blocked for <n>s, retry after cooldown)`, so that a stream of requests to a world
whose login fails does not open a browser each, while linking another credential tries at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final

from vttrelay.sessions.model import Answer

COOLDOWN: Final = 120.0  # seconds after a failed start before the next may run
JOIN_LIMIT: Final = 300.0  # seconds a request waits for a start another one runs
MAX_FAILURES: Final = 10_000  # failures remembered (the oldest are forgotten first)


class Launches:
    """The auto-starts under way and the recent failures, by client id."""

    def __init__(
        self, cooldown: float = COOLDOWN, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.cooldown = cooldown
        self.clock = clock  # seconds, when failures happen and cool down (tests pass a fake)
        self._running: dict[str, asyncio.Task[Answer]] = {}
        # (client id, attempt) -> (when it failed, its answer)
        self._failed: dict[tuple[str, str], tuple[float, Answer]] = {}

    def running(self, client_id: str) -> bool:
        return client_id in self._running

    def blocked(self, client_id: str, attempt: str = "") -> Answer | None:
        """The answer for a start refused by the cooldown of an earlier failure, or None."""
        failed = self._failed.get((client_id, attempt))
        if failed is None:
            return None
        when, (status, body) = failed
        remaining = when + self.cooldown - self.clock()
        if remaining <= 0:
            del self._failed[client_id, attempt]
            return None
        text = (
            f"{body.get('error')} (auto-start blocked for {remaining:.0f}s, retry after cooldown)"
        )
        return status, {**body, "error": text}

    async def run(
        self,
        client_id: str,
        start: Callable[[], Awaitable[Answer]],
        wait: float = JOIN_LIMIT,
        attempt: str = "",
    ) -> Answer:
        """`start()`'s answer, waited for at most `wait` seconds: a start of `client_id` already
        under way is joined; one in its cooldown is refused at once; else `start()` runs in a
        task of its own (a caller that goes away does not stop it for the others), and a
        failure (any status but 200) starts the cooldown."""
        task = self._running.get(client_id)
        if task is None:
            refused = self.blocked(client_id, attempt)
            if refused is not None:
                return refused
            task = asyncio.ensure_future(self._start(client_id, attempt, start))
            task.add_done_callback(_retrieved)
            self._running[client_id] = task
        try:
            async with asyncio.timeout(wait):
                return await asyncio.shield(task)
        except TimeoutError:
            return 408, {"error": f"the world did not connect within {wait:g} s"}

    async def _start(
        self, client_id: str, attempt: str, start: Callable[[], Awaitable[Answer]]
    ) -> Answer:
        try:
            answer = await start()
        finally:
            self._running.pop(client_id, None)
        if answer[0] != 200:
            while len(self._failed) >= MAX_FAILURES:
                del self._failed[next(iter(self._failed))]
            self._failed[client_id, attempt] = (self.clock(), answer)
        return answer

    async def close(self) -> None:
        """Stop the starts under way (the relay is stopping)."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _retrieved(task: asyncio.Task[Answer]) -> None:
    if not task.cancelled():
        task.exception()  # a failure nobody waited for any more is not logged as unretrieved
