"""Start and stop what a scenario needs: a provisioned relay process and a fake world process.

`Stack` is an async context manager: on entry it provisions a fresh data dir, starts the relay
(pinned to core 0 with `pin`), waits for `/api/health`, starts the fake world (pinned to core 1)
and waits until every world is authenticated; on exit it stops both by pid. `Stack.stopped()`
tells whether both processes are gone, for tests.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import aiohttp

from bench.procs import Child, alive, free_port, python_argv, start
from bench.provision import Provisioned, provision

RELAY_CPU = 0
LOAD_CPU = 1
START_TIMEOUT = 30.0


@dataclass
class Stack:
    """A relay with `worlds` fake worlds connected, in `workdir`."""

    workdir: Path
    worlds: int = 1
    pin: bool = False
    relay_args: tuple[str, ...] = ()
    relay: Child | None = None
    world: Child | None = None
    port: int = 0
    creds: Provisioned | None = None
    pids: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_key(self) -> str:
        assert self.creds is not None
        return self.creds.api_key

    @property
    def client_ids(self) -> list[str]:
        assert self.creds is not None
        return self.creds.client_ids

    @property
    def relay_cpu(self) -> int | None:
        return RELAY_CPU if self.pin else None

    @property
    def load_cpu(self) -> int | None:
        return LOAD_CPU if self.pin else None

    async def __aenter__(self) -> Stack:
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        data_dir = self.workdir / "data"
        self.creds = await asyncio.to_thread(provision, data_dir, self.worlds)
        self.port = free_port()
        self.relay = await start(
            "relay",
            python_argv(
                "bench.relay_server",
                "--port",
                str(self.port),
                "--data-dir",
                str(data_dir),
                *self.relay_args,
            ),
            cpu=self.relay_cpu,
            log_path=self.workdir / "relay.log",
        )
        self.pids.append(self.relay.pid)
        await self._wait_healthy()
        worlds_file = self.creds.write_worlds(self.workdir / "worlds.json")
        self.world = await start(
            "fake world",
            python_argv("bench.fake_world", "--url", self.url, "--worlds-file", str(worlds_file)),
            cpu=self.load_cpu,
            log_path=self.workdir / "fake_world.log",
            pipes=True,
        )
        self.pids.append(self.world.pid)
        await self.world.expect("READY", START_TIMEOUT + self.worlds / 20)

    async def _wait_healthy(self) -> None:
        assert self.relay is not None
        deadline = time.monotonic() + START_TIMEOUT
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self.relay.proc.returncode is not None:
                    raise RuntimeError(f"relay exited: {self.relay.log_tail()}")
                try:
                    async with session.get(self.url + "/api/health") as resp:
                        if resp.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        tail = self.relay.log_tail()
        raise RuntimeError(f"relay not healthy after {START_TIMEOUT:.0f} s: {tail}")

    async def stop(self) -> None:
        """Stop the fake world (asks it to quit first), then the relay; both by pid."""
        if self.world is not None:
            if self.world.proc.returncode is None:
                try:
                    await self.world.send("quit")
                    await asyncio.wait_for(self.world.proc.wait(), 5)
                except (TimeoutError, ConnectionError, BrokenPipeError):
                    pass
            await self.world.stop()
        if self.relay is not None:
            await self.relay.stop()

    def stopped(self) -> bool:
        """True when every process this stack started is gone."""
        return not any(alive(pid) for pid in self.pids)
