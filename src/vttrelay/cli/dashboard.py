"""`vttrelay dashboard-link`: a one-time sign-in link to the web dashboard, for the relay the
common options name (`--config`, `--data-dir`, `--database`, the `VTTRELAY_*` environment:
resolved as `vttrelay serve` resolves them) at its URL (`--url`, else the one those settings
give, as `serve` prints it)."""

from __future__ import annotations

import argparse
import time
from contextlib import closing
from typing import Any

from vttrelay.cli.common import err, expiry, link_base, open_store


def cmd_dashboard_link(args: argparse.Namespace) -> int:
    from vttrelay.server.prepare import dashboard_link

    url = link_base(args)
    with closing(open_store(args)) as store:
        ttl = expiry(args.ttl) - time.time()
        print(dashboard_link(store, url, args.account, ttl))
    who = f"the owner of account {args.account}" if args.account else "the operator"
    err(f"Signs in {who}; works once, within {args.ttl}.")
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `dashboard-link` to the `vttrelay` command."""
    p = commands.add_parser(
        "dashboard-link", parents=[common], help="print a one-time dashboard sign-in link"
    )
    p.add_argument(
        "--url",
        default=None,
        help="the relay's base URL as your browser reaches it, path prefix included (default: "
        "the settings' public-url, else their base-path, else http://HOST:PORT of their host "
        "and port: the URL `vttrelay serve` with the same --config and environment prints)",
    )
    p.add_argument(
        "--account",
        default=None,
        help="sign in as the owner of this account only (default: the operator, who sees all)",
    )
    p.add_argument("--ttl", default="1h", help="how long the link stays valid (default 1h)")
    p.set_defaults(func=cmd_dashboard_link)
