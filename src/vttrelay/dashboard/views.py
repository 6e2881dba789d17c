"""The dashboard's core, which every page of `pages/` builds on: the `Dashboard` of one relay
application (`request.app[DASHBOARD]`, made by `setup(app, state)`): templates, responses, who
is looking (session and CSRF checks), the sign-in checks shared by the link and password forms,
and the small helpers pages share. The pages themselves (all under `<base>/dashboard/`, `<base>`
being `RelayConfig.base_path`, the prefix a reverse proxy serves the relay under) are one module
each in `pages/`; `mount.install` adds them.

Every change is a POST carrying the session's CSRF token (form field `csrf` or header
`X-CSRF-Token`); a viewer acts only on its own account unless it is the operator. Sessions are
HttpOnly cookies with SameSite=Lax (a pairUrl opened from the tabletop's page is a top-level
cross-site navigation: Lax keeps the visitor signed in there, CSRF tokens guard the changes).
Store reads and writes run in worker threads (`asyncio.to_thread`), as everywhere in the relay:
the store may be a PostgreSQL server, and the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import orjson
from aiohttp import web
from markupsafe import Markup
from multidict import MultiDictProxy

from vttrelay import __version__, protocol
from vttrelay.dashboard.sessions import (
    Viewer,
    end_session,
    session_viewer,
)
from vttrelay.relay import peer_limits
from vttrelay.relay.accesslog import escape
from vttrelay.relay.core import RelayError

if TYPE_CHECKING:
    import jinja2

    from vttrelay.dashboard.services import RelayServices

log = logging.getLogger("vttrelay.dashboard")

HERE = Path(__file__).parent
STATIC = HERE / "static"
COOKIE = "vttrelay_session"
SIGNIN_COOKIE = "vttrelay_signin"  # the sign-in form's CSRF token (no session yet)
SIGNIN_WINDOW = 15 * 60.0  # sign-in attempts are counted per IP over 15 minutes
MAX_FORM_BYTES = 64 * 1024
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self';"
    " script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none';"
    " form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # sign-in links carry a token
    "Cache-Control": "no-store",
}
STATIC_TYPES = {
    ".css": "text/css",
    ".js": "text/javascript",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}
MESSAGES = {  # ?msg= after a change (fixed texts: the query never carries free text)
    "disconnected": "The world was disconnected.",
    "revoked-world": "The world's connection token was revoked; it can no longer connect.",
    "revoked-key": "The key was revoked: calls with it now get 401.",
    "approved": "Approved.",
    "refused": "Refused.",
    "signed-out": "You are signed out.",
}
TOO_MANY_GUESSES = "Too many unknown request codes, please try again later."
TOO_MANY_SIGNINS = "Too many sign-in attempts from this address, please try again later."
BAD_LINK = (
    "This sign-in link is not valid: it was already used, has expired, or was mistyped. "
    "Run `vttrelay dashboard-link` for a new one."
)
SIGNED_IN_ALREADY = (
    "You are already signed in as {label}. Open the sign-in page again to replace that session"
    " (it says so), or sign out first."
)
CSRF_FAILED = (
    "This form is out of date or came from another site (CSRF check failed). "
    "Reload the page and try again."
)


class Refused(Exception):
    """A dashboard request refused: shown as a page with this status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def iso_time(ts: float | None) -> str:
    if not ts:
        return ""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(ts: float | None, now: float | None = None) -> str:
    """`5 s ago`, `3 min ago`, `2 h ago`, `4 d ago` (empty for no time)."""
    if not ts:
        return ""
    seconds = max(0, int((now or time.time()) - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


def safe_next(text: str | None) -> str:
    """A relay path to go to after signing in (`/pair/ABC`), or "" if it is not a local path."""
    if not text or not text.startswith("/") or text.startswith("//") or "\\" in text:
        return ""
    return text if len(text) <= 512 and all(31 < ord(c) < 127 for c in text) else ""


def path_segment(text: str) -> str:
    """`text` as one URL path segment (every `/`, `?`, `#`, `%` quoted): for ids in form actions,
    which `protocol.valid_id` already keeps free of `.` and `..` segments."""
    return quote(str(text), safe="")


def json_data(value: Any) -> Markup:
    """JSON safe to place inside a `<script type="application/json">` element."""
    text = orjson.dumps(value).decode()
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def with_signin_csrf(request: web.Request, response: web.Response, csrf: str) -> web.Response:
    """`response` with the pre-session CSRF cookie (`SIGNIN_COOKIE`) of a form shown before
    anyone is signed in (sign-in, password reset); its POST must carry the same token."""
    response.set_cookie(
        SIGNIN_COOKIE,
        csrf,
        max_age=int(SIGNIN_WINDOW),
        path="/",  # whatever prefix a proxy serves the relay under
        httponly=True,
        samesite="Strict",
        secure=_https(request),
    )
    return response


class Dashboard:
    """The dashboard of one relay application (`request.app[DASHBOARD]`)."""

    def __init__(self, state: RelayServices) -> None:
        self.state = state
        self.base = state.config.base_path

    @cached_property
    def env(self) -> jinja2.Environment:
        """The template engine, built on the first page rendered: Jinja2 is imported then, not
        when the relay starts. Measured: about 1.3 MiB of resident memory and 0.02 s of start-up
        a relay whose dashboard is never opened doesn't pay (bench/RESULTS.md "Start-up")."""
        import jinja2

        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["iso"] = iso_time
        env.filters["ago"] = ago
        env.filters["json"] = json_data
        env.filters["segment"] = path_segment
        env.tests["valid_id"] = protocol.valid_id
        return env

    # Responses -------------------------------------------------------------------------------

    def render(
        self,
        request: web.Request,
        template: str,
        viewer: Viewer | None,
        status: int = 200,
        **context: Any,
    ) -> web.Response:
        text = self.env.get_template(template).render(
            base=self.base,
            dash=self.base + "/dashboard",
            viewer=viewer,
            version=__version__,
            message=MESSAGES.get(request.query.get("msg", ""), ""),
            **context,
        )
        return web.Response(
            text=text, status=status, content_type="text/html", headers=SECURITY_HEADERS
        )

    def redirect(self, path: str) -> web.Response:
        """303 to `<base><path>` (a relay path)."""
        return web.Response(status=303, headers={"Location": self.base + path, **SECURITY_HEADERS})

    def page(self, handler: Handler) -> Handler:
        """`handler` with a `Refused` (or a relay error from the rules it calls) shown as a page."""

        async def wrapped(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request)
            except Refused as exc:
                return await self.error_page(request, exc.status, exc.message)
            except RelayError as exc:
                return await self.error_page(request, exc.status, exc.message)

        return wrapped

    async def error_page(self, request: web.Request, status: int, message: str) -> web.Response:
        viewer = await self.viewer(request)
        return self.render(request, "error.html", viewer, status, code=status, error=message)

    # Who is looking --------------------------------------------------------------------------

    async def viewer(self, request: web.Request) -> Viewer | None:
        cookie = request.cookies.get(COOKIE)
        return await asyncio.to_thread(session_viewer, self.state.store, cookie)

    async def signed_in(self, request: web.Request) -> Viewer:
        """The viewer, or a redirect to the sign-in form that comes back here afterwards."""
        viewer = await self.viewer(request)
        if viewer is None:
            path = request.path_qs if request.method == "GET" else "/dashboard/worlds"
            raise web.HTTPSeeOther(
                self.base + "/dashboard/signin?" + _query({"next": path}), headers=SECURITY_HEADERS
            )
        return viewer

    async def form(self, request: web.Request) -> tuple[Viewer, dict[str, str]]:
        """A change's viewer and form fields, after the session and CSRF checks."""
        viewer = await self.viewer(request)
        if viewer is None:
            raise Refused(401, "You are not signed in (or your session has ended).")
        data = await form_data(request)
        fields = {k: v for k, v in data.items() if isinstance(v, str)}
        multi = {k: ",".join(str(v) for v in data.getall(k)) for k in data if k != "csrf"}
        if not viewer.csrf_ok(fields.get("csrf") or request.headers.get("X-CSRF-Token")):
            raise Refused(403, CSRF_FAILED)
        return viewer, {**fields, **multi}

    def account_for(self, viewer: Viewer, requested: str | None) -> str:
        """The account a change applies to: the owner's own, or the one the operator names."""
        if viewer.account is not None:
            if requested and requested != viewer.account:
                raise Refused(403, "You can only manage your own account.")
            return viewer.account
        account = (requested or "").strip() or "default"
        if len(account) > 128 or not account.isprintable():
            raise Refused(400, "Invalid account name")
        return account

    # Sign-in ---------------------------------------------------------------------------------

    async def signin_checks(self, request: web.Request) -> tuple[Any, Viewer | None]:
        """What every sign-in POST checks first (issue 20 item 3): the per-IP limit, that the
        request comes from this relay's own page (`same_origin`) with the form's pre-session
        CSRF token, and that an existing session is replaced only when the form said so (it
        tells the visitor who is signed in). Returns the form and the current viewer."""
        config = self.state.config
        limit = config.signin_rate_limit
        if not await peer_limits.take(
            self.state.counters, peer_limits.SIGNIN, request, limit, SIGNIN_WINDOW
        ):
            raise Refused(429, TOO_MANY_SIGNINS)
        data = await self.presession_form(request)
        current = await self.viewer(request)
        if current is not None and data.get("replace") != "1":
            raise Refused(409, SIGNED_IN_ALREADY.format(label=current.label))
        return data, current

    async def presession_form(self, request: web.Request) -> Any:
        """The fields of a form posted before anyone is signed in (sign-in, password reset),
        after its checks: sent from this relay's own page (`same_origin`) with the pre-session
        CSRF token of the form (`with_signin_csrf`)."""
        data = await form_data(request)
        sent = str(data.get("signin_csrf") or "")
        expected = request.cookies.get(SIGNIN_COOKIE, "")
        if not same_origin(request) or not (
            sent and expected and hmac.compare_digest(sent, expected)
        ):
            raise Refused(403, CSRF_FAILED)
        return data

    with_signin_csrf = staticmethod(with_signin_csrf)

    async def signed_in_as(
        self,
        request: web.Request,
        opened: tuple[str, Viewer],
        current: Viewer | None,
        data: Any,
        how: str,
    ) -> web.Response:
        """The answer to a successful sign-in: the session cookie, the previous session ended,
        and a redirect to where the visitor was going."""
        secret, viewer = opened
        log.info("dashboard sign-in (%s): %s from %s", how, escape(viewer.label), request.remote)
        if current is not None:
            await asyncio.to_thread(end_session, self.state.store, request.cookies.get(COOKIE, ""))
        response = self.redirect(safe_next(str(data.get("next") or "")) or "/dashboard/worlds")
        response.set_cookie(
            COOKIE,
            secret,
            max_age=int(self.state.config.session_ttl),
            path=self.base or "/",
            httponly=True,
            samesite="Lax",
            secure=_https(request),
        )
        response.del_cookie(SIGNIN_COOKIE, path="/")
        return response


async def form_data(request: web.Request) -> MultiDictProxy[Any]:
    """The request's form fields, read up to MAX_FORM_BYTES whatever the body's framing (a
    chunked body has no Content-Length to check first), else a 413 page."""
    try:
        return await request.clone(client_max_size=MAX_FORM_BYTES).post()
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, "Form too large") from None


def same_origin(request: web.Request) -> bool:
    """Whether a browser sent this request from the relay's own pages: an `Origin` header, when
    there is one, names this relay (as the browser reached it: its Host, or the host a trusted
    proxy forwarded, relay/forwarded.py), and `Sec-Fetch-Site` is not `cross-site`. A
    client that sends neither (curl), or `Origin: null` (what a browser sends from the
    dashboard's own pages: their Referrer-Policy is no-referrer), is judged by `Sec-Fetch-Site`
    and the CSRF token alone."""
    if request.headers.get("Sec-Fetch-Site", "") in ("cross-site", "same-site"):
        return False
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return True
    return urlsplit(origin).netloc == request.host


def _https(request: web.Request) -> bool:
    return request.scheme == "https"


def _query(params: dict[str, str]) -> str:
    return urlencode(params)


def with_query(url: str, **params: str) -> str:
    """`url` with these query parameters added (the web flow's callback gets `code`)."""
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit(parts._replace(query=query))


DASHBOARD = web.AppKey("vttrelay_dashboard", Dashboard)


def setup(app: web.Application, state: RelayServices) -> Dashboard:
    """The dashboard of this relay application, kept in it (`DASHBOARD`) for its pages."""
    dash = Dashboard(state)
    app[DASHBOARD] = dash
    return dash
