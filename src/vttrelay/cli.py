"""The `vttrelay` command: serve, pair, keys and tokens (list/revoke), the world's subcommands.

`pair requests|approve|refuse` and `keys requests|approve|refuse` decide the pair requests of a
module's Pair button and the API-key requests of apps (`relay.approvals`); they write the same
database as a running relay, which sees each decision on the asker's next poll.

Every command takes `--data-dir` (default `$VTTRELAY_DATA_DIR`, else `./data`) and `--database`
(a `postgresql://` URL shared by several relay instances; default `$VTTRELAY_DATABASE_URL`, else
the SQLite file `relay.db` in the data dir). Results a script
may capture (a new key, a pairing code) go to stdout alone on their line; everything else goes
to stderr. `vttrelay.world.commands.register` adds the `world ...` commands; `serve` starts
`vttrelay.world.embedded` unless `--no-world`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import re
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeVar

from aiohttp import web

from vttrelay import __version__
from vttrelay.mcp import stdio as mcp_stdio
from vttrelay.relay import approvals
from vttrelay.relay.accesslog import LOG_FORMAT, BufferedAccessLog
from vttrelay.relay.config import (
    DATA_DIR_ENV,
    DATABASE_ENV,
    REDIS_URL_ENV,
    RelayConfig,
    default_data_dir,
    normalize_base_path,
)
from vttrelay.relay.core import RelayError
from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES
from vttrelay.relay.store import DEFAULT_ACCOUNT, PAIRING_TTL, RelayStore
from vttrelay.sessions.catalog import CatalogError, WorldCatalog
from vttrelay.sessions.manager import RelayHooks, SessionConfig, SessionManager
from vttrelay.world import commands as world_commands

log = logging.getLogger("vttrelay")
T = TypeVar("T")

SERVE_KEY_SETTING = "serve.key_id"
EMBEDDED_TOKEN_NAME = "embedded world"
EMBEDDED_CLIENT_ID = "vttrelay-demo"
# Listen backlog: aiohttp's default (128) drops the SYNs of a burst of connects while the relay
# is busy, and those clients stall a second or more (bench/RESULTS.md); at 1024, wrk opening 1,000
# connections at once still overflowed it (414 dropped SYNs, p99 3.6 s). Linux caps it at somaxconn.
LISTEN_BACKLOG = 4096
# The demo key: the defaults plus what trying the demo world needs (rolls, effects, folders,
# macros, chat, scripts).
SERVE_SCOPES = (
    *DEFAULT_SCOPES,
    "chat:write",
    "execute-js",
    "roll:execute",
    "effects:write",
    "structure:write",
    "macro:execute",
)
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_expiry(text: str, now: float | None = None) -> float:
    """`30d`, `12h`, `15m`, `90s`, `2w` from now, or an ISO 8601 date/time (UTC if naive)."""
    now = time.time() if now is None else now
    match = _DURATION.match(text.strip().lower())
    if match:
        return now + float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a duration (30d, 12h, 15m) or an ISO date/time: {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _scope(text: str) -> str:
    if text not in ALL_SCOPES:
        raise argparse.ArgumentTypeError(
            f"unknown scope {text!r}; known scopes: {', '.join(ALL_SCOPES)}"
        )
    return text


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir) if args.data_dir else default_data_dir()


def _config(args: argparse.Namespace, **settings: Any) -> RelayConfig:
    """The relay settings the common options give (data dir, database) and `settings`."""
    config = RelayConfig(data_dir=_data_dir(args), **settings)
    config.database = getattr(args, "database", None) or os.environ.get(DATABASE_ENV) or ""
    return config


def _open_store(args: argparse.Namespace) -> RelayStore:
    return RelayStore(_config(args).store_target)


def _err(*parts: Any) -> None:
    print(*parts, file=sys.stderr)


def _iso(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# Commands ------------------------------------------------------------------------------------


def _decided(code: str, decide: Callable[[], T]) -> T | None:
    """Run one approve/refuse call of a request; on a refusal print its message with the
    request's code and return None (the command then exits 1)."""
    try:
        return decide()
    except RelayError as refused:
        _err(f"{refused.message} ({code}).")
        return None


def cmd_pair(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        code = store.create_pairing_code(args.account)
    print(code)
    _err(
        f"Pairing code for account {args.account!r}: single use, valid "
        f"{int(PAIRING_TTL // 60)} minutes. Enter it in the world's connection dialog."
    )
    return 0


def cmd_pair_requests(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        requests = approvals.pair_requests(store, pending_only=not args.all)
    now = time.time()
    header = ("CODE", "STATUS", "KIND", "CLIENT", "SYSTEM", "FOUNDRY", "FROM", "EXPIRES", "WORLD")
    rows = [
        (
            r.code,
            r.state(now),
            "upgrade" if r.ask.upgrade_only else "pair",
            r.ask.client_id or "-",
            " ".join(filter(None, (r.ask.system_id, r.ask.system_version))) or "-",
            r.ask.foundry_version or "-",
            r.peer or "-",
            _iso(r.expires_at),
            f"{r.ask.world} ({r.ask.world_id})" if r.ask.world_title else r.ask.world_id,
        )
        for r in requests
    ]
    _table(header, rows, empty="No pending pair requests." if not args.all else "No pair requests.")
    return 0


def cmd_pair_approve(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        request = approvals.get_pair_request(store, args.code)
        account = args.account
        if request is not None and request.ask.upgrade_only and args.account is None:
            world = store.known_client(request.ask.client_id)
            account = world.account if world is not None else None
        done = _decided(
            args.code,
            lambda: approvals.approve_pair_request(store, args.code, account or DEFAULT_ACCOUNT),
        )
    if done is None:
        return 1
    ask = done.request.ask
    if done.upgraded:
        _err(
            f"Approved the upgrade of world {ask.world!r} ({ask.client_id}): "
            "the module confirms on its next poll."
        )
    else:
        _err(
            f"Approved pair request {done.request.code} of world {ask.world!r} for account "
            f"{account or DEFAULT_ACCOUNT!r}: the module receives its pairing code on its next "
            "poll and connects."
        )
    return 0


def cmd_pair_refuse(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        request = _decided(args.code, lambda: approvals.refuse_pair_request(store, args.code))
    if request is None:
        return 1
    _err(f"Refused pair request {request.code} of world {request.ask.world!r}.")
    return 0


def cmd_keys_requests(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        requests = approvals.key_requests(store, pending_only=not args.all)
    now = time.time()
    header = ("CODE", "STATUS", "FLOW", "CLIENTS", "FROM", "EXPIRES", "SCOPES", "APP")
    rows = [
        (
            r.code,
            r.state(now),
            "web" if r.ask.callback_url else "device",
            ",".join(r.ask.client_ids) or "*",
            r.peer or "-",
            _iso(r.expires_at),
            ",".join(r.ask.scopes),
            " ".join(filter(None, (r.ask.app_name, r.ask.app_url and f"<{r.ask.app_url}>"))),
        )
        for r in requests
    ]
    _table(header, rows, empty="No pending key requests." if not args.all else "No key requests.")
    return 0


def cmd_keys_approve(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        done = _decided(
            args.code,
            lambda: approvals.approve_key_request(
                store,
                args.code,
                args.account,
                scopes=tuple(args.scope) if args.scope else None,
                client_ids=tuple(args.client) if args.client else None,
                expires_at=args.expires,
                rate_per_minute=args.rate,
                user_id=args.user,
            ),
        )
    if done is None:
        return 1
    ask = done.request.ask
    _err(
        f"Approved key request {done.request.code} of {ask.app_name!r}: API key {done.key_id} "
        f"(account {args.account!r}, scopes: {', '.join(done.scopes)})."
    )
    if done.exchange_code is None:
        _err("The app receives the key on its next status poll (shown once).")
        return 0
    print(done.exchange_code)
    callback = f"{ask.callback_url}{'&' if '?' in ask.callback_url else '?'}code="
    _err(
        "Give the app this one-time exchange code (valid "
        f"{int(approvals.EXCHANGE_TTL // 60)} minutes), or open {callback}{done.exchange_code}"
    )
    return 0


def cmd_keys_refuse(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        request = _decided(args.code, lambda: approvals.refuse_key_request(store, args.code))
    if request is None:
        return 1
    _err(f"Refused key request {request.code} of {request.ask.app_name!r}.")
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    scopes = tuple(args.scope) if args.scope else DEFAULT_SCOPES
    with closing(_open_store(args)) as store:
        key_id, secret = store.create_key(
            args.account,
            scopes,
            client_ids=tuple(args.client or ()),
            user_id=args.user,
            expires_at=args.expires,
            rate_per_minute=args.rate,
            name=args.name,
        )
    print(secret)
    _err(
        f"Created API key {key_id} (account {args.account!r}, scopes: {', '.join(scopes)}). "
        "The key is shown only once."
    )
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        keys = store.list_keys(args.account)
    header = (
        "ID",
        "ACCOUNT",
        "NAME",
        "STATE",
        "RATE",
        "REQUESTS",
        "EXPIRES",
        "CLIENTS",
        "USER",
        "SCOPES",
    )
    now = time.time()
    rows = [
        (
            key.id,
            key.account,
            key.name or "-",
            "revoked" if not key.enabled else "expired" if key.expired(now) else "active",
            str(key.rate_per_minute) if key.rate_per_minute is not None else "default",
            str(key.request_count),
            _iso(key.expires_at),
            ",".join(key.client_ids) or "*",
            key.user_id or "-",
            ",".join(key.scopes),
        )
        for key in keys
    ]
    _table(header, rows, empty="No API keys.")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        key = store.get_key(args.key_id)
        revoked = store.revoke_key(args.key_id)
    if key is None:
        _err(f"No API key {args.key_id!r}.")
        return 1
    if not revoked:
        _err(f"API key {args.key_id} was already revoked.")
    else:
        _err(f"Revoked API key {args.key_id}; running relays stop accepting it within seconds.")
    return 0


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], empty: str) -> None:
    """Print the rows under their header as left-aligned columns (the last column is not
    padded), or `empty` on stderr when there are no rows."""
    if not rows:
        _err(empty)
        return
    lines = [header, *rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(header) - 1)]
    for row in lines:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])


def cmd_tokens_list(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        tokens = store.list_tokens(args.account)
    header = ("ID", "ACCOUNT", "CLIENT", "STATE", "CREATED", "REVOKED", "IP ALLOW", "NAME")
    rows = [
        (
            token.id,
            token.account,
            token.client_id,
            "revoked" if token.revoked_at is not None else "active",
            _iso(token.created_at),
            _iso(token.revoked_at),
            token.ip_allow or "*",
            token.name or "-",
        )
        for token in tokens
    ]
    _table(header, rows, empty="No connection tokens.")
    return 0


def cmd_tokens_revoke(args: argparse.Namespace) -> int:
    with closing(_open_store(args)) as store:
        token = store.get_token(args.token_id)
        revoked = store.revoke_token_id(args.token_id)
    if token is None:
        _err(f"No connection token {args.token_id!r}.")
        return 1
    if not revoked:
        _err(f"Connection token {args.token_id} was already revoked.")
    else:
        _err(
            f"Revoked connection token {args.token_id} (world {token.client_id}); a running relay "
            "closes its socket (4002 Connection token revoked) at its next token check (5 s)."
        )
    return 0


def serve_scope(config: RelayConfig) -> str:
    """What tells this `serve` apart from the others on its store: "" for its own data dir's
    file; on a `--database` several instances share, " @host:port", so that one instance's
    start-up does not revoke the key and embedded-world token another one printed."""
    return f" @{socket.gethostname()}:{config.port}" if config.database else ""


def mint_serve_key(store: RelayStore, config: RelayConfig) -> str:
    """A fresh key for `serve` (SERVE_SCOPES); revokes the last one of this instance."""
    scope = serve_scope(config)
    previous = store.get_setting(SERVE_KEY_SETTING + scope)
    if previous:
        store.revoke_key(previous)
    key_id, secret = store.create_key(DEFAULT_ACCOUNT, SERVE_SCOPES, name="serve" + scope)
    store.set_setting(SERVE_KEY_SETTING + scope, key_id)
    return secret


def reserve_embedded_id(store: RelayStore, config: RelayConfig) -> str:
    """A fresh connection token for the embedded world (this instance's last one is revoked);
    its id becomes the only token that may connect as EMBEDDED_CLIENT_ID here
    (`RelayConfig.reserved_client_ids`)."""
    name = EMBEDDED_TOKEN_NAME + serve_scope(config)
    store.revoke_tokens_named(DEFAULT_ACCOUNT, name)
    token = store.create_connection_token(DEFAULT_ACCOUNT, EMBEDDED_CLIENT_ID, name=name)
    record = store.token_by_secret(token)
    assert record is not None
    config.reserved_client_ids[EMBEDDED_CLIENT_ID] = record.id
    return token


@dataclass(frozen=True)
class Prepared:
    """What `serve` does once, before any relay process listens: the API key it prints, the
    embedded world's connection token (None: no embedded world) and the operator's dashboard
    sign-in token it prints as a link."""

    api_key: str
    world_token: str | None
    signin_token: str  # the operator's one-time dashboard sign-in token


def prepare(store: RelayStore, config: RelayConfig, with_world: bool) -> Prepared:
    """Mint the serve key and a dashboard sign-in token and, with the embedded world, reserve its
    id for a fresh token, before the relay listens: no other token can take the id, not even
    while the world (re)connects. Sets `config.reserved_client_ids` (`vttrelay serve --workers`
    passes it to every worker)."""
    token = reserve_embedded_id(store, config) if with_world else None
    if token is None:
        config.reserved_client_ids[EMBEDDED_CLIENT_ID] = None
    from vttrelay.dashboard.sessions import issue_signin_token

    signin = issue_signin_token(store, None, config.signin_token_ttl)
    return Prepared(mint_serve_key(store, config), token, signin)


async def serve(config: RelayConfig, with_world: bool, ready: asyncio.Event | None = None) -> None:
    """Run the relay (and the embedded world) until SIGINT/SIGTERM."""
    store = RelayStore(config.store_target)
    prepared = prepare(store, config, with_world)
    await run_instance(config, store, prepared, ready=ready.set if ready is not None else None)


def cmd_world_create(args: argparse.Namespace) -> int:
    config = _config(args)
    catalog = WorldCatalog(Path(config.data_dir) / "sessions" / "worlds")
    try:
        world = catalog.create(args.account, args.name)
    except CatalogError as exc:
        _err(f"vttrelay world create: {exc.text}")
        return 1
    print(
        f"Created world {world.name!r} (client id {world.client_id}) for account "
        f'{args.account!r}; POST /start-session with {{"worldName": "{world.name}"}} starts it.'
    )
    return 0


def session_manager(config: RelayConfig, store: RelayStore) -> SessionManager | None:
    """The session routes' manager (sessions started worlds connect back to this relay), or
    None when sessions are turned off."""
    if not config.sessions_enabled:
        return None

    async def mint(account: str, client_id: str, name: str) -> str:
        return await asyncio.to_thread(store.create_connection_token, account, client_id, name=name)

    async def revoke(secret: str) -> None:
        await asyncio.to_thread(store.revoke_token, secret)

    async def find_client(account: str, world: str) -> str | None:
        wanted = world.casefold()
        for known in await asyncio.to_thread(store.known_clients, account):
            names = (
                known.client_id,
                known.metadata.get("worldId"),
                known.metadata.get("worldTitle"),
            )
            if any(isinstance(n, str) and n.casefold() == wanted for n in names):
                return known.client_id
        return None

    settings = SessionConfig(
        data_dir=Path(config.data_dir),
        headless_allow=config.headless_allow,
        max_per_account=config.max_sessions,
        idle_timeout=config.session_idle_timeout,
    )
    hooks = RelayHooks(mint, revoke, lambda client_id, account: False, find_client=find_client)
    return SessionManager(settings, hooks)


async def run_instance(
    config: RelayConfig,
    store: RelayStore,
    prepared: Prepared,
    *,
    ready: Callable[[], None] | None = None,
    announce: bool = True,
    reuse_port: bool = False,
) -> None:
    """One relay process until SIGINT/SIGTERM: the app on `config.host:port` (with
    `reuse_port`, beside other processes on the same port: `--workers`), the embedded world when
    `prepared` has its token, the "listening" lines on stdout when `announce`; `ready()` is
    called once it serves. Closes `store` at the end."""
    from vttrelay.relay.app import STATE, create_app
    from vttrelay.relay.listener import RelaySite, connection_limit, make_runner, raise_fd_limit
    from vttrelay.world.embedded import start_in_thread

    # SIGINT/SIGTERM from now on stop the relay cleanly, also one that comes during start-up
    # (it then stops as soon as it has started: it leaves a shared directory properly)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    access = BufferedAccessLog(sys.stderr)  # request lines written in batches (accesslog.py)
    sessions = session_manager(config, store)
    app = create_app(config, store, access, sessions=sessions)
    if sessions is not None:
        registry = app[STATE].registry

        def is_live(client_id: str, account: str) -> bool:
            world = registry.get(client_id)
            return world is not None and world.account == account

        sessions.hooks.is_live = is_live
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
    )
    await site.start()
    if config.redis_url:  # scaled out: the link port's sockets count against the limit too
        from vttrelay.relay.backends.redis_directory import RedisDirectory

        if isinstance(registry := app[STATE].registry, RedisDirectory):
            registry.count_links_in(site.gate)
    port = site.port
    log.info("open files limit %d; at most %d connections", fd_limit, max_connections)
    local_host = "127.0.0.1" if config.host in ("0.0.0.0", "", "::") else config.host
    base = f"http://{local_host}:{port}"
    if sessions is not None:
        sessions.hooks.relay_url = f"ws://{local_host}:{port}/relay"

    metrics_runner = await serve_metrics(app, config) if config.metrics_port is not None else None

    world = None
    if prepared.world_token is not None:
        world = await start_in_thread(
            f"ws://{local_host}:{port}/relay", prepared.world_token, config.data_dir
        )

    if announce:
        announce_listening(base, prepared, config, with_world=world is not None)
    log.info("docs at %s/docs; data in %s", base, config.data_dir)

    # Start-up objects (modules, routes, the world's documents) never become garbage: frozen, the
    # cyclic collector no longer walks them in its full collections (bench/RESULTS.md).
    gc.collect()
    gc.freeze()
    if ready is not None:
        ready()
    try:
        await stop.wait()
    finally:
        log.info("shutting down")
        if world is not None:
            with contextlib.suppress(Exception):
                await world.stop()
        await runner.cleanup()
        if metrics_runner is not None:
            await metrics_runner.cleanup()
        access.close()
        store.close()


def dashboard_link(store: RelayStore, url: str, account: str | None, ttl: float) -> str:
    """A one-time dashboard sign-in link: `url` (the relay's base URL as a browser reaches it,
    path prefix included) with a new sign-in token of the operator (`account` None) or of one
    account's owner."""
    from vttrelay.dashboard.sessions import issue_signin_token

    return signin_url(url, issue_signin_token(store, account, ttl))


def signin_url(url: str, token: str) -> str:
    """The dashboard sign-in link of `token` under `url` (a base URL, path prefix included)."""
    return f"{url.rstrip('/')}/dashboard/signin?token={token}"


def cmd_dashboard_link(args: argparse.Namespace) -> int:
    store = _open_store(args)
    try:
        ttl = parse_expiry(args.ttl) - time.time()
        print(dashboard_link(store, args.url, args.account, ttl))
    finally:
        store.close()
    who = f"the owner of account {args.account}" if args.account else "the operator"
    _err(f"Signs in {who}; works once, within {args.ttl}.")
    return 0


async def serve_metrics(app: web.Application, config: RelayConfig) -> web.AppRunner:
    """Serve the app's `GET /metrics` alone on `config.metrics_port` (its own port, when
    several processes share the main one); logs where."""
    from vttrelay.relay.app import STATE
    from vttrelay.relay.metrics import metrics_app

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


def announce_listening(
    base: str, prepared: Prepared, config: RelayConfig, *, with_world: bool, workers: int = 1
) -> None:
    """The lines `vttrelay serve` prints once it listens: where, the key, a ready curl line and
    the operator's one-time dashboard sign-in link."""
    path = "/world-info" if with_world else "/clients"
    processes = f" ({workers} worker processes)" if workers > 1 else ""
    key = prepared.api_key
    print(f"vttrelay {__version__} listening on {base}{processes}", flush=True)
    print(f"API key: {key}", flush=True)
    print(f'Try: curl -H "x-api-key: {key}" {base}{path}', flush=True)
    if config.base_path:  # reached through a reverse proxy that strips the prefix
        link = signin_url(config.base_path, prepared.signin_token)
        print(f"Dashboard (through your proxy's origin): {link}", flush=True)
    else:
        print(f"Dashboard: {signin_url(base, prepared.signin_token)}", flush=True)


# `vttrelay serve` flags that override a RelayConfig field when given: (flag, field)
SERVE_OVERRIDES: Final = (
    ("rate", "rate_per_minute"),
    ("max_body_mb", "max_body_mb"),
    ("subscription_linger", "subscription_linger"),
    ("max_connections", "max_connections"),
    ("header_timeout", "header_timeout"),
    ("idle_timeout", "idle_timeout"),
    ("body_timeout", "body_timeout"),
    ("key_request_rate", "key_request_rate_limit"),
    ("code_miss_rate", "code_miss_limit"),
    ("heartbeat_ttl", "heartbeat_ttl"),
    ("base_path", "base_path"),
    ("signin_rate", "signin_rate_limit"),
)


def serve_config(args: argparse.Namespace) -> RelayConfig:
    """The relay's settings from `vttrelay serve`'s flags (defaults where a flag is not given)."""
    config = _config(args, host=args.host, port=args.port)
    for flag, field_name in SERVE_OVERRIDES:
        value = getattr(args, flag)
        if value is not None:
            setattr(config, field_name, value)
    config.metrics_port = args.metrics_port
    config.sessions_enabled = not args.no_sessions
    config.headless_allow = tuple(h.strip() for h in args.headless_allow.split(",") if h.strip())
    if args.session_idle is not None:
        config.session_idle_timeout = args.session_idle
        if args.session_idle > 0:  # swept often enough to end a session near its time
            config.session_sweep_interval = min(30.0, max(0.5, args.session_idle / 4))
    config.redis_url = args.redis or os.environ.get(REDIS_URL_ENV) or None
    return config


def cmd_serve(args: argparse.Namespace) -> int:
    config = serve_config(args)
    if args.workers < 1:
        _err("vttrelay serve: --workers must be at least 1")
        return 2
    if args.workers > 1:
        from vttrelay.workers import WorkersError, serve_workers

        try:
            return serve_workers(config, args.workers, not args.no_world, args.log_level)
        except WorkersError as refused:
            _err(f"vttrelay serve: {refused}")
            return 2
    runner_factory: Any = None
    try:
        import uvloop

        runner_factory = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        pass
    from vttrelay.relay.backends import BackendUnavailable

    with asyncio.Runner(loop_factory=runner_factory) as runner:
        try:
            runner.run(serve(config, with_world=not args.no_world))
        except BackendUnavailable as exc:
            _err(f"vttrelay: {exc}")
            return 1
    return 0


# Parser --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        default=None,
        help=f"where the relay keeps its database (default ${DATA_DIR_ENV}, else ./data)",
    )
    common.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="the relay's store: a postgresql://user:password@host:port/dbname URL that several "
        f"relay instances share (default ${DATABASE_ENV}, else relay.db in the data dir)",
    )
    common.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")

    parser = argparse.ArgumentParser(
        prog="vttrelay", description="HTTP relay for virtual tabletop worlds."
    )
    parser.add_argument("--version", action="version", version=f"vttrelay {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = commands.add_parser("serve", parents=[common], help="run the relay (and the demo world)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3010)
    p.add_argument("--no-world", action="store_true", help="run the relay alone")
    p.add_argument(
        "--no-sessions",
        action="store_true",
        help="turn the session routes off (they answer as the reference's with headless off)",
    )
    p.add_argument(
        "--headless-allow",
        default="",
        metavar="HOSTS",
        help="comma-separated Foundry hosts (host or host:port) browser sessions may open "
        "(default none)",
    )
    p.add_argument(
        "--session-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="end a session after this long without a forwarded request (default 600; 0: never)",
    )
    p.add_argument("--rate", type=int, default=None, help="requests per minute per key (0: off)")
    p.add_argument("--max-body-mb", type=float, default=None, help="largest request body")
    p.add_argument(
        "--subscription-linger",
        type=float,
        default=None,
        help="seconds a world keeps sending a channel's events after its last subscriber "
        "leaves, so a reconnecting client misses nothing (default 30; 0: stop at once)",
    )
    p.add_argument(
        "--key-request-rate",
        type=int,
        default=None,
        help="pair/key requests and key exchanges per IP per 15 minutes (default 20, as the "
        "reference relay; 0: off)",
    )
    p.add_argument(
        "--code-miss-rate",
        type=int,
        default=None,
        help="unknown pair/key request codes an IP may look up per 15 minutes; polling a code "
        "that exists is free (default 10; 0: off)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=None,
        help="open connections past which new ones get 503 (default 10000, kept below the "
        "open-files limit)",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=None,
        help="seconds a new connection has to send its first request's headers (default 10)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="seconds a keep-alive connection may wait for its next request (default 30)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=None,
        help="seconds a request's body may take to arrive, else 408 (default 60)",
    )
    p.add_argument(
        "--redis",
        default=None,
        metavar="URL",
        help=f"share worlds with the other relay instances on this Redis (redis://host:port/db; "
        f"default ${REDIS_URL_ENV}; none: this process alone)",
    )
    p.add_argument(
        "--heartbeat-ttl",
        type=float,
        default=None,
        help="with --redis: seconds without a heartbeat after which an instance is dead and its "
        "worlds are released (default 3)",
    )
    p.add_argument(
        "--base-path",
        type=normalize_base_path,
        default=None,
        help="the path prefix a reverse proxy serves the relay under, e.g. /vtt (the proxy "
        "strips it); links the relay writes (dashboard, pairUrl, relayUrl) start with it",
    )
    p.add_argument(
        "--signin-rate",
        type=int,
        default=None,
        help="dashboard sign-in attempts per IP per 15 minutes (default 10; 0: off)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="run N relay processes sharing the port (SO_REUSEPORT), one per core; needs "
        "--redis, through which they share worlds, events and limits (default 1)",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="PORT",
        help="also serve GET /metrics alone on this port; with --workers N, worker i on PORT+i "
        "(0: a free port each, logged)",
    )
    p.set_defaults(func=cmd_serve)

    p = commands.add_parser(
        "dashboard-link", parents=[common], help="print a one-time dashboard sign-in link"
    )
    p.add_argument(
        "--url",
        default="http://127.0.0.1:3010",
        help="the relay's base URL as your browser reaches it, path prefix included "
        "(default http://127.0.0.1:3010)",
    )
    p.add_argument(
        "--account",
        default=None,
        help="sign in as the owner of this account only (default: the operator, who sees all)",
    )
    p.add_argument("--ttl", default="1h", help="how long the link stays valid (default 1h)")
    p.set_defaults(func=cmd_dashboard_link)

    # Subcommands of a command that takes the common options itself must not reset them.
    sub_common = argparse.ArgumentParser(add_help=False)
    sub_common.add_argument("--data-dir", default=argparse.SUPPRESS, help="as for the command")
    sub_common.add_argument("--database", default=argparse.SUPPRESS, help="as for the command")
    sub_common.add_argument("--log-level", default=argparse.SUPPRESS, help="as for the command")

    pair = commands.add_parser(
        "pair",
        parents=[common],
        help="print a pairing code for a world; decide the Pair button's requests",
        description="Without an action: print a single-use pairing code. With one: list, "
        "approve or refuse the requests of the module's Pair and Upgrade buttons.",
    )
    pair.add_argument("--account", default=DEFAULT_ACCOUNT)
    pair.set_defaults(func=cmd_pair)
    pair_commands = pair.add_subparsers(dest="pair_command", metavar="ACTION")
    p = pair_commands.add_parser(
        "requests", parents=[sub_common], help="list pending pair requests (who asks)"
    )
    p.add_argument("--all", action="store_true", help="also decided and expired ones")
    p.set_defaults(func=cmd_pair_requests)
    p = pair_commands.add_parser(
        "approve", parents=[sub_common], help="approve a pair request: the world gets a token"
    )
    p.add_argument("code", help="the request's code (on the page the module opened)")
    p.add_argument(
        "--account",
        default=None,
        help="the account the world joins (default 'default'; an upgrade: the world's own)",
    )
    p.set_defaults(func=cmd_pair_approve)
    p = pair_commands.add_parser("refuse", parents=[sub_common], help="refuse a pair request")
    p.add_argument("code")
    p.set_defaults(func=cmd_pair_refuse)

    keys = commands.add_parser("keys", help="manage API keys")
    key_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    p = key_commands.add_parser("create", parents=[common], help="create a key, print it once")
    p.add_argument("--scope", action="append", type=_scope, help="a scope (repeatable)")
    p.add_argument("--client", action="append", help="allowed world client id (repeatable)")
    p.add_argument("--user", default=None, help="userId forced on every call")
    p.add_argument("--expires", type=parse_expiry, default=None, help="ISO date/time or 30d")
    p.add_argument("--rate", type=int, default=None, help="requests per minute (0: unlimited)")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.add_argument("--name", default="")
    p.set_defaults(func=cmd_keys_create)
    p = key_commands.add_parser("list", parents=[common], help="list keys (never the secrets)")
    p.add_argument("--account", default=None)
    p.set_defaults(func=cmd_keys_list)
    p = key_commands.add_parser("revoke", parents=[common], help="revoke a key by its id")
    p.add_argument("key_id")
    p.set_defaults(func=cmd_keys_revoke)
    p = key_commands.add_parser(
        "requests", parents=[common], help="list pending API-key requests of apps"
    )
    p.add_argument("--all", action="store_true", help="also decided and expired ones")
    p.set_defaults(func=cmd_keys_requests)
    p = key_commands.add_parser(
        "approve", parents=[common], help="approve an app's key request: create its key"
    )
    p.add_argument("code", help="the request's code (on the page the app opened)")
    p.add_argument(
        "--scope", action="append", type=_scope, help="grant only these requested scopes"
    )
    p.add_argument("--client", action="append", help="allowed world (default: those asked)")
    p.add_argument("--user", default=None, help="userId forced on every call")
    p.add_argument("--expires", type=parse_expiry, default=None, help="ISO date/time or 30d")
    p.add_argument("--rate", type=int, default=None, help="requests per minute (0: unlimited)")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.set_defaults(func=cmd_keys_approve)
    p = key_commands.add_parser("refuse", parents=[common], help="refuse an app's key request")
    p.add_argument("code")
    p.set_defaults(func=cmd_keys_refuse)

    tokens = commands.add_parser("tokens", help="manage world connection tokens")
    token_commands = tokens.add_subparsers(dest="tokens_command", required=True, metavar="ACTION")
    p = token_commands.add_parser("list", parents=[common], help="list connection tokens")
    p.add_argument("--account", default=None)
    p.set_defaults(func=cmd_tokens_list)
    p = token_commands.add_parser(
        "revoke", parents=[common], help="revoke a token by its id; its world is disconnected"
    )
    p.add_argument("token_id")
    p.set_defaults(func=cmd_tokens_revoke)

    world_actions = world_commands.register(commands, common)
    p = world_actions.add_parser(
        "create",
        parents=[common],
        help="store an embedded world for an account on this relay (POST /start-session with "
        "worldName starts it)",
    )
    p.add_argument("name")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.set_defaults(func=cmd_world_create)
    mcp_stdio.register(commands)
    return parser


def setup_logging(level: str) -> None:
    """Log lines to stderr in `LOG_FORMAT` from `level` (DEBUG, INFO, WARNING...) up."""
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO), format=LOG_FORMAT, stream=sys.stderr
    )
    logging.getLogger("yoyo").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(str(getattr(args, "log_level", "INFO")))
    result: int = args.func(args)
    return result
