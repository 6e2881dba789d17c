"""Where the world's heavy work runs (drawing a scene picture or a sheet): a worker process of
lower CPU priority, off the world's loop and out of the interpreter the relay runs in.

Why a process and not a thread (bench/RESULTS.md, "Issue 21: heavy work in a process"): Pillow
holds the interpreter's lock in spans of up to about 5 ms while it draws a large picture
(allocating and filling it, the end of the PNG encoder, freeing it). On a thread of the relay's
process every such span delays the relay's loop too: `/api/health` p99 while pictures were drawn
was 2.9x its idle p99 with a thread, 1.75x with this process (`python -m bench.world_stall`).

The worker is started on first use (`spawn`: a fresh interpreter, about 90 ms, once per world)
and kept; it runs at a lower priority (`NICENESS`), so on a busy machine the relay's answers and
the world's light requests come first, and one at a time (`WORKERS`): heavy requests queue for
it instead of taking every core. It ignores SIGINT (Ctrl-C of `vttrelay serve` reaches the whole
process group: the parent stops it) and ends itself when its parent dies, even by SIGKILL.

Work crosses as pickled plain data: `fn` is a module-level function, its arguments documents,
paths and numbers, its result a picture. `fn` is called with a keyword `checkpoint`, which raises
`OverTime` once the caller's `deadline` has passed (`time.monotonic`, the same clock in every
process of the machine): a picture past its time limit stops there. A worker that dies under its
work (killed, out of memory) fails that work with `WorkerLost`; the next call starts a new one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait
from typing import Any, Final, TypeVar

T = TypeVar("T")

WORKERS: Final = 1
NICENESS: Final = 10


class OverTime(Exception):
    """The work reached a `checkpoint` past its deadline and stopped."""


class WorkerLost(Exception):
    """The worker process died while it held the work (killed, out of memory)."""


class _Checkpoint:
    """In the worker: raise OverTime once `deadline` (`time.monotonic`) has passed."""

    def __init__(self, deadline: float | None) -> None:
        self._deadline = deadline

    def __call__(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise OverTime


def _exit_with_parent() -> None:
    """In the worker: wait for the parent's end (its sentinel) and end this process then."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        wait([parent.sentinel])
        os._exit(1)


def _start_worker(niceness: int) -> None:
    """The worker's initializer: nicer, deaf to Ctrl-C, and bound to its parent's life."""
    with contextlib.suppress(OSError):
        os.nice(niceness)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()


def _call(
    fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], deadline: float | None
) -> T:
    """In the worker: `fn(*args, **kwargs, checkpoint=...)`, after a first check (work that
    waited in the queue past its deadline does not start)."""
    checkpoint = _Checkpoint(deadline)
    checkpoint()
    return fn(*args, **kwargs, checkpoint=checkpoint)


class HeavyWork:
    """The worker process, started on first use; `close()` stops it."""

    def __init__(self, workers: int = WORKERS, niceness: int = NICENESS) -> None:
        self._workers = workers
        self._niceness = niceness
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    async def run(
        self, fn: Callable[..., T], *args: Any, seconds: float | None = None, **kwargs: Any
    ) -> T:
        """`fn(*args, **kwargs, checkpoint=...)` in the worker; its result (or its exception).
        `seconds`: the time it may take from now (its queueing included), else no limit."""
        deadline = None if seconds is None else time.monotonic() + seconds
        pool = self._pool
        if pool is None:
            pool = self._pool = concurrent.futures.ProcessPoolExecutor(
                self._workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(self._niceness,),
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                pool, functools.partial(_call, fn, args, kwargs, deadline)
            )
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise WorkerLost from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
