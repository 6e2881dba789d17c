"""The worlds page: the viewer's live worlds (system, versions, since when, from where, requests
per minute, subscribers per channel; `?part=live` is the table alone, refreshed by the page),
disconnect, revoke a world's connection tokens, mint a pairing code, and (operator) the pair and
key requests waiting for a decision."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from aiohttp import web

from vttrelay.dashboard.sessions import Viewer
from vttrelay.dashboard.views import Dashboard, Refused
from vttrelay.dashboard.worldlist import world_rows
from vttrelay.protocol import Close
from vttrelay.relay.accounts import key_requests, pair_requests
from vttrelay.relay.accounts.mail import base_url
from vttrelay.relay.accounts.services import ACCOUNTS
from vttrelay.relay.link.connection import WorldConnection

log = logging.getLogger("vttrelay.dashboard")


@dataclass
class WorldsPage:
    """The worlds page's handlers, bound to one dashboard."""

    dash: Dashboard

    async def worlds(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.signed_in(request)
        rows = await world_rows(self.dash.state, viewer)
        if request.query.get("part") == "live":
            return self.dash.render(request, "worlds_table.html", viewer, worlds=rows)
        store = self.dash.state.store
        waiting_pairs: list[pair_requests.PairRequest] = []
        waiting_keys: list[key_requests.KeyRequest] = []
        if viewer.operator:
            waiting_pairs = await asyncio.to_thread(pair_requests.pair_requests, store)
            waiting_keys = await asyncio.to_thread(key_requests.key_requests, store)
        return self.dash.render(
            request,
            "worlds.html",
            viewer,
            active="worlds",
            worlds=rows,
            pair_requests=waiting_pairs,
            key_requests=waiting_keys,
        )

    async def _world_account(self, viewer: Viewer, client_id: str) -> str:
        """The account of a world the viewer may manage (live or known), else 404."""
        world = self.dash.state.registry.get(client_id)
        known = await asyncio.to_thread(self.dash.state.store.known_client, client_id)
        account = world.account if world else known.account if known else None
        if account is None or not viewer.sees(account):
            raise Refused(404, "No such world")
        return account

    async def disconnect(self, request: web.Request) -> web.StreamResponse:
        viewer, _ = await self.dash.form(request)
        client_id = request.match_info["client_id"]
        await self._world_account(viewer, client_id)
        world = self.dash.state.registry.get(client_id)
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
            await self.dash.state.registry.close_token(
                token_id, Close.NORMAL, "Disconnected from the dashboard"
            )
        return self.dash.redirect("/dashboard/worlds?msg=disconnected")

    async def revoke_world(self, request: web.Request) -> web.StreamResponse:
        viewer, _ = await self.dash.form(request)
        client_id = request.match_info["client_id"]
        account = await self._world_account(viewer, client_id)
        store, registry = self.dash.state.store, self.dash.state.registry
        listed = await asyncio.to_thread(store.list_tokens, account)
        tokens = [t for t in listed if t.client_id == client_id and not t.revoked_at]
        for token in tokens:
            await asyncio.to_thread(store.revoke_token_id, token.id)
            await registry.close_token(token.id, Close.AUTH_PROTOCOL, "Connection token revoked")
        log.info("dashboard (%s): revoked %d token(s) of %s", viewer.label, len(tokens), client_id)
        return self.dash.redirect("/dashboard/worlds?msg=revoked-world")

    async def mint_code(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.dash.form(request)
        account = self.dash.account_for(viewer, fields.get("account"))
        code = await asyncio.to_thread(self.dash.state.store.create_pairing_code, account)
        public = request.app[ACCOUNTS].settings.public_url
        return self.dash.render(
            request,
            "pairing_code.html",
            viewer,
            active="worlds",
            code=code,
            account=account,
            relay_url=base_url(public, request, self.dash.base),
        )


def setup(app: web.Application, dash: Dashboard) -> WorldsPage:
    page = WorldsPage(dash)
    r = app.router
    r.add_get("/dashboard/worlds", dash.page(page.worlds))
    r.add_post("/dashboard/worlds/{client_id}/disconnect", dash.page(page.disconnect))
    r.add_post("/dashboard/worlds/{client_id}/revoke", dash.page(page.revoke_world))
    r.add_post("/dashboard/pairing-codes", dash.page(page.mint_code))
    return page
