"""The keys page: list (usage, last use), create (scopes grouped and explained, allowed worlds,
forced user, expiry, rate; the secret shown once), revoke."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from vttrelay.dashboard import scopes as scope_info
from vttrelay.dashboard.sessions import Viewer
from vttrelay.dashboard.views import Dashboard, Refused
from vttrelay.dashboard.worldlist import world_rows
from vttrelay.relay.accounts.expiry import parse_expiry
from vttrelay.relay.routes import ALL_SCOPES, SCOPE_PRESETS

log = logging.getLogger("vttrelay.dashboard")


@dataclass
class KeysPage:
    """The keys page's handlers, bound to one dashboard."""

    dash: Dashboard

    async def keys(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.signed_in(request)
        return await self.render_keys(request, viewer)

    async def render_keys(
        self, request: web.Request, viewer: Viewer, status: int = 200, **context: Any
    ) -> web.Response:
        store = self.dash.state.store
        await asyncio.to_thread(self.dash.state.usage.flush)  # counts include the last seconds
        context.setdefault("form", {})
        context.setdefault("error", "")
        context.setdefault("created", None)
        now = time.time()
        every = await asyncio.to_thread(store.list_keys, viewer.account)
        show_all = request.query.get("all") == "1"
        live = [k for k in every if k.enabled and not k.expired(now)]
        return self.dash.render(
            request,
            "keys.html",
            viewer,
            status,
            active="keys",
            keys=every if show_all else live,
            hidden=0 if show_all else len(every) - len(live),
            show_all=show_all,
            groups=scope_info.scope_groups(),
            presets=SCOPE_PRESETS,
            worlds=await world_rows(self.dash.state, viewer),
            default_rate=self.dash.state.config.rate_per_minute,
            now=now,
            **context,
        )

    async def create_key(self, request: web.Request) -> web.StreamResponse:
        viewer, fields = await self.dash.form(request)
        try:
            made = await self._key_fields(viewer, fields)
        except Refused as exc:
            return await self.render_keys(
                request, viewer, exc.status, form=fields, error=exc.message
            )
        key_id, secret = await asyncio.to_thread(self.dash.state.store.create_key, **made)
        log.info("dashboard (%s): created key %s", viewer.label, key_id)
        created = {"id": key_id, "secret": secret, **made}
        return await self.render_keys(request, viewer, created=created)

    async def _key_fields(self, viewer: Viewer, fields: dict[str, str]) -> dict[str, Any]:
        """The checked arguments of `RelayStore.create_key` from the key form."""
        account = self.dash.account_for(viewer, fields.get("account"))
        chosen = [s for s in fields.get("scopes", "").split(",") if s]
        if not chosen:
            raise Refused(400, "Choose at least one scope")
        for scope in chosen:
            if scope not in ALL_SCOPES:
                raise Refused(400, f"Invalid scope: {scope}")
        worlds = [w for w in fields.get("worlds", "").split(",") if w]
        for client_id in worlds:
            known = await asyncio.to_thread(self.dash.state.store.known_client, client_id)
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
        viewer, _ = await self.dash.form(request)
        key = await asyncio.to_thread(self.dash.state.store.get_key, request.match_info["key_id"])
        if key is None or not viewer.sees(key.account):
            raise Refused(404, "No such key")
        await asyncio.to_thread(self.dash.state.store.revoke_key, key.id)
        self.dash.state.keys.clear()  # the revocation applies now, not after the cache's seconds
        log.info("dashboard (%s): revoked key %s", viewer.label, key.id)
        return self.dash.redirect("/dashboard/keys?msg=revoked-key")


def setup(app: web.Application, dash: Dashboard) -> KeysPage:
    page = KeysPage(dash)
    r = app.router
    r.add_get("/dashboard/keys", dash.page(page.keys))
    r.add_post("/dashboard/keys", dash.page(page.create_key))
    r.add_post("/dashboard/keys/{key_id}/revoke", dash.page(page.revoke_key))
    return page
