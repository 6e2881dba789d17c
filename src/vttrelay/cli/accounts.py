"""`vttrelay accounts create|list|invite|reset-link|verify|disable|enable`: password accounts
in the relay's store, for the operator (sign-up is closed by default: accounts come from
here)."""

from __future__ import annotations

import argparse
import getpass
import sys
from contextlib import closing
from typing import Any, Final

from vttrelay.cli.common import err, iso, link_base, open_store, table
from vttrelay.relay.accounts import users
from vttrelay.relay.accounts.mail import reset_link
from vttrelay.relay.accounts.passwords import Passwords
from vttrelay.relay.accounts.rules import bare_email, email_problem, password_problem
from vttrelay.relay.store import RelayStore

DAY: Final = 86400.0


def _password(args: argparse.Namespace) -> str | None:
    """The new password: one line of stdin with --password-stdin, else asked twice."""
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        err("The two passwords differ.")
        return None
    return first


def _user(store: RelayStore, who: str) -> users.User | None:
    """An account's login by its email or its account name (None, said on stderr: none)."""
    address = bare_email(who)
    found = users.user_by_email(store, address) if address else None
    found = found or users.user_by_account(store, who)
    if found is None:
        err(f"No account with email or name {who!r}.")
    return found


def cmd_create(args: argparse.Namespace) -> int:
    problem, address = email_problem(args.email)
    if problem:
        err(problem)
        return 2
    password = _password(args)
    if password is None:
        return 2
    problem = password_problem(password)
    if problem:
        err(problem)
        return 2
    password_hash = Passwords().hasher.hash(password)
    with closing(open_store(args)) as store:
        made = users.register(
            store,
            address,
            password_hash,
            verified=True,
            verification_ttl=DAY,
            session_ttl=None,
            account=args.account,
        )
    if isinstance(made, str):
        err(f"An account with email {address} (or the account name {args.account}) exists.")
        return 1
    print(made.user.account)
    err(f"Created account {made.user.account} for {address}: it signs in with POST /auth/login "
        "or the dashboard's email and password form.")  # fmt: skip
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        listed = users.list_users(store)
    rows = [
        (
            u.account,
            "disabled" if u.disabled else "active",
            "yes" if u.email_verified else "no",
            iso(u.created_at),
            u.email,
        )
        for u in listed
    ]
    table(("ACCOUNT", "STATE", "VERIFIED", "CREATED", "EMAIL"), rows, empty="No password accounts.")
    return 0


def cmd_invite(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        code = users.new_invite(store, args.days * DAY, args.note)
    print(code)
    err(f"Invite code: works once, within {args.days} days, with `vttrelay serve --signup "
        "invite` (POST /auth/register with inviteCode).")  # fmt: skip
    return 0


def cmd_reset_link(args: argparse.Namespace) -> int:
    url = link_base(args)
    with closing(open_store(args)) as store:
        user = _user(store, args.who)
        if user is None:
            return 1
        token = users.new_reset(store, user.account, args.hours * 3600)
    print(reset_link(url.rstrip("/"), token))
    err(f"Give this link to the owner of {user.email}: it sets a new password, works once, "
        f"within {args.hours} h; earlier reset links stop working.")  # fmt: skip
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as store:
        user = _user(store, args.who)
        if user is None:
            return 1
        users.set_verified(store, user.account)
    err(f"Account {user.account} ({user.email}) is verified.")
    return 0


def cmd_disable(args: argparse.Namespace) -> int:
    """`accounts disable WHO` (`args.disable` True) and `accounts enable WHO` (False)."""
    with closing(open_store(args)) as store:
        user = _user(store, args.who)
        if user is None:
            return 1
        users.set_disabled(store, user.account, args.disable)
    if args.disable:
        err(f"Account {user.account} ({user.email}) is disabled: its sessions and sign-in links "
            "ended now; sign-in answers 403 Account disabled; its API keys (403 Account "
            "disabled) and its worlds (closed 4005 Account disabled; they retry) stop on every "
            "relay sharing this store at its next check (5 s by default). Nothing is deleted: "
            f"`vttrelay accounts enable {args.who}` gives it all back.")  # fmt: skip
    else:
        err(f"Account {user.account} ({user.email}) is enabled: it signs in again, its API "
            "keys work again and its worlds reconnect at their next try.")  # fmt: skip
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `accounts ...` to the `vttrelay` command."""
    accounts = commands.add_parser("accounts", help="manage password accounts (/auth)")
    actions = accounts.add_subparsers(dest="accounts_command", required=True, metavar="ACTION")
    p = actions.add_parser("create", parents=[common], help="create an account (verified)")
    p.add_argument("email")
    p.add_argument(
        "--account",
        default=None,
        help="the account name its keys and worlds carry (default: a new one; 'default' gives "
        "the keys and worlds made without --account an owner who can sign in)",
    )
    p.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    p.set_defaults(func=cmd_create)
    p = actions.add_parser("list", parents=[common], help="list password accounts")
    p.set_defaults(func=cmd_list)
    p = actions.add_parser("invite", parents=[common], help="print a single-use invite code")
    p.add_argument("--days", type=float, default=7.0, help="valid this many days (default 7)")
    p.add_argument("--note", default="", help="who it is for (kept with the code)")
    p.set_defaults(func=cmd_invite)
    p = actions.add_parser(
        "reset-link", parents=[common], help="print a password-reset link for an account"
    )
    p.add_argument("who", help="the account's email or account name")
    p.add_argument(
        "--url",
        default=None,
        help="the relay's base URL as the account's owner reaches it (default: as for "
        "dashboard-link, the settings' public-url, else base-path, else their host and port)",
    )
    p.add_argument("--hours", type=float, default=1.0, help="valid this many hours (default 1)")
    p.set_defaults(func=cmd_reset_link)
    p = actions.add_parser("verify", parents=[common], help="mark an account's email verified")
    p.add_argument("who", help="the account's email or account name")
    p.set_defaults(func=cmd_verify)
    for name, disable, what in (
        ("disable", True, "stop an account at once: sessions, sign-in, API keys, its worlds"),
        ("enable", False, "let a disabled account work again"),
    ):
        p = actions.add_parser(name, parents=[common], help=what)
        p.add_argument("who", help="the account's email or account name")
        p.set_defaults(func=cmd_disable, disable=disable)
