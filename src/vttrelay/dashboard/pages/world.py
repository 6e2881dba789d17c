"""The world page a game master keeps open during a game (`/dashboard/worlds/{client_id}`): the
world's actors (name, portrait if any, HP bar, AC, level, conditions, concentration), the active
scene with its picture, the combat tracker with the current turn, and a feed of chat and rolls
in readable lines, all kept live from the world's event streams.

The page is a frame the browser fills (`static/world.js`): every read and every change (advance
the turn, damage or heal, toggle a condition, post to chat) is an API call of the session
(`pages/session_api.py`: through the request core as the account's own key, recorded in the
activity log), and the live part is one session stream of the chat, actor, combat and scene
channels. `GET .../feed` is the recent chat as readable lines (`feed.describe`), read through
the core too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import orjson
from aiohttp import web

from vttrelay import protocol
from vttrelay.dashboard.feed import describe
from vttrelay.dashboard.pages.session_api import SessionApi
from vttrelay.dashboard.views import Dashboard, Refused
from vttrelay.dashboard.worldlist import world_rows
from vttrelay.relay.core import RelayError
from vttrelay.relay.forward import error_response
from vttrelay.relay.params import extract

FEED_SIZE: Final = 30  # chat messages the feed starts with
LIVE_CHANNELS: Final = (
    protocol.CHAT_CHANNEL,
    protocol.ACTOR_CHANNEL,
    protocol.COMBAT_CHANNEL,
    protocol.SCENE_CHANNEL,
)


@dataclass
class WorldPage:
    """The world page's handlers, bound to one dashboard and its session API."""

    dash: Dashboard
    api: SessionApi

    async def show(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.signed_in(request)
        client_id = request.match_info["client_id"]
        rows = [w for w in await world_rows(self.dash.state, viewer) if w.client_id == client_id]
        if not rows:
            raise Refused(404, "No such world")
        live = self.dash.state.registry.get(client_id)
        return self.dash.render(
            request,
            "world.html",
            viewer,
            active="worlds",
            world=rows[0],
            channels=LIVE_CHANNELS,
            system=live.system_id if live is not None else "",
        )

    async def feed(self, request: web.Request) -> web.StreamResponse:
        """The world's recent chat messages as readable lines, newest last (JSON)."""
        try:
            viewer = await self.api.viewer(request, change=False)
            client_id = request.match_info["client_id"]
            found = self.api.finder.find("GET", "/chat")
            assert found is not None, "GET /chat is in the route table"
            query = {"clientId": client_id, "limit": str(FEED_SIZE)}
            params = extract(found[0], query, {}, {})
            reply = await self.api.calls.call(request, viewer.account, found[0], params)
        except RelayError as exc:
            return error_response(exc)
        if reply.status != 200 or not isinstance(reply.body, bytes):
            return reply
        data = orjson.loads(reply.body).get("data") or {}
        messages = data.get("messages") if isinstance(data, dict) else None
        lines = [
            {"line": describe("chat-create", m).as_json(), "data": m}
            for m in reversed(messages if isinstance(messages, list) else [])
        ]
        return web.json_response({"lines": lines})


def setup(app: web.Application, dash: Dashboard, api: SessionApi) -> WorldPage:
    page = WorldPage(dash, api)
    r = app.router
    r.add_get("/dashboard/worlds/{client_id}", dash.page(page.show))
    r.add_get("/dashboard/worlds/{client_id}/feed", page.feed)
    return page
