"""The dashboard's static files (one stylesheet, one script, the icon) and `/favicon.ico`."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from vttrelay.dashboard.views import STATIC, STATIC_TYPES, Dashboard


@dataclass
class AssetPages:
    """The static files' handlers."""

    dash: Dashboard

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


def setup(app: web.Application, dash: Dashboard) -> AssetPages:
    page = AssetPages(dash)
    r = app.router
    r.add_get("/dashboard/static/{name}", page.static)
    r.add_get("/favicon.ico", page.favicon)
    return page
