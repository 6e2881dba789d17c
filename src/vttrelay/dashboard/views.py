"""The dashboard's pages and the changes they make, served by the relay (`setup(app, state)`).

Pages (all under `<base>/dashboard/`, `<base>` being `RelayConfig.base_path`, the prefix a
reverse proxy serves the relay under):

- `signin` (GET: the form a sign-in link opens; POST: redeem the one-time token, rate-limited
  per IP) and `signout`.
- `worlds`: the viewer's live worlds (system, versions, since when, from where, requests per
  minute, subscribers per channel; `?part=live` is the table alone, refreshed by the page),
  disconnect, revoke a world's connection tokens, mint a pairing code, and (operator) the pair
  and key requests waiting for a decision.
- `keys`: list (usage, last use), create (scopes grouped and explained, allowed worlds, forced
  user, expiry, rate; the secret shown once), revoke.
- `events`: live events, read by the browser from the SSE routes themselves with an API key.
- `console`: a request form per route of the route table; the browser calls the route itself.
- `/pair/{code}` and `/approve/{code}` (route-table pages, `PAGE_HANDLERS`): who asks, approve or
  refuse when signed in, a sign-in link and the CLI commands otherwise.

Every change is a POST carrying the session's CSRF token (form field `csrf` or header
`X-CSRF-Token`); a viewer acts only on its own account unless it is the operator. Sessions are
HttpOnly cookies with SameSite=Lax (a pairUrl opened from the tabletop's page is a top-level
cross-site navigation: Lax keeps the visitor signed in there, CSRF tokens guard the changes).
Store reads and writes run in worker threads (`asyncio.to_thread`), as everywhere in the relay:
the store may be a PostgreSQL server, and the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import orjson
from aiohttp import web
from markupsafe import Markup
from multidict import MultiDictProxy

from vttrelay import __version__, protocol
from vttrelay.dashboard import scopes as scope_info
from vttrelay.dashboard.sessions import (
    Viewer,
    end_session,
    redeem_signin_token,
    session_viewer,
)
from vttrelay.protocol import Close
from vttrelay.relay import peer_limits
from vttrelay.relay.accesslog import escape
from vttrelay.relay.accounts import approvals, pairing
from vttrelay.relay.accounts.approvals import KeyRequest, PairRequest
from vttrelay.relay.accounts.client_ids import keeps_id
from vttrelay.relay.accounts.expiry import parse_expiry
from vttrelay.relay.accounts.mail import base_url
from vttrelay.relay.accounts.services import ACCOUNTS
from vttrelay.relay.core import RelayError
from vttrelay.relay.link.connection import WorldConnection
from vttrelay.relay.routes import ALL_SCOPES, MISSING, ROUTES, STREAM_ROUTES, Route

if TYPE_CHECKING:
    import jinja2

    from vttrelay.relay.app import RelayState
    from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.dashboard")
Asked = TypeVar("Asked", PairRequest, KeyRequest)
Decided = TypeVar("Decided")

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


def _iso(ts: float | None) -> str:
    if not ts:
        return ""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ago(ts: float | None, now: float | None = None) -> str:
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


@dataclass(frozen=True)
class WorldRow:
    """One world as the worlds page shows it."""

    client_id: str
    account: str
    title: str
    system: str
    foundry: str
    since: str
    since_ago: str
    origin: str
    rpm: int
    subscribers: dict[str, int]
    online: bool
    instance: str = ""  # the relay instance holding a live world, when it is not this one


def path_segment(text: str) -> str:
    """`text` as one URL path segment (every `/`, `?`, `#`, `%` quoted): for ids in form actions,
    which `protocol.valid_id` already keeps free of `.` and `..` segments."""
    return quote(str(text), safe="")


def json_data(value: Any) -> Markup:
    """JSON safe to place inside a `<script type="application/json">` element."""
    text = orjson.dumps(value).decode()
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _param_json(route: Route) -> list[dict[str, Any]]:
    return [
        {
            "name": p.name,
            "type": p.type or "any",
            "sources": list(p.sources),
            "required": p.required,
            "default": None if p.default is MISSING else p.default,
            "description": p.description,
        }
        for p in route.params
    ]


def console_routes() -> list[dict[str, Any]]:
    """The routes the console offers (every REST route but streams and pages), as JSON data."""
    return [
        {
            "method": r.method,
            "path": r.path,
            "summary": r.summary,
            "group": r.group,
            "scope": r.scope,
            "params": _param_json(r),
        }
        for r in ROUTES
        if r.mode != "stream" and r.extra.get("content_type") != "text/html"
    ]


def stream_routes() -> list[dict[str, Any]]:
    return [
        {"path": r.path, "channel": r.channel, "summary": r.summary, "params": _param_json(r)}
        for r in STREAM_ROUTES
    ]


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

    def __init__(self, state: RelayState) -> None:
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
        env.filters["iso"] = _iso
        env.filters["ago"] = _ago
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

    async def signin_form(self, request: web.Request) -> web.StreamResponse:
        """The sign-in form, with a fresh pre-session CSRF token: in a hidden field and in a
        SameSite=Strict cookie (`SIGNIN_COOKIE`); the POST must carry both, equal."""
        csrf = secrets.token_urlsafe(24)
        response = self.render(
            request,
            "signin.html",
            await self.viewer(request),
            token=request.query.get("token", ""),
            next=safe_next(request.query.get("next")),
            signin_csrf=csrf,
        )
        return with_signin_csrf(request, response, csrf)

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

    async def signin(self, request: web.Request) -> web.StreamResponse:
        """Redeem a one-time sign-in token (after `signin_checks`)."""
        data, current = await self.signin_checks(request)
        token = str(data.get("token") or "").strip()
        if "token=" in token:  # a whole link was pasted
            token = token.split("token=", 1)[1].split("&", 1)[0]
        opened = await asyncio.to_thread(
            redeem_signin_token, self.state.store, token, self.state.config.session_ttl
        )
        if opened is None:
            raise Refused(401, BAD_LINK)
        return await self.signed_in_as(request, opened, current, data, "link")

    async def signout(self, request: web.Request) -> web.StreamResponse:
        await self.form(request)
        await asyncio.to_thread(end_session, self.state.store, request.cookies.get(COOKIE, ""))
        response = self.redirect("/dashboard/signin?msg=signed-out")
        response.del_cookie(COOKIE, path=self.base or "/")
        return response

    async def home(self, request: web.Request) -> web.StreamResponse:
        return self.redirect("/dashboard/worlds")

    # Worlds ----------------------------------------------------------------------------------

    async def world_rows(self, viewer: Viewer) -> list[WorldRow]:
        state = self.state
        hub = state.streams.hub
        rows: list[WorldRow] = []
        live: set[str] = set()
        known_clients = await asyncio.to_thread(state.store.known_clients, viewer.account)
        if viewer.account is not None:
            accounts = {viewer.account}
        else:  # every account with a live world here, or one that ever connected anywhere
            accounts = {w.account for w in state.registry} | {k.account for k in known_clients}
        # the directory's listing, as /clients: this instance's worlds and the others'
        found = [w for account in accounts for w in state.registry.for_account(account)]
        for world in sorted(found, key=lambda w: w.client_id):
            live.add(world.client_id)
            meta = world.metadata
            here = world if isinstance(world, WorldConnection) else None
            since = (meta.get("connectedSince") or 0) / 1000
            rows.append(
                WorldRow(
                    client_id=world.client_id,
                    account=world.account,
                    title=str(meta.get("worldTitle") or meta.get("worldId") or ""),
                    system=_system(meta),
                    foundry=str(meta.get("foundryVersion") or ""),
                    since=_iso(since),
                    since_ago=_ago(since),
                    origin=str(meta.get("ipAddress") or getattr(world, "peer_host", "") or ""),
                    rpm=here.requests_per_minute() if here else 0,
                    subscribers={
                        ch: n
                        for ch in protocol.CHANNELS
                        if here and (n := hub.count(world.client_id, ch)) > 0
                    },
                    online=True,
                    instance="" if here else str(world.instance_id or ""),
                )
            )
        for known in known_clients:
            if known.client_id in live:
                continue
            meta = known.metadata
            rows.append(
                WorldRow(
                    client_id=known.client_id,
                    account=known.account,
                    title=str(meta.get("worldTitle") or meta.get("worldId") or known.token_name),
                    system=_system(meta),
                    foundry=str(meta.get("foundryVersion") or ""),
                    since=_iso(known.last_seen),
                    since_ago=_ago(known.last_seen),
                    origin=str(meta.get("ipAddress") or ""),
                    rpm=0,
                    subscribers={},
                    online=False,
                )
            )
        return rows

    async def worlds(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.signed_in(request)
        rows = await self.world_rows(viewer)
        if request.query.get("part") == "live":
            return self.render(request, "worlds_table.html", viewer, worlds=rows)
        store = self.state.store
        pair_requests: list[approvals.PairRequest] = []
        key_requests: list[approvals.KeyRequest] = []
        if viewer.operator:
            pair_requests = await asyncio.to_thread(approvals.pair_requests, store)
            key_requests = await asyncio.to_thread(approvals.key_requests, store)
        return self.render(
            request,
            "worlds.html",
            viewer,
            active="worlds",
            worlds=rows,
            pair_requests=pair_requests,
            key_requests=key_requests,
        )

    async def _world_account(self, viewer: Viewer, client_id: str) -> str:
        """The account of a world the viewer may manage (live or known), else 404."""
        world = self.state.registry.get(client_id)
        known = await asyncio.to_thread(self.state.store.known_client, client_id)
        account = world.account if world else known.account if known else None
        if account is None or not viewer.sees(account):
            raise Refused(404, "No such world")
        return account

    async def disconnect(self, request: web.Request) -> web.StreamResponse:
        viewer, _ = await self.form(request)
        client_id = request.match_info["client_id"]
        await self._world_account(viewer, client_id)
        world = self.state.registry.get(client_id)
        if world is None:
            raise Refused(404, "This world is not connected")
        log.info("dashboard (%s): disconnecting world %s", viewer.label, client_id)
        if isinstance(world, WorldConnection):
            await world.close(Close.NORMAL, "Disconnected from the dashboard")
        else:  # scaled out, its socket is on another instance: the directory's close-token
            # message reaches it (a token connects only as its one client id)
            token_id = getattr(world, "token_id", "")
            if not token_id:
                raise Refused(409, "This world is connected to another relay instance")
            await self.state.registry.close_token(
                token_id, Close.NORMAL, "Disconnected from the dashboard"
            )
        return self.redirect("/dashboard/worlds?msg=disconnected")

    async def revoke_world(self, request: web.Request) -> web.StreamResponse:
        viewer, _ = await self.form(request)
        client_id = request.match_info["client_id"]
        account = await self._world_account(viewer, client_id)
        store, registry = self.state.store, self.state.registry
        listed = await asyncio.to_thread(store.list_tokens, account)
        tokens = [t for t in listed if t.client_id == client_id and not t.revoked_at]
        for token in tokens:
            await asyncio.to_thread(store.revoke_token_id, token.id)
            await registry.close_token(token.id, Close.AUTH_PROTOCOL, "Connection token revoked")
        log.info("dashboard (%s): revoked %d token(s) of %s", viewer.label, len(tokens), client_id)
        return self.redirect("/dashboard/worlds?msg=revoked-world")

    async def mint_code(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.form(request)
        account = self.account_for(viewer, fields.get("account"))
        code = await asyncio.to_thread(self.state.store.create_pairing_code, account)
        public = request.app[ACCOUNTS].settings.public_url
        return self.render(
            request,
            "pairing_code.html",
            viewer,
            active="worlds",
            code=code,
            account=account,
            relay_url=base_url(public, request, self.base),
        )

    # Pair and key requests -------------------------------------------------------------------

    async def asked(
        self, request: web.Request, get: Callable[[RelayStore, str], Asked | None], missing: str
    ) -> Asked:
        """The pair or key request of the path's code (`get` reads it); an unknown code counts
        as a miss against the asker, as on the status endpoints, and answers 404 `missing`."""
        found = await asyncio.to_thread(get, self.state.store, request.match_info["code"])
        if found is None:
            await pairing.count_miss(request, self.state)
            raise Refused(404, missing)
        return found

    def request_page(
        self,
        request: web.Request,
        viewer: Viewer | None,
        found: PairRequest | KeyRequest,
        details: list[tuple[str, str]],
        **context: Any,
    ) -> web.Response:
        """The approval page of a request: its non-empty details, its state and `context`."""
        return self.render(
            request,
            "request.html",
            viewer,
            code=found.code,
            details=[(k, v) for k, v in details if v],
            state=found.state(),
            **context,
        )

    async def pair_page(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.viewer(request)
        found = await self.asked(
            request,
            approvals.get_pair_request,
            "Pair request not found: no pair request has this code.",
        )
        ask = found.ask
        system = f"{ask.system_title or ask.system_id} v{ask.system_version}".strip()
        details = [
            ("Code", found.code),
            ("World", ask.world),
            ("System", system if ask.system_title or ask.system_id else ""),
            ("Foundry", f"v{ask.foundry_version}" if ask.foundry_version else ""),
            ("Client id", await self.redeemed_id(viewer, ask)),
            ("Cross-world scopes", ", ".join(ask.remote_scopes)),
            ("Target worlds", ", ".join(ask.target_clients)),
            ("From", found.peer),
            ("Expires", pairing.rfc3339(found.expires_at)),
        ]
        title = "Upgrade World Permissions" if ask.upgrade_only else "Pair Foundry World"
        return self.request_page(
            request,
            viewer,
            found,
            details,
            title=title,
            kind="pair request",
            command="vttrelay pair",
            action=f"/dashboard/pair/{found.code}",
            next=f"/pair/{found.code}",
            scopes=(),
        )

    async def redeemed_id(self, viewer: Viewer | None, ask: approvals.PairAsk) -> str:
        """Which client id the world gets when it pairs after approval (`client_ids.keeps_id`,
        the rule `POST /auth/pair` applies), in words for the approver."""
        if not ask.client_id:
            return (
                f"a new id, unless the world already has one of the approving account's ids for"
                f" world id {ask.world_id} (not connected now): it keeps that one"
            )
        known = await asyncio.to_thread(self.state.store.known_client, ask.client_id)
        live = self.state.registry.get(ask.client_id) is not None
        owner = known.account if known else None
        account = viewer.account if viewer and viewer.account else owner or "default"
        stored = known.metadata if known else None
        if keeps_id(owner, stored, account, ask.world_id, live):
            where = "" if viewer and viewer.account or not owner else f", if approved for {owner}"
            return f"{ask.client_id} (kept: the world keeps its id{where})"
        why = (
            "is connected now"
            if live
            else "is another account's world"
            if owner != account
            else "is another world's id"
        )
        return f"a new id ({ask.client_id} {why})"

    async def key_page(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.viewer(request)
        found = await self.asked(
            request,
            approvals.get_key_request,
            "Key request not found: no API key request has this code.",
        )
        ask = found.ask
        limit = ask.suggested_monthly_limit
        details = [
            ("Code", found.code),
            ("App", ask.app_name),
            ("Description", ask.app_description),
            ("App URL", ask.app_url),
            ("Callback URL", ask.callback_url),
            ("Worlds", ", ".join(ask.client_ids)),
            ("Suggested monthly limit", str(limit) if limit is not None else ""),
            ("Suggested expiry", ask.suggested_expiry),
            ("From", found.peer),
            ("Expires", pairing.rfc3339(found.expires_at)),
        ]
        return self.request_page(
            request,
            viewer,
            found,
            details,
            title="Approve API Key Request",
            kind="key request",
            command="vttrelay keys",
            action=f"/dashboard/approve/{found.code}",
            next=f"/approve/{found.code}",
            scopes=ask.scopes,
        )

    async def decided(
        self, request: web.Request, viewer: Viewer, decide: Callable[..., Decided], *args: Any
    ) -> Decided:
        """Run `decide(store, *args)` (an approval or refusal by code) off the event loop. A code
        that names no request counts as a miss against the viewer's account, its address and
        all callers (`pairing.count_miss`), like a status poll's; once a budget is spent the
        viewer decides nothing by code for the rest of the window (issue 20 item 12)."""
        state = self.state
        name = peer_limits.account_bucket(peer_limits.MISSES, viewer.account)
        limit = state.config.code_miss_limit
        await pairing.check_misses(request, state)
        if not await peer_limits.has_token_named(state.counters, name, limit, SIGNIN_WINDOW):
            raise Refused(429, TOO_MANY_GUESSES)
        try:
            return await asyncio.to_thread(decide, state.store, *args)
        except RelayError as exc:
            if exc.status == 404:
                await pairing.count_miss(request, state)
                await peer_limits.take_named(state.counters, name, limit, SIGNIN_WINDOW)
            raise

    async def decide_pair(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.form(request)
        code = request.match_info["code"]
        if request.match_info["decision"] == "approve":
            account = self.account_for(viewer, fields.get("account"))
            await self.decided(request, viewer, approvals.approve_pair_request, code, account)
            log.info("dashboard (%s): approved pair request %s", viewer.label, code)
            return self.redirect(f"/pair/{code}?msg=approved")
        await self.decided(request, viewer, approvals.refuse_pair_request, code)
        return self.redirect(f"/pair/{code}?msg=refused")

    async def decide_key(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.form(request)
        code = request.match_info["code"]
        if request.match_info["decision"] == "approve":
            account = self.account_for(viewer, fields.get("account"))
            chosen = tuple(s for s in fields.get("scopes", "").split(",") if s)
            if not chosen:
                raise Refused(400, "Choose at least one scope")
            done = await self.decided(
                request,
                viewer,
                functools.partial(approvals.approve_key_request, scopes=chosen),
                code,
                account,
            )
            log.info("dashboard (%s): approved key request %s", viewer.label, code)
            if done.exchange_code is not None:  # the web flow: the app gets it by its callback
                return self.render(
                    request,
                    "approved_key.html",
                    viewer,
                    request_=done.request,
                    done=done,
                    continue_url=with_query(done.request.ask.callback_url, code=done.exchange_code),
                )
            return self.redirect(f"/approve/{code}?msg=approved")
        await self.decided(request, viewer, approvals.refuse_key_request, code)
        return self.redirect(f"/approve/{code}?msg=refused")

    # Keys ------------------------------------------------------------------------------------

    async def keys(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.signed_in(request)
        return await self.render_keys(request, viewer)

    async def render_keys(
        self, request: web.Request, viewer: Viewer, status: int = 200, **context: Any
    ) -> web.Response:
        store = self.state.store
        await asyncio.to_thread(self.state.usage.flush)  # counts include the last seconds
        context.setdefault("form", {})
        context.setdefault("error", "")
        context.setdefault("created", None)
        now = time.time()
        every = await asyncio.to_thread(store.list_keys, viewer.account)
        show_all = request.query.get("all") == "1"
        live = [k for k in every if k.enabled and not k.expired(now)]
        return self.render(
            request,
            "keys.html",
            viewer,
            status,
            active="keys",
            keys=every if show_all else live,
            hidden=0 if show_all else len(every) - len(live),
            show_all=show_all,
            groups=scope_info.scope_groups(),
            worlds=await self.world_rows(viewer),
            default_rate=self.state.config.rate_per_minute,
            now=now,
            **context,
        )

    async def create_key(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.form(request)
        try:
            made = await self._key_fields(viewer, fields)
        except Refused as exc:
            return await self.render_keys(
                request, viewer, exc.status, form=fields, error=exc.message
            )
        key_id, secret = await asyncio.to_thread(self.state.store.create_key, **made)
        log.info("dashboard (%s): created key %s", viewer.label, key_id)
        created = {"id": key_id, "secret": secret, **made}
        return await self.render_keys(request, viewer, created=created)

    async def _key_fields(self, viewer: Viewer, fields: dict[str, str]) -> dict[str, Any]:
        """The checked arguments of `RelayStore.create_key` from the key form."""
        account = self.account_for(viewer, fields.get("account"))
        chosen = [s for s in fields.get("scopes", "").split(",") if s]
        if not chosen:
            raise Refused(400, "Choose at least one scope")
        for scope in chosen:
            if scope not in ALL_SCOPES:
                raise Refused(400, f"Invalid scope: {scope}")
        worlds = [w for w in fields.get("worlds", "").split(",") if w]
        for client_id in worlds:
            known = await asyncio.to_thread(self.state.store.known_client, client_id)
            if known is None or known.account != account:
                raise Refused(400, f"World {client_id} is not a world of account {account}")
        expires_at = None
        if expiry := fields.get("expires", "").strip():
            try:
                expires_at = parse_expiry(expiry)  # the CLI's rule: 30d, 12h, or an ISO date
            except ValueError as exc:
                raise Refused(400, f"Expiry: {exc}") from None
            if expires_at <= time.time():
                raise Refused(400, "Expiry: the date is in the past")
        rate = None
        if text := fields.get("rate", "").strip():
            if not text.isdigit() or int(text) > 1_000_000:
                raise Refused(400, "Rate: a whole number of requests per minute (0: unlimited)")
            rate = int(text)
        user_id = fields.get("user", "").strip() or None
        name = fields.get("name", "").strip()
        if len(name) > 128 or (user_id and len(user_id) > 128):
            raise Refused(400, "Name and user id: at most 128 characters")
        return {
            "account": account,
            "scopes": chosen,
            "client_ids": worlds,
            "user_id": user_id,
            "expires_at": expires_at,
            "rate_per_minute": rate,
            "name": name,
        }

    async def revoke_key(self, request: web.Request) -> web.StreamResponse:
        viewer, _ = await self.form(request)
        key = await asyncio.to_thread(self.state.store.get_key, request.match_info["key_id"])
        if key is None or not viewer.sees(key.account):
            raise Refused(404, "No such key")
        await asyncio.to_thread(self.state.store.revoke_key, key.id)
        self.state.keys.clear()  # the revocation applies now, not after the cache's seconds
        log.info("dashboard (%s): revoked key %s", viewer.label, key.id)
        return self.redirect("/dashboard/keys?msg=revoked-key")

    # Live events and console -----------------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.signed_in(request)
        live = [w for w in await self.world_rows(viewer) if w.online]
        return self.render(
            request, "events.html", viewer, active="events", worlds=live, streams=stream_routes()
        )

    async def console(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.signed_in(request)
        live = [w for w in await self.world_rows(viewer) if w.online]
        return self.render(
            request, "console.html", viewer, active="console", worlds=live, routes=console_routes()
        )

    async def favicon(self, request: web.Request) -> web.StreamResponse:
        """`/favicon.ico`, which browsers ask for on every page."""
        return self.static_file("favicon.ico")

    async def static(self, request: web.Request) -> web.StreamResponse:
        return self.static_file(request.match_info["name"])

    def static_file(self, name: str) -> web.StreamResponse:
        path = STATIC / name
        kind = STATIC_TYPES.get(path.suffix)
        if kind is None or "/" in name or name.startswith(".") or not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(
            body=path.read_bytes(),
            content_type=kind,
            headers={"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"},
        )


def _system(meta: dict[str, Any]) -> str:
    name = str(meta.get("systemTitle") or meta.get("systemId") or "")
    version = str(meta.get("systemVersion") or "")
    return f"{name} {version}".strip()


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


def setup(app: web.Application, state: RelayState) -> Dashboard:
    """Add the dashboard's own pages to the relay application (`mount.install` adds them all)."""
    dash = Dashboard(state)
    app[DASHBOARD] = dash
    page = dash.page
    r = app.router
    r.add_get("/dashboard", page(dash.home))
    r.add_get("/dashboard/", page(dash.home))
    r.add_get("/dashboard/signin", page(dash.signin_form))
    r.add_post("/dashboard/signin", page(dash.signin))
    r.add_post("/dashboard/signout", page(dash.signout))
    r.add_get("/dashboard/worlds", page(dash.worlds))
    r.add_post("/dashboard/worlds/{client_id}/disconnect", page(dash.disconnect))
    r.add_post("/dashboard/worlds/{client_id}/revoke", page(dash.revoke_world))
    r.add_post("/dashboard/pairing-codes", page(dash.mint_code))
    r.add_post("/dashboard/pair/{code}/{decision:approve|refuse}", page(dash.decide_pair))
    r.add_post("/dashboard/approve/{code}/{decision:approve|refuse}", page(dash.decide_key))
    r.add_get("/dashboard/keys", page(dash.keys))
    r.add_post("/dashboard/keys", page(dash.create_key))
    r.add_post("/dashboard/keys/{key_id}/revoke", page(dash.revoke_key))
    r.add_get("/dashboard/events", page(dash.events))
    r.add_get("/dashboard/console", page(dash.console))
    r.add_get("/dashboard/static/{name}", dash.static)
    r.add_get("/favicon.ico", dash.favicon)
    return dash


async def _pair_page(request: web.Request, route: Route, state: RelayState) -> web.StreamResponse:
    await pairing.check_misses(request, state)  # a JSON 429, as the status polls answer it
    dash = request.app[DASHBOARD]
    return await dash.page(dash.pair_page)(request)


async def _key_page(request: web.Request, route: Route, state: RelayState) -> web.StreamResponse:
    await pairing.check_misses(request, state)
    dash = request.app[DASHBOARD]
    return await dash.page(dash.key_page)(request)


# The route table's page handlers (`GET /pair/{code}`, `GET /approve/{code}`), for app.py
PAGE_HANDLERS = {"pair_page": _pair_page, "key_page": _key_page}
