"""The account routes of /auth (accounts-auth.md §5): register, verify, resend verification,
login, logout, user data, regenerate the master key, change password, forgot/reset password,
validate a reset token, export data, delete the account; and the billing routes, which say that
billing is not offered (§12.1).

Handlers check in the reference's order with its statuses and texts, run store calls and
password hashes off the event loop, and answer JSON with sorted keys. Deliberate differences:
emails are lower-cased bare addresses; the register answer never carries a verification token
(§14 Q6); without mail a forgotten password is reset by the operator (`vttrelay accounts
reset-link`), never by a link written to the log; deleting an account deletes everything of it
(§14 Q13); account ids are strings (the account name), not integers.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.protocol import Close
from vttrelay.relay.accounts import mail, users
from vttrelay.relay.accounts.bodies import answer, bearer, map_body, stamp, text
from vttrelay.relay.accounts.rules import bare_email, email_problem, password_problem
from vttrelay.relay.accounts.services import services
from vttrelay.relay.accounts.sessions import (
    DISABLED,
    RESEND,
    SH,
    SO,
    USER_DATA,
    limit,
    signed_in,
)
from vttrelay.relay.accounts.users import User
from vttrelay.relay.core import admitted, error
from vttrelay.relay.forward import API_KEY_HEADER
from vttrelay.relay.routes import ALL_SCOPES, Route

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

log = logging.getLogger("vttrelay.relay")

MAX_PASSWORD_FIELD: Final = 4096  # characters; the rules refuse more than 1024 bytes anyway
MAX_EMAIL_FIELD: Final = 512
REQUIRED: Final = "Email and password are required"
BAD_CREDENTIALS: Final = "Invalid credentials"
RESET_SENT: Final = "If an account with that email exists, a password reset link has been sent."
INVITE_NEEDED: Final = "A valid invite code is required to register on this server"
NO_BILLING: Final = "Billing is not offered by this relay"


def _password(body: dict[str, Any], name: str) -> str:
    return text(body, name, MAX_PASSWORD_FIELD)


def _email(body: dict[str, Any], name: str = "email") -> str:
    return text(body, name, MAX_EMAIL_FIELD)


def _client(request: web.Request) -> tuple[str, str]:
    return request.headers.get("User-Agent", ""), request.remote or ""


async def _close_tokens(state: AccountDeps, token_ids: list[str], reason: str) -> None:
    """Close the live worlds (on any instance) that used these revoked tokens, and make the key
    cache forget what changed (this instance at once, the others within its ttl)."""
    for token_id in token_ids:
        await state.registry.close_token(token_id, Close.AUTH_PROTOCOL, reason)
    await state.keys.refresh()


# Sign-up and verification --------------------------------------------------------------------


async def h_register(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "auth")
    accounts = services(request)
    policy = accounts.settings.signup
    if policy == "closed":
        raise error(403, "Registration is disabled on this server")
    body = await map_body(request, route)
    email, password = _email(body), _password(body, "password")
    if not email or not password:
        raise error(400, REQUIRED)
    problem, address = email_problem(email, accounts.settings.blocked_email_domains)
    if problem:
        raise error(400, problem)
    problem = password_problem(password)
    if problem:
        raise error(400, problem)
    invite = text(body, "inviteCode", 256).strip()
    if policy == "invite" and not invite:
        raise error(403, INVITE_NEEDED)
    password_hash = await accounts.passwords.hash(password)
    user_agent, ip = _client(request)
    made = await asyncio.to_thread(
        users.register,
        state.store,
        address,
        password_hash,
        verified=not accounts.settings.mail_enabled,
        verification_ttl=accounts.settings.verification_ttl,
        session_ttl=accounts.settings.session_ttl,
        user_agent=user_agent,
        ip=ip,
        invite_hash=users.sha256_hex(invite) if policy == "invite" else None,
    )
    if made == "invite":
        raise error(403, INVITE_NEEDED)
    if isinstance(made, str):
        raise error(409, "User already exists")
    log.info("account %s registered (%s)", made.user.account, "invite" if invite else policy)
    if made.verification_token:
        mail.send_later(accounts, request, "verify", address, made.verification_token)
    return answer(
        {
            "id": made.user.account,
            "email": made.user.email,
            "emailVerified": made.user.email_verified,
            "createdAt": stamp(made.user.created_at),
            "subscriptionStatus": "free",
            "sessionToken": made.session_token,
            "sessionExpiresAt": stamp(made.session_expires_at),
        },
        201,
    )


VERIFY_PAGES: Final = {  # case -> (status, title, heading, text, colour)
    "missing": (
        400,
        "Verification Failed",
        "Verification Failed",
        "No verification token was provided.",
    ),
    "unknown": (
        400,
        "Verification Failed",
        "Invalid or Expired Link",
        "This verification link is invalid or has already been used.",
    ),
    "expired": (
        400,
        "Verification Failed",
        "Link Expired",
        "This verification link has expired. Please request a new one.",
    ),
    "already": (
        200,
        "Already Verified",
        "Already Verified",
        "Your email address has already been verified.",
    ),
    "verified": (
        200,
        "Email Verified",
        "Email Verified!",
        "Your email address has been verified. You can now use your account.",
    ),
}


def verify_page(case: str, home: str) -> web.Response:
    status, title, heading, paragraph = VERIFY_PAGES[case]
    colour = "#4CAF50" if status == 200 else "#e74c3c"
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body style='font-family:sans-serif'>"
        f"<div style='max-width:32em;margin:4em auto'><h2 style='color:{colour}'>{heading}</h2>"
        f"<p>{paragraph}</p><p><a href='{html.escape(home)}'>Go to App</a></p></div>"
        "</body></html>"
    )
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")


def _verify(state: AccountDeps, token: str) -> str:
    user = users.user_by_verification(state.store, token)
    if user is None:
        return "unknown"
    if user.email_verified:
        return "already"
    if (user.verification_expires_at or 0) <= time.time():
        return "expired"
    users.set_verified(state.store, user.account)
    return "verified"


async def h_verify(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    token = request.query.get("token", "")
    case = await asyncio.to_thread(_verify, state, token) if token else "missing"
    return verify_page(case, state.config.base_path + "/dashboard/")


async def h_resend_verification(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    await limit(request, state.counters, "auth")
    signed = await signed_in(request, state, RESEND)
    if signed.user.email_verified:
        return answer({"message": "Email is already verified"})
    accounts = services(request)
    if not accounts.settings.mail_enabled:
        raise error(503, "Email service is not configured")
    token = await asyncio.to_thread(
        users.new_verification, state.store, signed.account, accounts.settings.verification_ttl
    )
    mail.send_later(accounts, request, "verify", signed.user.email, token)
    return answer({"message": "Verification email sent"})


# Sessions ------------------------------------------------------------------------------------


async def _signed_with_password(request: web.Request, route: Route, state: AccountDeps) -> User:
    """The account whose email and password the body carries (login, regenerate-key): the
    AUTH limit, then 400 without both, 401 `Invalid credentials` for a wrong pair, 403
    `Account disabled` for a disabled account (the reference lets it sign in, §14 Q9: we do
    not)."""
    await limit(request, state.counters, "auth")
    body = await map_body(request, route)
    email, password = _email(body), _password(body, "password")
    if not email or not password:
        raise error(400, REQUIRED)
    user = await services(request).login(state.store, email, password)
    if user is None:
        raise error(401, BAD_CREDENTIALS)
    if user.disabled:
        raise error(403, DISABLED)
    return user


async def h_login(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    user = await _signed_with_password(request, route, state)
    user_agent, ip = _client(request)
    ttl = services(request).settings.session_ttl
    token, expires = await asyncio.to_thread(
        users.open_session, state.store, user.account, ttl, user_agent, ip
    )
    return answer(
        {
            **await _account_fields(state, user),
            "createdAt": stamp(user.created_at),
            "sessionToken": token,
            "sessionExpiresAt": stamp(expires),
        }
    )


async def _account_fields(state: AccountDeps, user: User) -> dict[str, Any]:
    """What login and user-data both say about the account (its calls this month included)."""
    month, _ = await asyncio.to_thread(users.account_usage, state.store, user.account)
    return {
        "id": user.account,
        "email": user.email,
        "emailVerified": user.email_verified,
        "apiKeyRotationRequired": False,
        "role": user.role,
        "requestsThisMonth": month,
    }


async def h_logout(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    token = bearer(request)
    if token is None:
        raise error(401, "Bearer token required")
    if not await asyncio.to_thread(users.end_session, state.store, token):
        raise error(401, "Invalid token")
    return answer({"success": True})


async def h_user_data(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    signed = await signed_in(request, state, USER_DATA)
    return answer(
        {
            **await _account_fields(state, signed.user),
            "subscriptionStatus": "free",
            "limits": {"monthlyLimit": 0, "unlimitedMonthly": False},
        }
    )


async def h_regenerate_key(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    user = await _signed_with_password(request, route, state)
    secret, revoked = await asyncio.to_thread(
        users.regenerate_master_key, state.store, user.account, ALL_SCOPES
    )
    await _close_tokens(state, revoked, "Master API key regenerated")
    log.info("account %s: master key regenerated, %d token(s) revoked", user.account, len(revoked))
    return answer({"apiKey": secret})


# Passwords -----------------------------------------------------------------------------------


async def h_change_password(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "account")
    signed = await signed_in(request, state, SH)
    body = await map_body(request, route)
    current, new = _password(body, "currentPassword"), _password(body, "newPassword")
    if not current or not new:
        raise error(400, "Current password and new password are required")
    passwords = services(request).passwords
    if not await passwords.verify(signed.user.password_hash, current):
        raise error(401, "Current password is incorrect")
    problem = password_problem(new)
    if problem:
        raise error(400, problem)
    new_hash = await passwords.hash(new)
    await asyncio.to_thread(users.set_password, state.store, signed.account, new_hash)
    return answer({"message": "Password changed successfully"})


async def h_forgot_password(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "reset")
    body = await map_body(request, route)
    email = _email(body)
    if not email:
        raise error(400, "Email is required")
    address = bare_email(email)
    user = await asyncio.to_thread(users.user_by_email, state.store, address) if address else None
    accounts = services(request)
    if user is not None and accounts.settings.mail_enabled:
        token = await asyncio.to_thread(
            users.new_reset, state.store, user.account, accounts.settings.reset_ttl
        )
        mail.send_later(accounts, request, "reset", user.email, token)
    elif user is not None:
        log.info(
            "account %s asked for a password reset; no mail is configured: make a link with"
            " `vttrelay accounts reset-link %s`",
            user.account,
            user.account,
        )
    return answer({"message": RESET_SENT})


async def h_reset_password(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "reset")
    body = await map_body(request, route)
    token, password = text(body, "token", 256), _password(body, "password")
    if not token or not password:
        raise error(400, "Token and password are required")
    problem = password_problem(password)
    if problem:
        raise error(400, problem)
    invalid = error(400, "Invalid or expired reset token")
    if not await asyncio.to_thread(users.reset_valid, state.store, token):
        raise invalid
    new_hash = await services(request).passwords.hash(password)
    if not await asyncio.to_thread(users.use_reset, state.store, token, new_hash):
        raise invalid
    return answer({"message": "Password has been reset successfully"})


async def h_validate_reset(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    token = request.match_info["token"]
    return answer({"valid": await asyncio.to_thread(users.reset_valid, state.store, token)})


# The account ---------------------------------------------------------------------------------


def _export(state: AccountDeps, user: User) -> dict[str, Any]:
    month, day = users.account_usage(state.store, user.account)
    keys = state.store.list_keys(user.account)
    return {
        "exportDate": stamp(time.time()),
        "user": {
            "id": user.account,
            "email": user.email,
            "createdAt": stamp(user.created_at),
            "updatedAt": stamp(user.updated_at),
        },
        "subscription": {"status": "free", "stripeCustomerId": "", "subscriptionId": ""},
        "usage": {"requestsThisMonth": month, "requestsToday": day},
        "apiAccess": {"hasMasterKey": any(k.id == user.master_key_id for k in keys)},
        "scopedKeys": [
            {
                "id": key.id,
                "name": key.name,
                "scopedClientId": key.client_ids[0] if len(key.client_ids) == 1 else "",
                "scopedUserId": key.user_id or "",
                "monthlyLimit": key.monthly_limit or 0,
                "expiresAt": stamp(key.expires_at),
                "enabled": key.enabled,
                "createdAt": stamp(key.created_at),
            }
            for key in keys
        ],
    }


async def h_export_data(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "account")
    signed = await signed_in(request, state, SH)
    return answer(await asyncio.to_thread(_export, state, signed.user))


async def h_delete_account(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await limit(request, state.counters, "account")
    signed = await signed_in(request, state, SH)
    body = await map_body(request, route)
    confirm, password = _email(body, "confirmEmail"), _password(body, "password")
    if not confirm or bare_email(confirm) != signed.user.email:
        raise error(
            400,
            "Email confirmation required",
            message="Please provide your email address in the confirmEmail field to confirm"
            " account deletion",
        )
    if not password:
        raise error(
            400,
            "Password required",
            message="Please provide your password to confirm account deletion",
        )
    if not await services(request).passwords.verify(signed.user.password_hash, password):
        raise error(401, "Invalid password")
    revoked = await asyncio.to_thread(users.delete_account, state.store, signed.account)
    await _close_tokens(state, revoked, "Account deleted")
    log.info("account %s deleted (%d token(s) revoked)", signed.account, len(revoked))
    return answer({"message": "Account successfully deleted", "success": True})


# Billing (not offered) -----------------------------------------------------------------------


async def _billing_caller(request: web.Request, state: AccountDeps) -> None:
    """The reference's `AM` check: a Bearer session (SO rules) or an API key (no scope)."""
    if request.headers.get("Authorization", "").startswith("Bearer "):
        await signed_in(request, state, SO)
        return
    await admitted(state.gate.admit(request.headers.get(API_KEY_HEADER), None, None))


async def h_billing_status(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await _billing_caller(request, state)
    return answer({"message": f"{NO_BILLING} (billing disabled)", "subscriptionStatus": "free"})


async def h_billing_session(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    await _billing_caller(request, state)
    raise error(503, NO_BILLING, message="This relay has no subscriptions: every account is free.")


async def h_billing_webhook(request: web.Request, route: Route, state: AccountDeps) -> web.Response:
    """Stripe's webhook: acknowledged, nothing read or done (what the reference answers with
    Stripe off, accounts-auth.md §17); the body is not read."""
    return answer({"received": "true"})


HANDLERS: Final = {
    "auth_register": h_register,
    "auth_verify": h_verify,
    "auth_resend": h_resend_verification,
    "auth_login": h_login,
    "auth_logout": h_logout,
    "auth_user_data": h_user_data,
    "auth_regenerate_key": h_regenerate_key,
    "auth_change_password": h_change_password,
    "auth_forgot_password": h_forgot_password,
    "auth_reset_password": h_reset_password,
    "auth_validate_reset": h_validate_reset,
    "auth_export": h_export_data,
    "auth_delete_account": h_delete_account,
    "billing_status": h_billing_status,
    "billing_session": h_billing_session,
    "billing_webhook": h_billing_webhook,
}
