"""`vttrelay serve`: the relay and the embedded demo world (`--no-world`: the relay alone),
one process or `--workers N`. Its settings (one table, serve_options.py) come from flags, the
environment and a TOML file (serve_settings.py) and become a `RelayConfig`; `vttrelay.server`
runs it. The hints it prints name the commands that find this relay's data again
(`serve_settings.command_options`)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from vttrelay.cli.common import err
from vttrelay.cli.serve_options import SERVE_OPTIONS
from vttrelay.cli.serve_settings import (
    SettingsError,
    add_arguments,
    command_options,
    render,
    resolve,
    serve_config,
)
from vttrelay.relay import tls
from vttrelay.relay.accesslog import setup_logging
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.forwarded import TrustedProxies


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
    try:
        settings = resolve(args, os.environ)
    except SettingsError as bad:
        err(f"vttrelay serve: {bad}")
        return 2
    if args.print_config:
        print(render(settings))
        return 0
    for setting in settings.values():  # the effective values, for whoever reads args
        setattr(args, setting.option.dest, setting.value)
    setup_logging(args.log_level, json=args.log_format == "json")
    config = serve_config(settings)
    config.command_options = command_options(settings)
    refused = deployment_refusal(config)
    if refused:
        err(f"vttrelay serve: {refused}")
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


def register(commands: Any) -> None:
    """Add `serve` to the `vttrelay` command: its options from the one table (serve_options.py)."""
    p = commands.add_parser("serve", help="run the relay (and the demo world)")
    add_arguments(p, SERVE_OPTIONS)
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the effective settings (flag > environment > file > default), each with "
        "where it came from, secrets masked, and exit",
    )
    p.set_defaults(func=cmd_serve)
