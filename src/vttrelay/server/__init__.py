"""The composition root: runs the relay with its plug-ins and the embedded demo world.

- `serve(config, with_world)`: `vttrelay serve` in this process (one instance, which runs
  `prepare` once it holds its port);
  `run(config, with_world)` does it on a uvloop event loop and turns an unreachable Redis into an
  exit code.
- `run_instance(...)`: one relay process until SIGINT/SIGTERM: the app (`assemble.build_app`) on
  its port, `/metrics` on its own port if asked, the demo world (`embedded.demo_world`), the
  "listening" lines (`prepare.announce_listening`).
- `prepare.py`: what `serve` does once it holds its port, before the world connects (the demo
  key on a data dir's first start, the embedded world's reserved token, the operator's sign-in
  link on the first start).
- `workers.py`: `vttrelay serve --workers N`, a supervisor of N relay processes on one port.
- `datadir.py`: the data dir's lock (relays share it, `restore` needs it alone) and its
  embedded world's (one process runs it); `backup.py`:
  `vttrelay backup` and `restore`.
- `assemble.py`: the relay application built from its parts; `embedded.py`: the demo world on
  its own thread; `sessions.py`: the session routes' manager.

Nothing here parses a command line: `vttrelay.cli` does, and calls these.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from vttrelay.relay import tls
from vttrelay.relay.accesslog import BufferedAccessLog
from vttrelay.relay.backends import BackendUnavailable
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import seed_request_ids
from vttrelay.relay.listener import RelaySite, connection_limit, make_runner, raise_fd_limit
from vttrelay.relay.logformat import route_logging
from vttrelay.relay.metrics import metrics_app
from vttrelay.relay.state import STATE
from vttrelay.relay.store import RelayStore
from vttrelay.server import datadir
from vttrelay.server.assemble import build_app
from vttrelay.server.embedded import demo_world
from vttrelay.server.prepare import EMBEDDED_CLIENT_ID, Prepared, announce_listening, prepare
from vttrelay.server.ready import clear_ready
from vttrelay.server.sessions import AutoStarter, WorldDepartures, session_manager
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.runtime.thread import LoopThread

log = logging.getLogger("vttrelay")

# Listen backlog: aiohttp's default (128) drops the SYNs of a burst of connects while the relay
# is busy, and those clients stall a second or more (bench/RESULTS.md); at 1024, wrk opening 1,000
# connections at once still overflowed it (414 dropped SYNs, p99 3.6 s). Linux caps it at somaxconn.
LISTEN_BACKLOG = 4096
NOTHING_TO_RELOAD = "SIGHUP: nothing to reload (no --tls-cert)"  # logged, and it goes on


class CannotListen(Exception):
    """The port cannot be bound (another program has it); nothing was changed."""


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (off Windows), else asyncio's default."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(config: RelayConfig, with_world: bool) -> int:
    """`serve` on its own event loop until SIGINT/SIGTERM: 0, or 1 (with one line on stderr)
    when a backend (Redis) cannot be reached or the port cannot be bound."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        try:
            runner.run(serve(config, with_world=with_world))
        except (BackendUnavailable, CannotListen, datadir.DataDirBusy) as exc:
            print(f"vttrelay: {exc}", file=sys.stderr)
            return 1
    return 0


async def serve(config: RelayConfig, with_world: bool, ready: asyncio.Event | None = None) -> None:
    """Run the relay (and the embedded world) until SIGINT/SIGTERM; it holds the data dir's
    shared lock meanwhile (`datadir.hold`: no restore under a running relay) and, with the
    world, the world's own (`datadir.hold_world`: a second `serve` of that world is refused
    before it touches the store)."""
    lock = datadir.hold(config.data_dir)
    world_lock = None
    try:
        if with_world:
            world_lock = datadir.hold_world(config.data_dir)
        store = RelayStore(config.store_target)
        if config.seed is not None:  # one process: its request ids may be reproducible too
            seed_request_ids(config.seed)
        bound = False

        def prepared_once_bound() -> Prepared:
            nonlocal bound
            bound = True
            return prepare(store, config, with_world)

        try:
            await run_instance(
                config,
                store,
                prepared_once_bound,
                ready=(lambda _: ready.set()) if ready is not None else None,
            )
        finally:
            if bound:  # a serve that could not bind leaves the running one's ready file
                clear_ready(config.ready_file)
    finally:
        if world_lock is not None:
            datadir.release(world_lock)
        datadir.release(lock)


async def serve_metrics(app: web.Application, config: RelayConfig) -> web.AppRunner:
    """Serve the app's `GET /metrics` alone on `config.metrics_port` (its own port, when
    several processes share the main one); logs where."""
    runner = web.AppRunner(metrics_app(app[STATE].prometheus), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, config.host, config.metrics_port).start()
    for address in runner.addresses:
        log.info(
            "metrics of instance %s at http://%s:%d/metrics",
            config.instance_id,
            address[0],
            address[1],
        )
    return runner


def _tls(
    config: RelayConfig, loop: asyncio.AbstractEventLoop, own_process: bool = True
) -> ssl.SSLContext | None:
    """The server's SSL context when `config` names a certificate, reloaded on SIGHUP (a renewed
    certificate: connections opened afterwards get it; a file that no longer loads keeps the one
    in use and logs why). Without one, a process of its own logs on SIGHUP that there is nothing
    to reload and goes on (as the `--workers` supervisor does), instead of dying of it."""
    if not config.tls_cert:
        if own_process:
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signal.SIGHUP, log.info, NOTHING_TO_RELOAD)
        return None
    context = tls.server_context(config.tls_cert, config.tls_key)

    def reload() -> None:
        try:
            tls.reload(context, config.tls_cert, config.tls_key)
        except tls.TlsError as exc:
            log.warning("SIGHUP: certificate not reloaded, the one in use is kept: %s", exc)
            return
        log.info("SIGHUP: certificate reloaded from %s", config.tls_cert)

    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGHUP, reload)
    return context


@dataclass(frozen=True)
class Listening:
    """What `run_instance` tells its `ready` callback: the relay's base URL as this machine
    reaches it, and the embedded world's thread (None: no embedded world)."""

    base: str
    world: LoopThread[EmbeddedWorld] | None


async def run_instance(
    config: RelayConfig,
    store: RelayStore,
    prepared_once_bound: Callable[[], Prepared],
    *,
    ready: Callable[[Listening], None] | None = None,
    announce: bool = True,
    reuse_port: bool = False,
    stop: asyncio.Event | None = None,
) -> None:
    """One relay process until SIGINT/SIGTERM (or, given `stop`, until it is set: the caller
    owns the signals, as the pytest plugin's thread does): the app on `config.host:port` (with
    `reuse_port`, beside other processes on the same port: `--workers`), the embedded world when
    what `prepared_once_bound()` gives has its token, the "listening" lines on stdout when
    `announce`; `ready(...)` is called once it serves. `prepared_once_bound` runs once the port
    is bound: a `serve` that cannot bind it (another relay has it) changes nothing in the store.
    Closes `store` at the end."""
    loop = asyncio.get_running_loop()
    own_process = stop is None  # else it runs inside someone else's process (the plugin)
    if stop is None:
        # SIGINT/SIGTERM from now on stop the relay cleanly, also one that comes during
        # start-up (it then stops as soon as it has started: it leaves a shared directory
        # properly)
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
    # access lines written in batches and, in a process of its own, the other log lines through
    # the same buffer, in order and in the same format (accesslog.py, logformat.py)
    access = BufferedAccessLog(
        sys.stderr, json=config.log_format == "json", enabled=config.access_log != "off"
    )
    restore_logging = route_logging(access) if own_process else (lambda: None)
    # no token may connect as the embedded world's id until `prepared_once_bound` reserves it
    config.reserved_client_ids.setdefault(EMBEDDED_CLIENT_ID, None)
    sessions = session_manager(config, store)
    app = build_app(config, store, access, sessions=sessions)
    if sessions is not None:
        registry = app[STATE].registry

        def is_live(client_id: str, account: str) -> bool:
            world = registry.get(client_id)
            return world is not None and world.account == account

        sessions.hooks.is_live = is_live
        registry.add_listener(WorldDepartures(sessions))  # a world that leaves ends its sessions
        app[STATE].gate.starter = AutoStarter(sessions)
    ssl_context = _tls(config, loop, own_process)
    runner = make_runner(app, config, shutdown_timeout=5)
    await runner.setup()
    fd_limit = raise_fd_limit()  # idle sockets must hit max_connections, not the fd limit
    max_connections = connection_limit(config.max_connections, fd_limit)
    site = RelaySite(
        runner,
        config,
        backlog=LISTEN_BACKLOG,
        max_connections=max_connections,
        reuse_port=reuse_port,
        ssl_context=ssl_context,
    )
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        store.close()
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise CannotListen(f"cannot listen on {config.host}:{config.port}: {reason}") from None
    prepared = prepared_once_bound()
    if config.redis_url:  # scaled out: the link port's sockets count against the limit too
        from vttrelay.relay.backends.redis.directory import RedisDirectory

        if isinstance(registry := app[STATE].registry, RedisDirectory):
            registry.count_links_in(site.gate)
    port = site.port
    log.info("open files limit %d; at most %d connections", fd_limit, max_connections)
    base = config.local_base(port)
    if sessions is not None:
        sessions.hooks.relay_url = "ws" + base.removeprefix("http") + "/relay"

    metrics_runner = await serve_metrics(app, config) if config.metrics_port is not None else None
    try:
        async with demo_world(base, prepared.world_token, config.data_dir, config.seed) as world:
            if announce:
                announce_listening(base, prepared, config, with_world=world is not None)
            log.info("docs at %s/docs; data in %s", base, config.data_dir)

            # Start-up objects (modules, routes, the world's documents) never become garbage:
            # frozen, the cyclic collector no longer walks them in its full collections
            # (bench/RESULTS.md). Not in another's process: its objects are not ours to freeze.
            if own_process:
                gc.collect()
                gc.freeze()
            if ready is not None:
                ready(Listening(base, world))
            try:
                await stop.wait()
            finally:
                log.info("shutting down")
    finally:
        await runner.cleanup()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        access.close()
        restore_logging()
        store.close()


__all__ = [
    "CannotListen",
    "LISTEN_BACKLOG",
    "NOTHING_TO_RELOAD",
    "Listening",
    "Prepared",
    "run",
    "run_instance",
    "serve",
]
