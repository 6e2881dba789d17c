"""`vttrelay tokens list|revoke|purge`: the connection tokens worlds connect with."""

from __future__ import annotations

import argparse
from contextlib import closing
from typing import Any

from vttrelay.cli.common import err, iso, open_store, table


def cmd_tokens_list(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        tokens = [t for t in store.list_tokens(args.account) if args.all or t.revoked_at is None]
    header = ("ID", "ACCOUNT", "CLIENT", "STATE", "CREATED", "REVOKED", "IP ALLOW", "NAME")
    rows = [
        (
            token.id,
            token.account,
            token.client_id,
            "revoked" if token.revoked_at is not None else "active",
            iso(token.created_at),
            iso(token.revoked_at),
            token.ip_allow or "*",
            token.name or "-",
        )
        for token in tokens
    ]
    table(header, rows, empty="No connection tokens.")
    return 0


def cmd_tokens_purge(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        removed = store.purge_revoked_tokens(args.account)
    err(f"Removed {removed} revoked connection token(s).")
    return 0


def cmd_tokens_revoke(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        token = store.get_token(args.token_id)
        revoked = store.revoke_token_id(args.token_id)
    if token is None:
        err(f"No connection token {args.token_id!r}.")
        return 1
    if not revoked:
        err(f"Connection token {args.token_id} was already revoked.")
    else:
        err(
            f"Revoked connection token {args.token_id} (world {token.client_id}); a running relay "
            "closes its socket (4002 Connection token revoked) at its next token check (5 s)."
        )
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `tokens list|revoke|purge` to the `vttrelay` command."""
    tokens = commands.add_parser("tokens", help="manage world connection tokens")
    token_commands = tokens.add_subparsers(dest="tokens_command", required=True, metavar="ACTION")
    p = token_commands.add_parser("list", parents=[common], help="list connection tokens")
    p.add_argument("--account", default=None)
    p.add_argument("--all", action="store_true", help="also revoked tokens")
    p.set_defaults(func=cmd_tokens_list)
    p = token_commands.add_parser("purge", parents=[common], help="remove revoked tokens for good")
    p.add_argument("--account", default=None, help="only this account's")
    p.set_defaults(func=cmd_tokens_purge)
    p = token_commands.add_parser(
        "revoke", parents=[common], help="revoke a token by its id; its world is disconnected"
    )
    p.add_argument("token_id")
    p.set_defaults(func=cmd_tokens_revoke)
