"""Builds the relay application from its parts: the relay with its store, backends and access
log, and the plug-ins it mounts (the web dashboard under `/dashboard/`, the MCP server on `/mcp`),
each given the relay's services as arguments. The relay never imports its plug-ins; this module
is where they meet.
"""

from __future__ import annotations

from aiohttp import web

from vttrelay.dashboard import mount as dashboard
from vttrelay.mcp import lazy as mcp_http
from vttrelay.mcp.limits import SessionLimits
from vttrelay.relay.accesslog import AccessLog
from vttrelay.relay.app import Plugin, create_app
from vttrelay.relay.backends import Backends
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.sessions_api import SessionService
from vttrelay.relay.state import RelayState
from vttrelay.relay.store import RelayStore


def _install_mcp(app: web.Application, state: RelayState) -> None:
    """`/mcp`: the MCP server over streamable HTTP, loaded on first use, its sessions capped by
    the relay's settings and counted in its Counters."""
    config = state.config
    limits = SessionLimits(
        config.mcp_max_sessions,
        config.mcp_sessions_per_key,
        config.mcp_sessions_per_minute,
        config.mcp_sessions_per_account,
    )
    mcp_http.install(app, state.keys, state.counters, limits)


# The plug-ins `vttrelay serve` mounts, in this order.
PLUGINS: tuple[Plugin, ...] = (
    Plugin("mcp", _install_mcp),
    Plugin("dashboard", dashboard.install, dashboard.PAGE_HANDLERS),
)


def build_app(
    config: RelayConfig,
    store: RelayStore | None = None,
    access: AccessLog | None = None,
    backends: Backends | None = None,
    sessions: SessionService | None = None,
) -> web.Application:
    """The relay application as `vttrelay serve` runs it: `relay.app.create_app` with the
    plug-ins (see there for the arguments)."""
    return create_app(config, store, access, backends, sessions=sessions, plugins=PLUGINS)
