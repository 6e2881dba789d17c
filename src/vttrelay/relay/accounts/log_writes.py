"""Writes of an account log made off the event loop: each entry is written in a worker thread,
at most `limit` wait at once (past that an entry is dropped and counted), so the caller (a
world's frame loop, a request) never waits for the store. Used by the cross-world request log
and the module event log."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger("vttrelay.relay")

Entry = TypeVar("Entry")


class LogWrites(Generic[Entry]):
    """Runs `write(entry, at)` in worker threads; `dropped` counts the entries refused."""

    def __init__(self, write: Callable[[Entry, float], object], what: str, limit: int) -> None:
        self.write = write
        self.what = what  # named in the log line of a failed write
        self.limit = limit
        self.dropped = 0
        self._writing: set[asyncio.Task[None]] = set()

    def submit(self, entry: Entry, at: float) -> None:
        """Write `entry` made at `at` (called on the event loop; returns at once)."""
        if len(self._writing) >= self.limit:
            self.dropped += 1
            return
        task = asyncio.ensure_future(self._write(entry, at))
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def _write(self, entry: Entry, at: float) -> None:
        try:
            await asyncio.to_thread(self.write, entry, at)
        except Exception:
            log.exception("could not log %s", self.what)

    async def close(self) -> None:
        """Finish the writes in flight (the relay is stopping)."""
        for task in list(self._writing):
            with contextlib.suppress(Exception):
                await task
