"""`vttrelay pair`: print a pairing code for a world; `pair requests|approve|refuse` decide the
requests of a module's Pair and Upgrade buttons (`relay.accounts.pair_requests`). They write the
same database as a running relay, which sees each decision on the asker's next poll."""

from __future__ import annotations

import argparse
import time
from contextlib import closing
from typing import Any

from vttrelay.cli.common import decided, err, iso, open_store, table
from vttrelay.relay.accounts import pair_requests
from vttrelay.relay.store import DEFAULT_ACCOUNT, PAIRING_TTL


def cmd_pair(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        code = store.create_pairing_code(args.account)
    print(code)
    err(
        f"Pairing code for account {args.account!r}: single use, valid "
        f"{int(PAIRING_TTL // 60)} minutes. Enter it in the world's connection dialog."
    )
    return 0


def cmd_pair_requests(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        requests = pair_requests.pair_requests(store, pending_only=not args.all)
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
            iso(r.expires_at),
            f"{r.ask.world} ({r.ask.world_id})" if r.ask.world_title else r.ask.world_id,
        )
        for r in requests
    ]
    table(header, rows, empty="No pending pair requests." if not args.all else "No pair requests.")
    return 0


def cmd_pair_approve(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        request = pair_requests.get_pair_request(store, args.code)
        account = args.account
        if request is not None and request.ask.upgrade_only and args.account is None:
            world = store.known_client(request.ask.client_id)
            account = world.account if world is not None else None
        done = decided(
            args.code,
            lambda: pair_requests.approve_pair_request(
                store, args.code, account or DEFAULT_ACCOUNT
            ),
        )
    if done is None:
        return 1
    ask = done.request.ask
    if done.upgraded:
        err(
            f"Approved the upgrade of world {ask.world!r} ({ask.client_id}): "
            "the module confirms on its next poll."
        )
    else:
        err(
            f"Approved pair request {done.request.code} of world {ask.world!r} for account "
            f"{account or DEFAULT_ACCOUNT!r}: the module receives its pairing code on its next "
            "poll and connects."
        )
    return 0


def cmd_pair_refuse(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        request = decided(args.code, lambda: pair_requests.refuse_pair_request(store, args.code))
    if request is None:
        return 1
    err(f"Refused pair request {request.code} of world {request.ask.world!r}.")
    return 0


def register(
    commands: Any, common: argparse.ArgumentParser, sub_common: argparse.ArgumentParser
) -> None:
    """Add `pair [requests|approve|refuse]` to the `vttrelay` command."""
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
