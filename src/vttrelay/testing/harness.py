"""The relay and a fresh embedded world for the pytest plugin, run in the test process.

`Harness(data_dir, seed).start()` runs what `vttrelay serve --port 0 --seed N` runs
(`server.run_instance`: the relay with its plug-ins, the demo world on its own thread and loop,
connected over a real loopback WebSocket) on a thread of its own with its own event loop, so
sync tests and async tests (on their own loops) reach it over real sockets alike. It mints a
key holding every scope, without a rate limit, and takes a snapshot of the world as it
connected; `reset()` restores that snapshot (documents, files, the world's generator and clock)
and restarts the relay's request ids, in milliseconds. `stop()` stops both threads.

Why in the test process and not a `vttrelay serve` subprocess: the reset is a direct call on
the world (a subprocess would need an HTTP route that wipes a world, which a relay must not
have), the start is a thread instead of an interpreter, and a failure's traceback and log
lines land in the test's report. Whoever wants a process runs `vttrelay serve --ready-file`.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import seed_request_ids
from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.relay.store import DEFAULT_ACCOUNT, RelayStore
from vttrelay.server import Listening, datadir, loop_factory, run_instance
from vttrelay.server.prepare import EMBEDDED_CLIENT_ID, prepare
from vttrelay.testing.handle import VttRelay
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.runtime.thread import LoopThread

START_TIMEOUT: Final = 60.0  # seconds the relay and its world may take to start
CALL_TIMEOUT: Final = 30.0  # seconds a reset or a stop may take
KEY_NAME: Final = "pytest"


class HarnessError(RuntimeError):
    """The relay or its world did not start (the cause is chained)."""


class Harness:
    """A relay and its embedded world on a thread of this process (module docstring)."""

    def __init__(self, data_dir: Path, seed: int) -> None:
        self.data_dir = Path(data_dir)
        self.seed = seed
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._listening: Listening | None = None
        self._api_key = ""
        self._snapshot = Path(tempfile.mkdtemp(prefix="snapshot-", dir=self.data_dir)) / "world"

    def start(self) -> VttRelay:
        """Start the relay and its world; returns once the world is connected."""
        self._thread = threading.Thread(target=self._main, name="vttrelay-relay", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT):
            raise HarnessError(f"the relay did not start within {START_TIMEOUT:g} s")
        if self._failure is not None or self._listening is None:
            raise HarnessError("the relay did not start") from self._failure
        self._on_world(lambda world: world.world.snapshot(self._snapshot))
        return VttRelay(
            url=self._listening.base,
            api_key=self._api_key,
            client_id=EMBEDDED_CLIENT_ID,
            seed=self.seed,
            data_dir=self.data_dir,
            _harness=self,
        )

    def reset(self) -> None:
        """The world as it was at the start, and the request ids from 1 again."""
        self._on_world(lambda world: world.world.restore(self._snapshot))
        seed_request_ids(self.seed)

    def stop(self) -> None:
        """Stop the relay and its world and wait for their threads (idempotent)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(CALL_TIMEOUT)

    def _on_world(self, fn: Callable[[EmbeddedWorld], object]) -> None:
        """Run `fn(embedded world)` on the world's own loop and wait for it."""
        assert self._listening is not None
        handle: LoopThread[EmbeddedWorld] | None = self._listening.world
        assert handle is not None
        handle.call(lambda: fn(handle.value)).result(CALL_TIMEOUT)

    def _main(self) -> None:
        try:
            with asyncio.Runner(loop_factory=loop_factory()) as runner:
                runner.run(self._serve())
        except BaseException as exc:  # told to start(), which raises it
            self._failure = exc
        finally:
            self._started.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        config = RelayConfig(host="127.0.0.1", port=0, data_dir=self.data_dir, seed=self.seed)
        lock = datadir.hold_world(self.data_dir, "vttrelay pytest plugin")  # as `serve` does
        try:
            await self._serve_world(config)
        finally:
            datadir.release(lock)

    async def _serve_world(self, config: RelayConfig) -> None:
        store = RelayStore(config.store_target)
        prepared = prepare(store, config, with_world=True)
        _, self._api_key = store.create_key(
            DEFAULT_ACCOUNT, ALL_SCOPES, name=KEY_NAME, rate_per_minute=0
        )
        seed_request_ids(self.seed)

        def listening(info: Listening) -> None:
            self._listening = info
            self._started.set()

        await run_instance(
            config, store, lambda: prepared, ready=listening, announce=False, stop=self._stop
        )
