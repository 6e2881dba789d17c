"""Dashboard pages of password accounts: sign in with email and password (beside the one-time
link), set a new password with a reset link (the page a reset mail or `vttrelay accounts
reset-link` opens), and, for the operator, make an invite code for `--signup invite`.

The sign-in and reset forms are shown before anyone is signed in: their POSTs pass the same
checks as the link sign-in (`Dashboard.signin_checks`: per-IP limit, same origin, pre-session
CSRF token); a refusal is a `RelayError`, which the dashboard shows as its error page.
Passwords are checked by the relay's account services (argon2id, the same time for
an unknown email as for a wrong password).
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING

from aiohttp import web

from vttrelay.dashboard.sessions import open_session
from vttrelay.relay.accounts import users
from vttrelay.relay.accounts.rules import password_problem
from vttrelay.relay.accounts.services import ACCOUNTS
from vttrelay.relay.accounts.sessions import limit
from vttrelay.relay.core import error

if TYPE_CHECKING:
    from vttrelay.dashboard.views import Dashboard

BAD_LOGIN = "Wrong email or password."
NOT_VERIFIED = "Verify your email address first: open the link of the mail the relay sent you."
BAD_RESET = "This reset link is not valid: it was already used, has expired, or was mistyped."
MAX_FIELD = 4096


class AccountPages:
    """The handlers, bound to one dashboard."""

    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash

    async def password_signin(self, request: web.Request) -> web.StreamResponse:

        dash = self.dash
        data, current = await dash.signin_checks(request)
        email = str(data.get("email") or "")[:MAX_FIELD]
        password = str(data.get("password") or "")[:MAX_FIELD]
        if not email or not password:
            raise error(400, "Enter your email address and your password.")
        user = await request.app[ACCOUNTS].login(dash.state.store, email, password)
        if user is None:
            raise error(401, BAD_LOGIN)
        if user.disabled:
            raise error(403, "This account is disabled.")
        if not user.email_verified:
            raise error(403, NOT_VERIFIED)
        opened = await asyncio.to_thread(
            open_session, dash.state.store, user.account, dash.state.config.session_ttl
        )
        return await dash.signed_in_as(request, opened, current, data, "password")

    async def reset_form(self, request: web.Request) -> web.StreamResponse:

        dash = self.dash
        token = request.query.get("token", "")[:256]
        valid = bool(token) and await asyncio.to_thread(users.reset_valid, dash.state.store, token)
        csrf = secrets.token_urlsafe(24)
        page = dash.render(
            request,
            "reset.html",
            await dash.viewer(request),
            status=200 if valid else 400,
            token=token,
            valid=valid,
            signin_csrf=csrf,
            done=False,
        )
        return dash.with_signin_csrf(request, page, csrf)

    async def reset(self, request: web.Request) -> web.StreamResponse:

        dash = self.dash
        await limit(request, dash.state.counters, "reset")
        data = await dash.presession_form(request)
        token = str(data.get("token") or "")[:256]
        password = str(data.get("password") or "")[:MAX_FIELD]
        problem = password_problem(password)
        if problem:
            raise error(400, problem + ".")
        store = dash.state.store
        if not await asyncio.to_thread(users.reset_valid, store, token):
            raise error(400, BAD_RESET)
        new_hash = await request.app[ACCOUNTS].passwords.hash(password)
        if not await asyncio.to_thread(users.use_reset, store, token, new_hash):
            raise error(400, BAD_RESET)
        return dash.render(
            request, "reset.html", await dash.viewer(request), token="", valid=True,
            signin_csrf="", done=True,
        )  # fmt: skip

    async def invite(self, request: web.Request) -> web.StreamResponse:

        dash = self.dash
        viewer, fields = await dash.form(request)
        if not viewer.operator:
            raise error(403, "Only the relay's operator makes invite codes.")
        settings = request.app[ACCOUNTS].settings
        code = await asyncio.to_thread(
            users.new_invite, dash.state.store, settings.invite_ttl, fields.get("note", "")[:200]
        )
        return dash.render(
            request,
            "invite.html",
            viewer,
            active="keys",
            code=code,
            days=int(settings.invite_ttl // 86400),
            policy=settings.signup,
        )


def setup(app: web.Application, dash: Dashboard) -> AccountPages:
    pages = AccountPages(dash)
    page = dash.page
    app.router.add_post("/dashboard/signin/password", page(pages.password_signin))
    app.router.add_get("/dashboard/reset", page(pages.reset_form))
    app.router.add_post("/dashboard/reset", page(pages.reset))
    app.router.add_post("/dashboard/invites", page(pages.invite))
    return pages
