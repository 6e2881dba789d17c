"""The embedded world on its own event loop, in a thread of its own, so that its work never runs
on the relay's loop (DESIGN §2).

`vttrelay serve` calls `start_in_thread` and, at shutdown, `await handle.stop()`. The world,
its agent and its SQLite connection live on that thread only: the caller reaches them through the
relay, over the loopback WebSocket, like any world. Heavy work inside the world (a scene picture)
goes further, to a worker thread of the world's loop (`asyncio.to_thread`), so that the world
answers its other requests meanwhile.

Why a thread and not a process (bench/RESULTS.md, "The embedded world on its own loop"): both meet
the target (`python -m bench.world_stall`), the thread is simpler (one process to start, stop and
log; no second copy of the interpreter's memory), and the heavy work that remains is in C that
releases the GIL for most of its time (Pillow's PNG encoder, SQLite). Pure-Python work of the
world (the rules) still takes the GIL in turns with the relay, at most the interpreter's switch
interval (5 ms) at a time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vttrelay.world.embedded import EmbeddedWorld, start

log = logging.getLogger(__name__)

THREAD_NAME = "vttrelay-world"


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        return asyncio.new_event_loop()


@dataclass
class WorldThread:
    """A running embedded world on its own loop and thread; `await stop()` ends both."""

    thread: threading.Thread
    loop: asyncio.AbstractEventLoop
    embedded: EmbeddedWorld
    _finished: asyncio.Event

    def call(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Run `fn()` on the world's loop (it may touch the world there); its result later."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop)

    async def stop(self) -> None:
        """Disconnect the world, close its database, end its loop and join its thread."""
        if not self.thread.is_alive():
            return

        async def finish() -> None:
            try:
                await self.embedded.stop()
            finally:
                self._finished.set()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(finish(), self.loop))
        await asyncio.to_thread(self.thread.join)


async def start_in_thread(
    relay_url: str,
    token: str,
    data_dir: Path,
    *,
    wait_connected: float = 10.0,
    **agent_options: Any,
) -> WorldThread:
    """Start the embedded world (`embedded.start`, same arguments) on a new event loop in a new
    thread; returns once it is connected (or `wait_connected` seconds passed, as `start`)."""
    started: concurrent.futures.Future[WorldThread] = concurrent.futures.Future()

    async def main(loop: asyncio.AbstractEventLoop) -> None:
        finished = asyncio.Event()
        try:
            embedded = await start(
                relay_url, token, data_dir, wait_connected=wait_connected, **agent_options
            )
        except BaseException as exc:
            started.set_exception(exc)
            return
        started.set_result(WorldThread(threading.current_thread(), loop, embedded, finished))
        await finished.wait()

    def run() -> None:
        loop = _new_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(main(loop))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        except BaseException as exc:  # the world's loop itself failed: say so, never silently
            log.exception("the embedded world's thread failed")
            if not started.done():
                started.set_exception(exc)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    thread = threading.Thread(target=run, name=THREAD_NAME, daemon=True)
    thread.start()
    return await asyncio.wrap_future(started)
