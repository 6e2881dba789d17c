"""Who is calling an /auth route: a session token sent as `Authorization: Bearer <token>`.

The reference checks a session four ways with their own texts (accounts-auth.md §1.3); each is
a `SessionRule` value here and `signed_in(request, state, rule)` applies one: the token, its
session (live in the shared store, so valid on every instance), its user, then the account
checks the rule asks for (disabled, email not verified). Per-IP limits of the /auth routes are
`limit(request, counters, name)`, counted in the relay's shared Counters (`peer_limits`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from aiohttp import web

from vttrelay.protocol import ACCOUNT_DISABLED
from vttrelay.relay import peer_limits
from vttrelay.relay.accounts import users
from vttrelay.relay.accounts.bodies import bearer
from vttrelay.relay.accounts.services import services
from vttrelay.relay.accounts.users import Session, User
from vttrelay.relay.core import error

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps
    from vttrelay.relay.backends.ports import Counters

INVALID_SESSION: Final = "Invalid or expired session. Please log in again."
NOT_VERIFIED: Final = "Please verify your email address before using the API."
DISABLED: Final = ACCOUNT_DISABLED
TOUCH_AFTER: Final = 60.0  # a session's last use is written at most once a minute


@dataclass(frozen=True)
class SessionRule:
    """One way to check a session: the status and text for no token, an unknown or expired
    token, a session whose user is gone; and which account checks follow."""

    missing: tuple[int, str]
    unknown: tuple[int, str]
    no_user: tuple[int, str]
    checks: Literal["all", "disabled", "none"]  # a disabled account is refused by every rule


# `SO`: the key, token, world, credential and settings routes.
SO: Final = SessionRule(
    (401, INVALID_SESSION), (401, INVALID_SESSION), (401, INVALID_SESSION), "all"
)
# `SH`: change-password, export-data, DELETE account (an unverified account may use them).
SH: Final = SessionRule(
    (401, "Session required"), (401, "Invalid or expired session"), (401, "User not found"), "none"
)
USER_DATA: Final = SessionRule(
    (401, "Bearer token required"),
    (401, "Invalid or expired session"),
    (404, "User not found"),
    "disabled",
)
RESEND: Final = SessionRule(
    (401, "Bearer token required"), (401, "Invalid session"), (404, "User not found"), "none"
)


@dataclass(frozen=True)
class Signed:
    """A caller with a live session."""

    user: User
    session: Session

    @property
    def account(self) -> str:
        return self.user.account


def _lookup(state: AccountDeps, token: str) -> tuple[Session | None, User | None]:
    session = users.session_by_token(state.store, token)
    if session is None:
        return None, None
    user = users.user_by_account(state.store, session.account)
    if user is not None and (session.last_used_at or 0) < time.time() - TOUCH_AFTER:
        users.touch_session(state.store, session.token_hash)
    return session, user


async def signed_in(request: web.Request, state: AccountDeps, rule: SessionRule) -> Signed:
    """The caller's session under `rule`, or the rule's RelayError."""
    token = bearer(request)
    if token is None:
        raise error(*rule.missing)
    session, user = await asyncio.to_thread(_lookup, state, token)
    if session is None:
        raise error(*rule.unknown)
    if user is None:
        raise error(*rule.no_user)
    if user.disabled:  # every rule (the reference lets `SH` routes pass, §14 Q9: we do not)
        raise error(403, DISABLED)
    if rule.checks == "all" and not user.email_verified:
        raise error(403, NOT_VERIFIED)
    return Signed(user, session)


# Per-IP limits (accounts-auth.md §3.1): name -> (window seconds, 429 text)
LIMITS: Final = {
    "auth": (
        15 * 60.0,
        "Too many authentication attempts from this IP, please try again after 15 minutes",
    ),
    "reset": (3600.0, "Too many password reset attempts from this IP, please try again later"),
    "account": (
        3600.0,
        "Too many account management requests from this IP, please try again later",
    ),
}


async def limit(request: web.Request, counters: Counters, name: str) -> None:
    """Take one token of the caller's budget `name` (429 when spent); before anything else, so
    refused and malformed requests cost a token too, as in the reference."""
    settings = services(request).settings
    per_window = {
        "auth": settings.auth_rate_limit,
        "reset": settings.reset_rate_limit,
        "account": settings.account_rate_limit,
    }[name]
    window, text = LIMITS[name]
    if not await peer_limits.take(counters, f"acct-{name}", request, per_window, window):
        raise error(429, text)
