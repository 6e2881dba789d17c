"""The account routes (accounts-auth.md §5, §12.1), answered by the relay
(`relay/accounts/http.py`): sign-up, sign-in, sessions, passwords, export, deletion, and the
billing routes that say billing is not offered. A session token goes in `Authorization: Bearer
<token>`; API keys are refused on these routes, as in the reference, so the SDK (which calls
with a key) has no method for them."""

from __future__ import annotations

from typing import Any, Final

from vttrelay.relay.routes.auth import PUBLIC_BODY
from vttrelay.relay.routes.common import B, P, Q, local
from vttrelay.relay.routes.model import Group, NoSdk, Param, ParamType, Route

NAME: Final = "Accounts"
BEARER: Final = "Authorization: Bearer <session token>."
NO_SDK: Final = NoSdk("an account route: called with a session token, not an API key")


def _account(
    method: str, path: str, handler: str, summary: str, *params: Param, **extra: Any
) -> Route:
    return local(
        method,
        path,
        handler,
        summary,
        NAME,
        params=params,
        extra={**PUBLIC_BODY, **extra},
        sdk=NO_SDK,
    )


def _b(name: str, description: str, type_: ParamType = "string", **kw: Any) -> Param:
    return Param(name, type_, B, description=description, **kw)


EMAIL_B = _b("email", "The account's email address.", required=True)
PASSWORD_B = _b("password", "The account's password.", required=True)
RULES = "8+ characters with an upper-case letter, a lower-case one and a digit."

ROUTES: Final = (
    _account(
        "POST",
        "/auth/register",
        "auth_register",
        "Create an account (if the relay's sign-up policy allows); 201 with a session token.",
        EMAIL_B,
        _b("password", RULES, required=True),
        _b("inviteCode", "Needed when the relay signs up by invitation."),
    ),
    _account(
        "GET",
        "/auth/verify",
        "auth_verify",
        "The page a verification mail links to: marks the email verified.",
        Param("token", "string", Q, required=True, description="The verification token."),
        content_type="text/html",
    ),
    _account(
        "POST",
        "/auth/resend-verification",
        "auth_resend",
        f"Send the verification mail again. {BEARER}",
    ),
    _account(
        "POST",
        "/auth/login",
        "auth_login",
        "Sign in with email and password; a new 30-day session token.",
        EMAIL_B,
        PASSWORD_B,
    ),
    _account("POST", "/auth/logout", "auth_logout", f"End this session. {BEARER}"),
    _account("GET", "/auth/user-data", "auth_user_data", f"The signed-in account. {BEARER}"),
    _account(
        "POST",
        "/auth/regenerate-key",
        "auth_regenerate_key",
        "Reset credentials: ends every session, deletes every key and connection token of the "
        "account and returns a new master key (an API key with every scope), shown once.",
        EMAIL_B,
        PASSWORD_B,
    ),
    _account(
        "POST",
        "/auth/change-password",
        "auth_change_password",
        f"Change the password (sessions stay signed in). {BEARER}",
        _b("currentPassword", "The password now.", required=True),
        _b("newPassword", RULES, required=True),
    ),
    _account(
        "POST",
        "/auth/forgot-password",
        "auth_forgot_password",
        "Mail a password-reset link (when the relay sends mail); the same answer for any email.",
        EMAIL_B,
    ),
    _account(
        "POST",
        "/auth/reset-password",
        "auth_reset_password",
        "Set a new password with a reset token (single use, one hour).",
        _b("token", "The reset token.", required=True),
        _b("password", RULES, required=True),
    ),
    _account(
        "GET",
        "/auth/validate-reset-token/{token}",
        "auth_validate_reset",
        "Whether a reset token is still usable: {valid}.",
        Param("token", "string", P, required=True, description="A password-reset token."),
    ),
    _account(
        "GET",
        "/auth/export-data",
        "auth_export",
        f"Everything stored about the account (never a secret). {BEARER}",
    ),
    _account(
        "DELETE",
        "/auth/account",
        "auth_delete_account",
        "Delete the account and everything of it: keys, sessions, worlds, credentials; its "
        f"connected worlds are disconnected. {BEARER}",
        _b("confirmEmail", "The account's email, to confirm.", required=True),
        PASSWORD_B,
    ),
    _account(
        "GET",
        "/api/subscriptions/status",
        "billing_status",
        "Billing is not offered: every account is free (session or API key).",
    ),
    *(
        _account(
            "POST",
            f"/api/subscriptions/{name}",
            "billing_session",
            "Billing is not offered: always 503 (session or API key).",
        )
        for name in ("create-checkout-session", "create-portal-session")
    ),
)

GROUP: Final = Group(NAME, "accounts", ROUTES)
