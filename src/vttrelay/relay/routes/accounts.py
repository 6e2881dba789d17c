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


def _b(name: str, description: str, type_: ParamType | None = "string", **kw: Any) -> Param:
    return Param(name, type_, B, description=description, **kw)


EMAIL_B = _b("email", "The account's email address.", required=True)
PASSWORD_B = _b("password", "The account's password.", required=True)
KEY_ID = Param("id", "string", P, required=True, description="The key's id.")
TOKEN_ID = Param("id", "string", P, required=True, description="The token's id.")
RULES = "8+ characters with an upper-case letter, a lower-case one and a digit."

CODE_P = Param("code", "string", P, required=True, description="The request's code.")
PAGE = (
    Param("limit", "number", Q, description="At most this many (1-200, default 50)."),
    Param("offset", "number", Q, description="Skip this many."),
)
WORLD_ID = Param("id", "string", P, required=True, description="The world's clientId.")
CREDENTIAL_ID = Param("id", "string", P, required=True, description="The credential's id.")


def _notification_routes(path: str, level: str, whose: str, *params: Param) -> tuple[Route, ...]:
    """GET, PUT, (DELETE,) POST /test of one level of notification settings."""
    routes = [
        _account("GET", path, "auth_get_notifications", f"Notification settings of {whose}.",
                 *params, level=level),
        _account("PUT", path, "auth_put_notifications",
                 f"Replace the notification settings of {whose} (absent fields: defaults).",
                 *params, level=level),
        _account("POST", path + "/test", "auth_test_notifications",
                 "Send a test notification (by email, when the relay has SMTP).", *params,
                 level=level),
    ]  # fmt: skip
    if level != "account":
        routes.append(
            _account("DELETE", path, "auth_delete_notifications",
                     f"Delete the notification settings of {whose}.", *params, level=level)
        )  # fmt: skip
    return tuple(routes)


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
        "POST",
        "/auth/api-keys",
        "auth_create_key",
        f"Create a scoped API key; 201 with the key, shown only here. {BEARER}",
        _b("name", "The key's name.", required=True),
        _b("scopes", "Scope names (at least one).", "array", required=True),
        _b("scopedClientIds", "The only worlds the key may reach (none: all).", "array"),
        _b("scopedClientId", "One world the key may reach (legacy form)."),
        _b("scopedUserId", "The Foundry userId every call acts as."),
        _b("scopedUserIds", "Per world: clientId -> the userId calls there act as.", "object"),
        _b("monthlyLimit", "Calls per month (UTC); a number or a string; 0: none.", None),
        _b("ratePerMinute", "Calls per minute (null or 0: the relay's default).", "number"),
        _b("expiresAt", "When the key stops working (RFC 3339)."),
    ),
    _account("GET", "/auth/api-keys", "auth_list_keys", f"The account's API keys. {BEARER}"),
    _account(
        "PATCH",
        "/auth/api-keys/{id}",
        "auth_update_key",
        f"Change a key: any field of the create call, and `enabled`; null clears. {BEARER}",
        KEY_ID,
    ),
    _account("DELETE", "/auth/api-keys/{id}", "auth_delete_key", f"Delete a key. {BEARER}", KEY_ID),
    _account(
        "POST",
        "/auth/api-keys/{id}/regenerate",
        "auth_regenerate_scoped_key",
        f"A new secret for a key (same id, scopes and limits); the old one stops. {BEARER}",
        KEY_ID,
    ),
    _account(
        "POST",
        "/auth/connection-tokens",
        "auth_mint_code",
        f"A pairing code (10 minutes) for a world of the account to pair with. {BEARER}",
        _b("clientId", "Bind the code to this known world (re-pairing it)."),
    ),
    _account(
        "GET",
        "/auth/connection-tokens",
        "auth_list_tokens",
        f"The account's live connection tokens (never the secret). {BEARER}",
        *PAGE,
    ),
    _account(
        "PATCH",
        "/auth/connection-tokens/{id}",
        "auth_update_token",
        f"Rename a token or restrict the addresses it connects from. {BEARER}",
        TOKEN_ID,
        _b("name", "The token's name."),
        _b("allowedIps", "Comma-separated IPs or CIDRs; empty: any."),
    ),
    _account(
        "DELETE",
        "/auth/connection-tokens/{id}",
        "auth_revoke_token",
        f"Revoke a token; worlds connected with it are closed (4002). {BEARER}",
        TOKEN_ID,
    ),
    _account(
        "GET",
        "/auth/known-clients",
        "auth_list_worlds",
        f"The account's worlds, live or not, with their tokens. {BEARER}",
    ),
    _account(
        "GET",
        "/auth/connection-logs",
        "auth_connection_logs",
        f"The account's world connections, newest first (90 days, 1,000 at most). {BEARER}",
        *PAGE,
    ),
    _account(
        "GET",
        "/auth/remote-request-logs",
        "auth_remote_request_logs",
        "The account's cross-world requests (one world calling another: on its own socket or "
        "from a /ws/api socket bound to it), "
        f"newest first (30 days, 1,000 at most). {BEARER}",
        *PAGE,
    ),
    _account(
        "GET",
        "/auth/activity",
        "auth_activity",
        "One feed of the account's world connections, cross-world requests and API calls, "
        f"newest first. {BEARER}",
        Param(
            "type",
            "string",
            Q,
            description="connection, remote_request, module_event or api_request (none: all).",
        ),
        Param("world", "string", Q, description="Only events of this clientId."),
        Param("action", "string", Q, description="Only this cross-world action or API route."),
        Param("success", "string", Q, description="true or false (not for connections)."),
        Param("since", "string", Q, description="From this time (RFC 3339)."),
        Param("until", "string", Q, description="Up to this time (RFC 3339)."),
        *PAGE,
    ),
    _account(
        "DELETE",
        "/auth/known-clients/{id}",
        "auth_forget_world",
        f"Forget a world: its tokens are revoked and its socket closed (4002). {BEARER}",
        WORLD_ID,
    ),
    _account(
        "PATCH",
        "/auth/known-clients/{id}",
        "auth_world_settings",
        f"A world's cross-world settings (absent: kept; [] clears). {BEARER}",
        WORLD_ID,
        _b("allowedTargetClients", "Worlds of the account it may call ('*': all).", "array"),
        _b("remoteScopes", "Scopes its cross-world calls may use.", "array"),
        _b("remoteRequestsPerHour", "Cross-world calls per hour (0: no limit).", "integer"),
    ),
    _account(
        "PATCH",
        "/auth/known-clients/{id}/credential",
        "auth_world_credential",
        f"Link a stored credential to a world (null unlinks): its headless login. {BEARER}",
        WORLD_ID,
        _b("credentialId", "One of the account's credentials, or null.", None),
    ),
    _account(
        "PATCH",
        "/auth/known-clients/{id}/auto-start",
        "auth_world_auto_start",
        "Let the relay start the world headless for a call while it is offline (it also needs "
        f"a linked credential). {BEARER}",
        WORLD_ID,
        _b("enabled", "On or off (absent: off).", "boolean"),
    ),
    _account(
        "GET",
        "/auth/known-clients/{id}/users",
        "auth_world_users",
        f"A world's users as it last listed them, by name (also while it is offline). {BEARER}",
        WORLD_ID,
    ),
    _account(
        "POST",
        "/auth/credentials",
        "auth_create_credential",
        f"Store a Foundry login; the password is encrypted at rest. {BEARER}",
        _b("name", "A name for it.", required=True),
        _b("foundryUrl", "The Foundry server's http(s) URL.", required=True),
        _b("foundryUsername", "The Foundry user.", required=True),
        _b("foundryPassword", "The Foundry password (never returned).", required=True),
        _b("world", "A default world title or id."),
    ),
    _account(
        "GET",
        "/auth/credentials",
        "auth_list_credentials",
        f"Stored logins (no password). {BEARER}",
    ),
    _account(
        "PATCH",
        "/auth/credentials/{id}",
        "auth_update_credential",
        f"Change a stored login (the password is required). {BEARER}",
        CREDENTIAL_ID,
        _b("foundryPassword", "The Foundry password.", required=True),
    ),
    _account(
        "DELETE",
        "/auth/credentials/{id}",
        "auth_delete_credential",
        f"Delete a stored login. {BEARER}",
        CREDENTIAL_ID,
    ),
    *_notification_routes("/auth/notification-settings", "account", "the account"),
    *_notification_routes("/auth/api-keys/{id}/notification-settings", "key", "one key", KEY_ID),
    *_notification_routes(
        "/auth/known-clients/{id}/notification-settings",
        "world",
        "one world",
        WORLD_ID,
    ),
    *(
        route
        for kind, noun in (
            ("key-request", "an app's key request"),
            ("pair-request", "a world's pair request"),
        )
        for route in (
            _account(
                "GET",
                f"/auth/{kind}/{{code}}",
                f"auth_{kind[:-8]}_request",
                f"What {noun} asks for. {BEARER}",
                CODE_P,
            ),
            _account(
                "POST",
                f"/auth/{kind}/{{code}}/approve",
                f"auth_approve_{kind[:-8]}",
                f"Approve {noun} for the caller's account. {BEARER}",
                CODE_P,
            ),
            _account(
                "POST",
                f"/auth/{kind}/{{code}}/deny",
                f"auth_deny_{kind[:-8]}",
                f"Refuse {noun}. {BEARER}",
                CODE_P,
            ),
        )
    ),  # fmt: skip
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
    _account(
        "POST",
        "/api/webhooks/stripe",
        "billing_webhook",
        'Billing is not offered: Stripe\'s webhook is acknowledged and ignored ({"received":'
        '"true"}, as the reference answers with Stripe off; no authentication).',
    ),
)

GROUP: Final = Group(NAME, "accounts", ROUTES)
