"""The dashboard as the relay's plug-in: every page of it mounted on the relay application
(`views.setup`, then the password-account pages of `accounts.py`, which build on the `Dashboard`
that views made), given the relay's services (`server.assemble` calls `install`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from vttrelay.dashboard import accounts as account_pages
from vttrelay.dashboard import views
from vttrelay.dashboard.pages import activity as activity_page

if TYPE_CHECKING:
    from vttrelay.relay.app import RelayState

# The route table's page handlers (`GET /pair/{code}`, `GET /approve/{code}`)
PAGE_HANDLERS = views.PAGE_HANDLERS


def install(app: web.Application, state: RelayState) -> views.Dashboard:
    """Add the dashboard's routes to the relay application."""
    dash = views.setup(app, state)
    account_pages.setup(app, dash)  # password sign-in, password reset, invite codes
    activity_page.setup(app, dash)  # the API calls recorded, filtered, and usage per key
    return dash
