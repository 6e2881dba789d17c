"""`vttrelay keys create|list|revoke`: API keys; `keys requests|approve|refuse` decide the
API-key requests of apps (`relay.accounts.key_requests`), which a running relay sees on the
app's next poll."""

from __future__ import annotations

import argparse
import time
from contextlib import closing
from typing import Any

from vttrelay.cli.common import (
    chosen_scopes,
    decided,
    err,
    expiry,
    iso,
    open_store,
    preset,
    scope,
    table,
)
from vttrelay.relay.accounts import key_requests
from vttrelay.relay.routes import DEFAULT_SCOPES, SCOPE_PRESETS
from vttrelay.relay.store import DEFAULT_ACCOUNT


def cmd_keys_requests(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        requests = key_requests.key_requests(store, pending_only=not args.all)
    now = time.time()
    header = ("CODE", "STATUS", "FLOW", "CLIENTS", "FROM", "EXPIRES", "SCOPES", "APP")
    rows = [
        (
            r.code,
            r.state(now),
            "web" if r.ask.callback_url else "device",
            ",".join(r.ask.client_ids) or "*",
            r.peer or "-",
            iso(r.expires_at),
            ",".join(r.ask.scopes),
            " ".join(filter(None, (r.ask.app_name, r.ask.app_url and f"<{r.ask.app_url}>"))),
        )
        for r in requests
    ]
    table(header, rows, empty="No pending key requests." if not args.all else "No key requests.")
    return 0


def cmd_keys_approve(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        done = decided(
            args.code,
            lambda: key_requests.approve_key_request(
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
    err(
        f"Approved key request {done.request.code} of {ask.app_name!r}: API key {done.key_id} "
        f"(account {args.account!r}, scopes: {', '.join(done.scopes)})."
    )
    if done.exchange_code is None:
        err("The app receives the key on its next status poll (shown once).")
        return 0
    print(done.exchange_code)
    callback = f"{ask.callback_url}{'&' if '?' in ask.callback_url else '?'}code="
    err(
        "Give the app this one-time exchange code (valid "
        f"{int(key_requests.EXCHANGE_TTL // 60)} minutes), or open {callback}{done.exchange_code}"
    )
    return 0


def cmd_keys_refuse(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        request = decided(args.code, lambda: key_requests.refuse_key_request(store, args.code))
    if request is None:
        return 1
    err(f"Refused key request {request.code} of {request.ask.app_name!r}.")
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    scopes = chosen_scopes(args.scope, args.preset, args.all_scopes) or DEFAULT_SCOPES
    with closing(open_store(args)) as store:
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
    err(
        f"Created API key {key_id} (account {args.account!r}, scopes: {', '.join(scopes)}). "
        "The key is shown only once."
    )
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        keys = [k for k in store.list_keys(args.account) if args.all or k.enabled]
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
            iso(key.expires_at),
            ",".join(key.client_ids) or "*",
            key.user_id or "-",
            ",".join(key.scopes),
        )
        for key in keys
    ]
    table(header, rows, empty="No API keys.")
    return 0


def cmd_keys_purge(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        removed = store.purge_revoked_keys(args.account)
    err(f"Removed {removed} revoked API key(s).")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        key = store.get_key(args.key_id)
        revoked = store.revoke_key(args.key_id)
    if key is None:
        err(f"No API key {args.key_id!r}.")
        return 1
    if not revoked:
        err(f"API key {args.key_id} was already revoked.")
    else:
        err(f"Revoked API key {args.key_id}; running relays stop accepting it within seconds.")
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `keys create|list|purge|revoke|requests|approve|refuse` to the `vttrelay` command."""
    keys = commands.add_parser("keys", help="manage API keys")
    key_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    p = key_commands.add_parser("create", parents=[common], help="create a key, print it once")
    p.add_argument("--scope", action="append", type=scope, help="a scope (repeatable)")
    p.add_argument(
        "--preset",
        type=preset,
        default=None,
        help="a named set of scopes, added to any --scope: "
        + "; ".join(f"{p.name}: {p.help}" for p in SCOPE_PRESETS),
    )
    p.add_argument("--all-scopes", action="store_true", help="every scope (as --preset all)")
    p.add_argument("--client", action="append", help="allowed world client id (repeatable)")
    p.add_argument("--user", default=None, help="userId forced on every call")
    p.add_argument("--expires", type=expiry, default=None, help="ISO date/time or 30d")
    p.add_argument("--rate", type=int, default=None, help="requests per minute (0: unlimited)")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.add_argument("--name", default="")
    p.set_defaults(func=cmd_keys_create)
    p = key_commands.add_parser("list", parents=[common], help="list keys (never the secrets)")
    p.add_argument("--account", default=None)
    p.add_argument("--all", action="store_true", help="also revoked keys")
    p.set_defaults(func=cmd_keys_list)
    p = key_commands.add_parser("purge", parents=[common], help="remove revoked keys for good")
    p.add_argument("--account", default=None, help="only this account's")
    p.set_defaults(func=cmd_keys_purge)
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
    p.add_argument("--scope", action="append", type=scope, help="grant only these requested scopes")
    p.add_argument("--client", action="append", help="allowed world (default: those asked)")
    p.add_argument("--user", default=None, help="userId forced on every call")
    p.add_argument("--expires", type=expiry, default=None, help="ISO date/time or 30d")
    p.add_argument("--rate", type=int, default=None, help="requests per minute (0: unlimited)")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.set_defaults(func=cmd_keys_approve)
    p = key_commands.add_parser("refuse", parents=[common], help="refuse an app's key request")
    p.add_argument("code")
    p.set_defaults(func=cmd_keys_refuse)
