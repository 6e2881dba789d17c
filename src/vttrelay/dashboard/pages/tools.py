"""Live events and "Try it", both without a pasted key: Live events reads a world's chosen
channels through the session's stream (`pages/session_api.py`), each event a readable line with
its raw JSON one click away; "Try it" is a form per route a session may call
(`calls.session_callable`), sent through the session's API calls (the request core, as the
account's own key), with the curl line a client would send with its own key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from vttrelay.dashboard.calls import session_callable
from vttrelay.dashboard.views import Dashboard
from vttrelay.dashboard.worldlist import world_rows
from vttrelay.relay.routes import MISSING, ROUTES, STREAM_ROUTES, Route


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
    """The routes the console offers (those a session may call), as JSON data."""
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
        if session_callable(r)
    ]


def stream_routes() -> list[dict[str, Any]]:
    return [
        {"path": r.path, "channel": r.channel, "summary": r.summary, "params": _param_json(r)}
        for r in STREAM_ROUTES
    ]


@dataclass
class ToolPages:
    """The live events and console pages' handlers, bound to one dashboard."""

    dash: Dashboard

    async def events(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.signed_in(request)
        live = [w for w in await world_rows(self.dash.state, viewer) if w.online]
        return self.dash.render(
            request, "events.html", viewer, active="events", worlds=live, streams=stream_routes()
        )

    async def console(self, request: web.Request) -> web.StreamResponse:
        viewer = await self.dash.signed_in(request)
        live = [w for w in await world_rows(self.dash.state, viewer) if w.online]
        return self.dash.render(
            request, "console.html", viewer, active="console", worlds=live, routes=console_routes()
        )


def setup(app: web.Application, dash: Dashboard) -> ToolPages:
    page = ToolPages(dash)
    r = app.router
    r.add_get("/dashboard/events", dash.page(page.events))
    r.add_get("/dashboard/console", dash.page(page.console))
    return page
