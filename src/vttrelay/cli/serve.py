"""`vttrelay serve`: the relay and the embedded demo world (`--no-world`: the relay alone),
one process or `--workers N`; its flags become a `RelayConfig` and `vttrelay.server` runs it."""

from __future__ import annotations

import argparse
import os
from typing import Any, Final

from vttrelay.cli.accounts import account_settings, add_serve_options
from vttrelay.cli.common import err, relay_config
from vttrelay.relay import tls
from vttrelay.relay.config import REDIS_URL_ENV, RelayConfig, normalize_base_path
from vttrelay.relay.forwarded import TrustedProxies

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
    ("activity_days", "activity_days"),
    ("activity_rows", "activity_max_rows"),
)


def serve_config(args: argparse.Namespace) -> RelayConfig:
    """The relay's settings from `vttrelay serve`'s flags (defaults where a flag is not given)."""
    config = relay_config(args, host=args.host, port=args.port)
    for flag, field_name in SERVE_OVERRIDES:
        value = getattr(args, flag)
        if value is not None:
            setattr(config, field_name, value)
    config.metrics_port = args.metrics_port
    config.sessions_enabled = not args.no_sessions
    config.auto_start_worlds = args.auto_start_worlds
    config.headless_allow = tuple(h.strip() for h in args.headless_allow.split(",") if h.strip())
    if args.session_idle is not None:
        config.session_idle_timeout = args.session_idle
        if args.session_idle > 0:  # swept often enough to end a session near its time
            config.session_sweep_interval = min(30.0, max(0.5, args.session_idle / 4))
    config.redis_url = args.redis or os.environ.get(REDIS_URL_ENV) or None
    config.accounts = account_settings(args)
    config.trusted_proxies = tuple(args.trusted_proxy)
    config.tls_cert, config.tls_key = args.tls_cert or "", args.tls_key or ""
    return config


def deployment_refusal(config: RelayConfig) -> str:
    """Why the proxy and TLS settings cannot be used (one line naming the setting), or ""."""
    try:
        TrustedProxies.parse(config.trusted_proxies)
    except ValueError as bad:
        return f"--trusted-proxy: {bad}"
    if bool(config.tls_cert) != bool(config.tls_key):
        return "--tls-cert and --tls-key go together"
    if config.tls_cert:
        try:
            tls.server_context(config.tls_cert, config.tls_key)
        except tls.TlsError as bad:
            return str(bad)
    return ""


def cmd_serve(args: argparse.Namespace) -> int:
    config = serve_config(args)
    refused = deployment_refusal(config)
    if refused:
        err(f"vttrelay serve: {refused}")
        return 2
    if args.workers < 1:
        err("vttrelay serve: --workers must be at least 1")
        return 2
    if args.workers > 1:
        from vttrelay.server.workers import WorkersError, serve_workers

        if config.sessions_enabled:  # each process would keep (and reap) sessions of its own
            err("vttrelay serve: sessions are turned off with --workers (one process only)")
            config.sessions_enabled = False

        try:
            return serve_workers(config, args.workers, not args.no_world, args.log_level)
        except WorkersError as refused:
            err(f"vttrelay serve: {refused}")
            return 2
    from vttrelay import server

    return server.run(config, with_world=not args.no_world)


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `serve` to the `vttrelay` command."""
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
        "--auto-start-worlds",
        action="store_true",
        help="a request to an offline stored world of the caller's account (vttrelay world "
        "create) starts it, stopped again when idle (default off)",
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
    p.add_argument(
        "--activity-days",
        type=float,
        default=None,
        help="days the activity log keeps each API call (default 14; 0: record none)",
    )
    p.add_argument(
        "--activity-rows",
        type=int,
        default=None,
        help="API calls the activity log keeps at most (default 200000; the oldest go first)",
    )
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
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy (address or network, e.g. 127.0.0.1 or 10.0.0.0/8; repeat or "
        "comma-separate) whose X-Forwarded-For/-Proto/-Host (or Forwarded) name the client; "
        "nobody else's are believed (default none)",
    )
    p.add_argument(
        "--tls-cert",
        default=None,
        metavar="PEM",
        help="serve HTTPS and wss:// with this certificate chain (with --tls-key); both files "
        "are read again on SIGHUP, so a renewed certificate needs no restart",
    )
    p.add_argument("--tls-key", default=None, metavar="PEM", help="the private key of --tls-cert")
    p.add_argument(
        "--signin-rate",
        type=int,
        default=None,
        help="dashboard sign-in attempts per IP per 15 minutes (default 10; 0: off)",
    )
    add_serve_options(p)  # --signup, --public-url, --smtp-*, the /auth per-IP limits
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
