"""Start and stop what a scenario needs: a provisioned relay process and a fake world process.

`Stack` is an async context manager: on entry it provisions a fresh data dir, starts the relay
(pinned to core 0 with `pin`), waits for `/api/health`, starts the fake world (pinned to core 1)
and waits until every world is authenticated; on exit it stops both by pid. `Stack.stopped()`
tells whether both processes are gone, for tests.

Scaled out (the scale scenarios): `instances=2` starts a `redis-server` and two relay processes
over it and one store (the fake world connects to the first; `target` picks the relay the load
goes to, so 1 puts every call one hop away from its world), and `workers=2` starts one relay as
`vttrelay serve --workers 2` does (over its own `redis-server`; never pinned: the workers are
there to use both cores). `relay_cpu_seconds()` and `relay_rss_bytes()` cover the whole relay
side: every relay process, its workers, and Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
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
    instances: int = 1  # relay processes over one Redis (more than 1: scaled out)
    workers: int = 1  # worker processes of the (first) relay, `--workers`
    target: int = 0  # the relay the load goes to (the fake world connects to relay 0)
    replies: str = "recorded"  # the fake world's reply set (bench.replies.REPLY_SETS)
    relay_wrapper: tuple[str, ...] = ()  # a command the relays run under (bench.instructions)
    relay: Child | None = None  # relay 0
    relays: list[Child] = field(default_factory=list)
    redis: Child | None = None
    world: Child | None = None
    port: int = 0  # relay 0's
    ports: list[int] = field(default_factory=list)
    creds: Provisioned | None = None
    pids: list[int] = field(default_factory=list)

    @property
    def scaled(self) -> bool:
        return self.instances > 1 or self.workers > 1

    @property
    def url(self) -> str:
        """Where the load goes: the `target` relay."""
        return f"http://127.0.0.1:{self.ports[self.target] if self.ports else self.port}"

    @property
    def world_url(self) -> str:
        """Where the fake world connects: relay 0."""
        return f"http://127.0.0.1:{self.port}"

    def relay_side(self) -> list[Child]:
        """Every process that serves the load: the relays (with their workers) and Redis."""
        return [*self.relays, *([self.redis] if self.redis is not None else [])]

    def relay_cpu_seconds(self) -> float:
        return sum(child.cpu_seconds() for child in self.relay_side())

    def relay_rss_bytes(self) -> int:
        return sum(child.rss_bytes() for child in self.relay_side())

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
        return RELAY_CPU if self.pin and self.workers == 1 else None

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
        shared: tuple[str, ...] = ()
        if self.scaled:
            redis_url = await self._start_redis()
            shared = ("--redis", redis_url, "--workers", str(self.workers))
        for index in range(self.instances):
            port = free_port()
            relay = await start(
                f"relay {index}",
                [
                    *self.relay_wrapper,
                    *python_argv(
                        "bench.relay_server",
                        "--port",
                        str(port),
                        "--data-dir",
                        str(data_dir),
                        *shared,
                        *self.relay_args,
                    ),
                ],
                cpu=self.relay_cpu,
                log_path=self.workdir / f"relay{index or ''}.log",
            )
            self.relays.append(relay)
            self.ports.append(port)
            self.pids.append(relay.pid)
        self.relay, self.port = self.relays[0], self.ports[0]
        for relay, port in zip(self.relays, self.ports, strict=True):
            await self._wait_healthy(relay, port)
        if self.workers > 1:
            await self._wait_workers_listen()
        worlds_file = self.creds.write_worlds(self.workdir / "worlds.json")
        self.world = await start(
            "fake world",
            python_argv(
                "bench.fake_world",
                "--url",
                self.world_url,
                "--worlds-file",
                str(worlds_file),
                "--replies",
                self.replies,
            ),
            cpu=self.load_cpu,
            log_path=self.workdir / "fake_world.log",
            pipes=True,
        )
        self.pids.append(self.world.pid)
        await self.world.expect("READY", START_TIMEOUT + self.worlds / 20)
        if self.scaled:
            await self._wait_reachable()

    async def _start_redis(self) -> str:
        """A `redis-server` on a free port (no persistence), with the relay side's pinning."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("the scale scenarios need redis-server (Debian: redis-server)")
        port = free_port()
        self.redis = await start(
            "redis",
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
                "--loglevel",
                "warning",
            ],  # fmt: skip
            cpu=RELAY_CPU if self.pin else None,
            log_path=self.workdir / "redis.log",
        )
        self.pids.append(self.redis.pid)
        deadline = time.monotonic() + START_TIMEOUT
        while not await asyncio.to_thread(_redis_answers, port):
            if self.redis.proc.returncode is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {self.redis.log_tail()}")
            await asyncio.sleep(0.05)
        return f"redis://127.0.0.1:{port}/0"

    async def _wait_reachable(self) -> None:
        """Until every instance is alive and the load's relay reaches the first world (the
        directory has told it where the world is)."""
        client = self.client_ids[0]
        headers = {"x-api-key": self.api_key}
        deadline = time.monotonic() + START_TIMEOUT
        expected = max(self.instances, self.workers)
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                try:
                    async with session.get(self.url + "/api/status") as resp:
                        alive_count = (await resp.json()).get("instancesAlive")
                    async with session.get(
                        f"{self.url}/players?clientId={client}", headers=headers
                    ) as resp:
                        if resp.status == 200 and alive_count == expected:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError(f"the relays did not all see the world within {START_TIMEOUT:.0f} s")

    async def _wait_workers_listen(self) -> None:
        """Until every worker of relay 0 answers on the shared port (new connections spread over
        the workers that listen): the fake world connects after, so its worlds spread over all
        the workers, not only over the first to listen."""
        seen: set[str] = set()
        deadline = time.monotonic() + START_TIMEOUT
        connector = aiohttp.TCPConnector(force_close=True)  # a new connection per request
        async with aiohttp.ClientSession(connector=connector) as session:
            while len(seen) < self.workers:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {len(seen)} of {self.workers} workers answered")
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(self.world_url + "/api/status") as resp:
                        seen.add(str((await resp.json()).get("instanceId")))
                if len(seen) < self.workers:
                    await asyncio.sleep(0.02)

    async def _wait_healthy(self, relay: Child, port: int) -> None:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if relay.proc.returncode is not None:
                    raise RuntimeError(f"{relay.name} exited: {relay.log_tail()}")
                try:
                    async with session.get(url + "/api/health") as resp:
                        if resp.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        tail = relay.log_tail()
        raise RuntimeError(f"{relay.name} not healthy after {START_TIMEOUT:.0f} s: {tail}")

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
        for relay in self.relays:
            await relay.stop(grace=15.0)  # a --workers relay stops its workers first
        if self.redis is not None:
            await self.redis.stop()

    def stopped(self) -> bool:
        """True when every process this stack started is gone."""
        return not any(alive(pid) for pid in self.pids)


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False
