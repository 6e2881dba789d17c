"""The relay application and its plug-ins: `create_app` mounts only what it is given;
`server.assemble.build_app` gives it the dashboard and `/mcp`, and then serves every route of the
route table."""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path

from aiohttp import web

from vttrelay.relay.app import create_app
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.routes import ROUTES
from vttrelay.relay.store import RelayStore
from vttrelay.server.assemble import PLUGINS, build_app


def _paths(app: web.Application) -> set[tuple[str, str]]:
    return {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None
    }


def test_the_relay_alone_mounts_no_plugin(tmp_path: Path) -> None:
    config = RelayConfig(host="127.0.0.1", port=0, data_dir=tmp_path)
    with closing(RelayStore(config.store_target)) as store:
        alone = _paths(create_app(config, store))
        full = _paths(build_app(config, store))
    assert [p.name for p in PLUGINS] == ["mcp", "dashboard"]
    assert ("GET", "/health") in alone and ("GET", "/relay") in alone
    assert not {p for _, p in alone if p.startswith(("/dashboard", "/mcp"))}
    # the route table's pages of the dashboard (a pair request's pairUrl, a key request's
    # approvalUrl) are served only with it
    assert ("GET", "/pair/{code}") not in alone and ("GET", "/approve/{code}") not in alone
    assert {("GET", "/dashboard/"), ("POST", "/mcp"), ("GET", "/pair/{code}")} <= full
    table = {(r.method, re.sub(r":[^}]*}", "}", r.path)) for r in ROUTES}  # canonical paths
    assert table <= full
    assert alone < full
