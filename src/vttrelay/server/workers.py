"""`vttrelay serve --workers N`: N relay processes on one machine serving one port.

The command's own process becomes a supervisor that serves nothing itself:

1. It binds the port with SO_REUSEPORT (so `--port 0` picks one port for all; the socket never
   listens and is closed once the workers listen; a port another relay already serves, even one
   with SO_REUSEPORT, is refused), then does once what every worker relies on
   (`prepare.prepare`: the store's migrations, the demo key on a data dir's first start, the
   embedded world's reserved id and token): a supervisor that cannot have the port changes
   nothing.
2. It starts N worker processes (multiprocessing, spawn). Each is a whole relay
   (`server.run_instance`) with its own instance id, listening on the same host and port with
   SO_REUSEPORT: the kernel spreads new connections over the workers, so one machine uses all its
   cores. They share worlds, events and rate limits through Redis (`--redis`, required with
   more than one worker) and keys and tokens through the store (one SQLite file in WAL mode, or
   PostgreSQL). A request that reaches a worker other than its world's takes one hop through
   Redis.
3. The embedded demo world runs in worker 0 and connects to the shared port like any world: to
   whichever worker the kernel picks. The supervisor takes the world's lock before it prepares
   (`datadir.hold_world`: a second `serve` of the world is refused) and hands the same open
   lock file to worker 0 (`SharedLock`), so a world whose supervisor was killed stays locked.
4. It prints the "listening" lines once every worker listens, then watches them: a worker that
   exits on its own is restarted with a new instance id (after 1 s, doubling up to 30 s while it
   keeps failing within a minute of its start; the directory releases the dead instance's worlds
   when its heartbeat expires, and its worlds reconnect). SIGINT or SIGTERM stops every worker:
   SIGTERM to each by pid, SIGKILL after `STOP_GRACE` seconds. SIGHUP (a renewed certificate,
   `--tls-cert`) is sent on to every worker that listens, by pid, and each reloads its
   certificate (`server._tls`); a worker ignores SIGHUP until it listens, and without
   `--tls-cert` SIGHUP does nothing but say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing import reduction
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from queue import Empty
from typing import IO, Any

from vttrelay.relay.accesslog import setup_logging
from vttrelay.relay.backends import BackendUnavailable
from vttrelay.relay.config import RelayConfig, new_instance_id
from vttrelay.relay.store import RelayStore
from vttrelay.server import NOTHING_TO_RELOAD, Listening, datadir, loop_factory, run_instance
from vttrelay.server.prepare import Prepared, announce_listening, prepare
from vttrelay.server.ready import clear_ready

log = logging.getLogger("vttrelay.workers")

START_TIMEOUT = 60.0  # seconds every worker has to listen at start-up
STOP_GRACE = 10.0  # seconds a worker has to stop after SIGTERM before SIGKILL
RESTART_DELAY = 1.0  # first delay before a failed worker is restarted; doubles up to the max
MAX_RESTART_DELAY = 30.0
STABLE_AFTER = 60.0  # a worker that ran this long before exiting is restarted after RESTART_DELAY
POLL = 0.25  # seconds between checks of the workers


class WorkersError(Exception):
    """`--workers` cannot start: the message says why."""


class SharedLock:
    """An open lock file handed to a spawned worker: pickled while the worker is spawned, the
    worker gets a descriptor of the same open file, so it holds the same flock (`datadir.py`)
    and keeps it if the supervisor dies (SIGKILL) while the worker runs."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (_shared_lock, (reduction.DupFd(self.fd),))


def _shared_lock(dup: Any) -> SharedLock:
    return SharedLock(dup.detach())


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process needs (pickled to it): its index, its settings (with its own
    instance id), what the supervisor prepared (the embedded world's token: worker 0's only),
    the log level and, for worker 0 (the embedded world's), the world's lock."""

    index: int
    config: RelayConfig
    prepared: Prepared
    log_level: str
    world_lock: SharedLock | None = None  # kept open for the worker's life


def worker_main(spec: WorkerSpec, started: Queue[tuple[int, int, str]]) -> None:
    """A worker process: one relay on the shared port until SIGTERM (`server.run_instance`)."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # until run_instance reloads on it (with TLS)
    setup_logging(spec.log_level, json=spec.config.log_format == "json")
    config = spec.config

    def ready(_: Listening) -> None:
        started.put((spec.index, os.getpid(), config.instance_id))

    lock = datadir.hold(config.data_dir)  # the supervisor holds it too; this outlives a kill
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        store = RelayStore(config.store_target)
        try:
            runner.run(
                run_instance(
                    config,
                    store,
                    lambda: spec.prepared,
                    ready=ready,
                    announce=False,
                    reuse_port=True,
                )
            )
        except BackendUnavailable as exc:  # Redis unreachable: one line, exit code 1
            print(f"vttrelay: worker {spec.index}: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
        finally:
            datadir.release(lock)


def reserve_port(host: str, port: int) -> socket.socket:
    """A socket bound to host:port with SO_REUSEPORT (never listening): it fixes the port the
    workers share (`port` 0: a free one) and fails early when another program holds it, or
    when something already listens there (SO_REUSEPORT lets this user bind beside another
    `serve --workers`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise WorkersError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    if port and _someone_listens(host, port):
        sock.close()
        raise WorkersError(f"cannot listen on {host}:{port}: another server listens there")
    return sock


def _someone_listens(host: str, port: int) -> bool:
    target = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    with contextlib.suppress(OSError), socket.create_connection((target, port), timeout=1):
        return True
    return False


@dataclass
class _Worker:
    spec: WorkerSpec
    process: BaseProcess
    started_at: float
    failures: int = 0  # exits in a row, each within STABLE_AFTER of its start
    restart_at: float | None = None  # when a dead worker is started again
    listening: bool = False  # it said so: a SIGHUP is sent on to it


class Supervisor:
    """Starts the workers, waits until they listen, restarts the ones that exit, stops them."""

    def __init__(
        self,
        config: RelayConfig,
        count: int,
        prepared: Prepared,
        log_level: str,
        reserved: socket.socket,
        world_lock: IO[bytes] | None = None,
    ) -> None:
        self.config = config
        self.world_lock = world_lock  # handed to worker 0, which runs the world
        self.reserved = reserved  # the port, bound (SO_REUSEPORT) until every worker listens
        self.count = count
        self.prepared = prepared
        self.log_level = log_level
        self.context = multiprocessing.get_context("spawn")
        self.started: Queue[tuple[int, int, str]] = self.context.Queue()
        self.workers: dict[int, _Worker] = {}
        self.stopping = False
        self.hangups = 0  # SIGHUPs received and not yet sent on

    def _spec(self, index: int) -> WorkerSpec:
        metrics_port = self.config.metrics_port
        if metrics_port:  # worker i on its own port (0: each a free one)
            metrics_port += index
        return WorkerSpec(
            index=index,
            config=replace(self.config, instance_id=new_instance_id(), metrics_port=metrics_port),
            prepared=self.prepared if index == 0 else replace(self.prepared, world_token=None),
            log_level=self.log_level,
            world_lock=(
                SharedLock(self.world_lock.fileno())
                if index == 0 and self.world_lock is not None
                else None
            ),
        )

    def _start(self, index: int, failures: int = 0) -> None:
        spec = self._spec(index)
        process = self.context.Process(
            target=worker_main,
            args=(spec, self.started),
            name=f"vttrelay-worker-{index}",
            daemon=False,
        )
        process.start()
        self.workers[index] = _Worker(spec, process, time.monotonic(), failures)

    def _stop_signal(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def _hangup_signal(self, signum: int, frame: Any) -> None:
        self.hangups += 1

    def _forward_hangup(self) -> None:
        """Send a received SIGHUP on to every listening worker (each reloads its certificate)."""
        self.hangups = 0
        if not self.config.tls_cert:
            log.info(NOTHING_TO_RELOAD)
            return
        for index, worker in sorted(self.workers.items()):
            pid = worker.process.pid
            if not worker.listening or pid is None or not worker.process.is_alive():
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGHUP)
                log.info("SIGHUP: sent on to worker %d (pid %d)", index, pid)

    def run(self) -> int:
        """Run until SIGINT/SIGTERM; 0, or 1 when the workers could not start."""
        previous = {
            sig: signal.signal(sig, self._stop_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, self._hangup_signal)
        try:
            return self._run()
        finally:
            self._stop_all()
            clear_ready(self.config.ready_file)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _run(self) -> int:
        config = self.config
        reserved = self.reserved
        try:
            for index in range(self.count):
                self._start(index)
            if not self._wait_listening():
                return 1
        finally:
            reserved.close()
        announce_listening(
            config.local_base(),
            self.prepared,
            config,
            with_world=self.prepared.world_token is not None,
            workers=self.count,
        )
        while not self.stopping:
            self._drain_started()
            if self.hangups:
                self._forward_hangup()
            self._watch()
            time.sleep(POLL)
        return 0

    def _wait_listening(self) -> bool:
        """Until every worker listens: True; False if one exits first, or on a signal/timeout."""
        listening: set[int] = set()
        deadline = time.monotonic() + START_TIMEOUT
        while len(listening) < self.count:
            if self.stopping:
                return False
            for index, worker in self.workers.items():
                if index not in listening and not worker.process.is_alive():
                    log.error(
                        "worker %d exited with code %s before it listened",
                        index,
                        worker.process.exitcode,
                    )
                    return False
            if time.monotonic() > deadline:
                log.error("the workers did not all listen within %.0f s", START_TIMEOUT)
                return False
            try:
                index, pid, instance = self.started.get(timeout=POLL)
            except Empty:
                continue
            listening.add(index)
            self._listening(index, pid, instance)
        return True

    def _drain_started(self) -> None:
        with contextlib.suppress(Empty):
            while True:
                self._listening(*self.started.get_nowait())

    def _listening(self, index: int, pid: int, instance: str) -> None:
        worker = self.workers.get(index)
        if worker is not None and worker.process.pid == pid:
            worker.listening = True
        log.info("worker %d listening (pid %d, instance %s)", index, pid, instance)

    def _watch(self) -> None:
        """Restart the workers that exited, after their delay."""
        now = time.monotonic()
        for index, worker in list(self.workers.items()):
            if worker.restart_at is not None:
                if now >= worker.restart_at and not self.stopping:
                    self._start(index, worker.failures)
                continue
            if worker.process.is_alive():
                continue
            worker.process.join()
            ran = now - worker.started_at
            worker.failures = worker.failures + 1 if ran < STABLE_AFTER else 1
            delay = min(RESTART_DELAY * 2 ** (worker.failures - 1), MAX_RESTART_DELAY)
            worker.restart_at = now + delay
            log.warning(
                "worker %d (pid %s, instance %s) exited with code %s after %.0f s; "
                "restarting it in %.0f s",
                index,
                worker.process.pid,
                worker.spec.config.instance_id,
                worker.process.exitcode,
                ran,
                delay,
            )

    def _stop_all(self) -> None:
        """SIGTERM to every live worker by pid, then SIGKILL to those still there."""
        live = [w.process for w in self.workers.values() if w.process.is_alive()]
        for process in live:
            if process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for process in live:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in live:
            if process.is_alive() and process.pid is not None:
                log.warning("worker pid %d did not stop in %.0f s: killed", process.pid, STOP_GRACE)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
                process.join()
        self.started.close()


def serve_workers(config: RelayConfig, count: int, with_world: bool, log_level: str) -> int:
    """`vttrelay serve --workers N` (N > 1): prepare once, then supervise N workers."""
    if not config.redis_url:
        raise WorkersError(
            f"--workers {count} needs --redis URL (or VTTRELAY_REDIS_URL): the worker processes "
            "share worlds, events and rate limits through Redis"
        )
    try:
        lock = datadir.hold(config.data_dir)  # while it runs, no restore (datadir.py)
    except datadir.DataDirBusy as busy:
        raise WorkersError(str(busy)) from None
    world_lock = None
    try:
        if with_world:  # worker 0 runs the world; it and the supervisor hold its lock
            try:
                world_lock = datadir.hold_world(config.data_dir)
            except datadir.WorldBusy as busy:
                raise WorkersError(str(busy)) from None
        # the port first: a `serve` that cannot bind it (another relay has it) changes nothing
        reserved = reserve_port(config.host, config.port)
        config.port = int(reserved.getsockname()[1])
        store = RelayStore(config.store_target)  # migrations applied before any worker opens it
        try:
            prepared = prepare(store, config, with_world)
        except BaseException:
            reserved.close()
            raise
        finally:
            store.close()
        supervisor = Supervisor(config, count, prepared, log_level, reserved, world_lock)
        try:
            return supervisor.run()
        except WorkersError as exc:
            print(f"vttrelay serve: {exc}", file=sys.stderr)
            return 1
    finally:
        if world_lock is not None:
            datadir.release(world_lock)
        datadir.release(lock)
