"""The sign-in page (GET: the form a sign-in link opens; POST: redeem the one-time token,
rate-limited per IP), sign-out, and the dashboard's home (a redirect to the worlds page)."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass

from aiohttp import web

from vttrelay.dashboard.sessions import end_session, redeem_signin_token
from vttrelay.dashboard.views import (
    BAD_LINK,
    COOKIE,
    Dashboard,
    Refused,
    safe_next,
    with_signin_csrf,
)


@dataclass
class SigninPage:
    """The sign-in pages' handlers, bound to one dashboard."""

    dash: Dashboard

    async def signin_form(self, request: web.Request) -> web.StreamResponse:
        """The sign-in form, with a fresh pre-session CSRF token: in a hidden field and in a
        SameSite=Strict cookie (`SIGNIN_COOKIE`); the POST must carry both, equal."""
        csrf = secrets.token_urlsafe(24)
        response = self.dash.render(
            request,
            "signin.html",
            await self.dash.viewer(request),
            token=request.query.get("token", ""),
            next=safe_next(request.query.get("next")),
            signin_csrf=csrf,
        )
        return with_signin_csrf(request, response, csrf)

    async def signin(self, request: web.Request) -> web.StreamResponse:
        """Redeem a one-time sign-in token (after `signin_checks`)."""
        data, current = await self.dash.signin_checks(request)
        token = str(data.get("token") or "").strip()
        if "token=" in token:  # a whole link was pasted
            token = token.split("token=", 1)[1].split("&", 1)[0]
        opened = await asyncio.to_thread(
            redeem_signin_token, self.dash.state.store, token, self.dash.state.config.session_ttl
        )
        if opened is None:
            raise Refused(401, BAD_LINK)
        return await self.dash.signed_in_as(request, opened, current, data, "link")

    async def signout(self, request: web.Request) -> web.StreamResponse:
        await self.dash.form(request)
        await asyncio.to_thread(end_session, self.dash.state.store, request.cookies.get(COOKIE, ""))
        response = self.dash.redirect("/dashboard/signin?msg=signed-out")
        response.del_cookie(COOKIE, path=self.dash.base or "/")
        return response

    async def home(self, request: web.Request) -> web.StreamResponse:
        return self.dash.redirect("/dashboard/worlds")


def setup(app: web.Application, dash: Dashboard) -> SigninPage:
    page = SigninPage(dash)
    r = app.router
    r.add_get("/dashboard", dash.page(page.home))
    r.add_get("/dashboard/", dash.page(page.home))
    r.add_get("/dashboard/signin", dash.page(page.signin_form))
    r.add_post("/dashboard/signin", dash.page(page.signin))
    r.add_post("/dashboard/signout", dash.page(page.signout))
    return page
