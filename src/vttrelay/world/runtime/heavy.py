"""Where the world's heavy work runs (drawing a scene picture; sheets and long searches later):
a small pool of worker threads of lower CPU priority, off the world's event loop.

Off the loop, the world answers its other requests while a picture is drawn; Pillow and SQLite
release the GIL for most of their work, so the relay's thread and the world's loop keep running.
The pool is small (`WORKERS`): heavy requests queue for it instead of taking every core, and its
threads run at a lower priority (`NICENESS`, Linux: niceness is per thread) so that on a busy
machine the relay's answers and the world's light requests come first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

T = TypeVar("T")

WORKERS: Final = 1
NICENESS: Final = 10


def _lower_priority(niceness: int) -> None:
    """Make the calling thread nicer (on Linux `setpriority` on a thread id sets that thread's
    niceness only); where that is not so or not allowed, leave it."""
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)


class HeavyWork:
    """The pool; started on first use, `close()` waits for its threads."""

    def __init__(self, workers: int = WORKERS, niceness: int = NICENESS) -> None:
        self._workers = workers
        self._niceness = niceness
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)` in a worker thread; its result (or its exception)."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self._workers,
                thread_name_prefix="vttrelay-world-heavy",
                initializer=_lower_priority,
                initargs=(self._niceness,),
            )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
