"""An event loop of its own, in a thread of its own: how `vttrelay serve` runs the embedded
world (`embedded.start_in_thread`), so that the world's work never runs on the relay's loop
(DESIGN §2).

`run_in_thread(start)` runs the coroutine function `start` on a new loop in a new thread and
returns, once it has finished, a handle holding what it returned; `await handle.stop()` stops
that (its `stop()`, on its own loop), ends the loop and joins the thread. Whatever `start`
built lives on that thread only: the caller reaches the embedded world through the relay, over
the loopback WebSocket, like any world.

Why a thread and not a process (bench/RESULTS.md, "The embedded world on its own loop" and
"Issue 21: heavy work in a process"): the thread is simpler (one process to start, stop and
log; one copy of the interpreter's memory), and the world's light requests are short
pure-Python work that takes the GIL in turns with the relay. What would hold the GIL for
milliseconds at a time, drawing large pictures, runs in the world's heavy-work process
(`runtime.heavy`), not on this thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

THREAD_NAME = "vttrelay-world"


class Stoppable(Protocol):
    async def stop(self) -> None: ...


S = TypeVar("S", bound=Stoppable)


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        return asyncio.new_event_loop()


@dataclass
class LoopThread(Generic[S]):
    """What `start` returned, running on its own loop and thread; `await stop()` ends all."""

    thread: threading.Thread
    loop: asyncio.AbstractEventLoop
    value: S
    _finished: asyncio.Event

    def call(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Run `fn()` on the thread's loop (it may touch `value` there); its result later."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop)

    async def stop(self) -> None:
        """Stop `value` on its loop, end the loop and join the thread."""
        if not self.thread.is_alive():
            return

        async def finish() -> None:
            try:
                await self.value.stop()
            finally:
                self._finished.set()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(finish(), self.loop))
        await asyncio.to_thread(self.thread.join)


async def run_in_thread(start: Callable[[], Awaitable[S]]) -> LoopThread[S]:
    """Run `start()` on a new event loop in a new thread; returns once it returned (its
    exception, if it raised: the thread has ended then)."""
    started: concurrent.futures.Future[LoopThread[S]] = concurrent.futures.Future()

    async def main(loop: asyncio.AbstractEventLoop) -> None:
        finished = asyncio.Event()
        try:
            value = await start()
        except BaseException as exc:
            started.set_exception(exc)
            return
        started.set_result(LoopThread(threading.current_thread(), loop, value, finished))
        await finished.wait()

    def run() -> None:
        loop = _new_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(main(loop))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        except BaseException as exc:  # the loop itself failed: say so, never silently
            log.exception("the embedded world's thread failed")
            if not started.done():
                started.set_exception(exc)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    thread = threading.Thread(target=run, name=THREAD_NAME, daemon=True)
    thread.start()
    return await asyncio.wrap_future(started)
