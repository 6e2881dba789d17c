"""The pages a pair request's `pairUrl` (`/pair/{code}`) and a key request's `approvalUrl`
(`/approve/{code}`) open (route-table pages, `PAGE_HANDLERS`): who asks, approve or refuse when
signed in, a sign-in link and the CLI commands otherwise."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from vttrelay.dashboard.sessions import Viewer
from vttrelay.dashboard.views import (
    DASHBOARD,
    SIGNIN_WINDOW,
    TOO_MANY_GUESSES,
    Dashboard,
    Refused,
    with_query,
)
from vttrelay.relay import peer_limits
from vttrelay.relay.accounts import key_requests, pair_requests, pairing
from vttrelay.relay.accounts.client_ids import keeps_id
from vttrelay.relay.accounts.key_requests import KeyRequest
from vttrelay.relay.accounts.pair_requests import PairRequest
from vttrelay.relay.core import RelayError
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.dashboard.services import RelayServices
    from vttrelay.relay.store import RelayStore

log = logging.getLogger("vttrelay.dashboard")
Asked = TypeVar("Asked", PairRequest, KeyRequest)
Decided = TypeVar("Decided")


@dataclass
class RequestPages:
    """The pair and key request pages' handlers, bound to one dashboard."""

    dash: Dashboard

    async def asked(
        self, request: web.Request, get: Callable[[RelayStore, str], Asked | None], missing: str
    ) -> Asked:
        """The pair or key request of the path's code (`get` reads it); an unknown code counts
        as a miss against the asker, as on the status endpoints, and answers 404 `missing`."""
        found = await asyncio.to_thread(get, self.dash.state.store, request.match_info["code"])
        if found is None:
            await pairing.count_miss(request, self.dash.state.config, self.dash.state.counters)
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
        return self.dash.render(
            request,
            "request.html",
            viewer,
            code=found.code,
            details=[(k, v) for k, v in details if v],
            state=found.state(),
            **context,
        )

    async def pair_page(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.viewer(request)
        found = await self.asked(
            request,
            pair_requests.get_pair_request,
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

    async def redeemed_id(self, viewer: Viewer | None, ask: pair_requests.PairAsk) -> str:
        """Which client id the world gets when it pairs after approval (`client_ids.keeps_id`,
        the rule `POST /auth/pair` applies), in words for the approver."""
        if not ask.client_id:
            return (
                f"a new id, unless the world already has one of the approving account's ids for"
                f" world id {ask.world_id} (not connected now): it keeps that one"
            )
        known = await asyncio.to_thread(self.dash.state.store.known_client, ask.client_id)
        live = self.dash.state.registry.get(ask.client_id) is not None
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
        viewer = await self.dash.viewer(request)
        found = await self.asked(
            request,
            key_requests.get_key_request,
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
        state = self.dash.state
        name = peer_limits.account_bucket(peer_limits.MISSES, viewer.account)
        limit = state.config.code_miss_limit
        await pairing.check_misses(request, state.config, state.counters)
        if not await peer_limits.has_token_named(state.counters, name, limit, SIGNIN_WINDOW):
            raise Refused(429, TOO_MANY_GUESSES)
        try:
            return await asyncio.to_thread(decide, state.store, *args)
        except RelayError as exc:
            if exc.status == 404:
                await pairing.count_miss(request, state.config, state.counters)
                await peer_limits.take_named(state.counters, name, limit, SIGNIN_WINDOW)
            raise

    async def decide_pair(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.dash.form(request)
        code = request.match_info["code"]
        if request.match_info["decision"] == "approve":
            account = self.dash.account_for(viewer, fields.get("account"))
            await self.decided(request, viewer, pair_requests.approve_pair_request, code, account)
            log.info("dashboard (%s): approved a pair request", viewer.label)  # not its code
            return self.dash.redirect(f"/pair/{code}?msg=approved")
        await self.decided(request, viewer, pair_requests.refuse_pair_request, code)
        return self.dash.redirect(f"/pair/{code}?msg=refused")

    async def decide_key(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.dash.form(request)
        code = request.match_info["code"]
        if request.match_info["decision"] == "approve":
            account = self.dash.account_for(viewer, fields.get("account"))
            chosen = tuple(s for s in fields.get("scopes", "").split(",") if s)
            if not chosen:
                raise Refused(400, "Choose at least one scope")
            done = await self.decided(
                request,
                viewer,
                functools.partial(key_requests.approve_key_request, scopes=chosen),
                code,
                account,
            )
            log.info("dashboard (%s): approved a key request", viewer.label)  # not its code
            if done.exchange_code is not None:  # the web flow: the app gets it by its callback
                return self.dash.render(
                    request,
                    "approved_key.html",
                    viewer,
                    request_=done.request,
                    done=done,
                    continue_url=with_query(done.request.ask.callback_url, code=done.exchange_code),
                )
            return self.dash.redirect(f"/approve/{code}?msg=approved")
        await self.decided(request, viewer, key_requests.refuse_key_request, code)
        return self.dash.redirect(f"/approve/{code}?msg=refused")


def setup(app: web.Application, dash: Dashboard) -> RequestPages:
    page = RequestPages(dash)
    r = app.router
    r.add_post("/dashboard/pair/{code}/{decision:approve|refuse}", dash.page(page.decide_pair))
    r.add_post("/dashboard/approve/{code}/{decision:approve|refuse}", dash.page(page.decide_key))
    app[REQUEST_PAGES] = page
    return page


REQUEST_PAGES = web.AppKey("vttrelay_dashboard_requests", RequestPages)


async def _pair_page(
    request: web.Request, route: Route, state: RelayServices
) -> web.StreamResponse:
    # a JSON 429, as the status polls answer it
    await pairing.check_misses(request, state.config, state.counters)
    dash = request.app[DASHBOARD]
    return await dash.page(request.app[REQUEST_PAGES].pair_page)(request)


async def _key_page(request: web.Request, route: Route, state: RelayServices) -> web.StreamResponse:
    await pairing.check_misses(request, state.config, state.counters)
    dash = request.app[DASHBOARD]
    return await dash.page(request.app[REQUEST_PAGES].key_page)(request)


# The route table's page handlers (`GET /pair/{code}`, `GET /approve/{code}`), for app.py
PAGE_HANDLERS = {"pair_page": _pair_page, "key_page": _key_page}
