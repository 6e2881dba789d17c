"""The dashboard as the relay's plug-in: every page of it mounted on the relay application
(`views.setup` makes the `Dashboard` every page builds on, then each module of `pages/` and the
password-account pages of `accounts.py` add their routes), given the relay's services
(`services.RelayServices`: `server.assemble` calls `install`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from vttrelay.dashboard import accounts as account_pages
from vttrelay.dashboard import views
from vttrelay.dashboard.pages import activity as activity_page
from vttrelay.dashboard.pages import (
    assets,
    keys,
    requests,
    session_api,
    signin,
    tools,
    world,
    worlds,
)

if TYPE_CHECKING:
    from vttrelay.dashboard.services import RelayServices

# The route table's page handlers (`GET /pair/{code}`, `GET /approve/{code}`)
PAGE_HANDLERS = requests.PAGE_HANDLERS


def install(app: web.Application, state: RelayServices) -> views.Dashboard:
    """Add the dashboard's routes to the relay application."""
    dash = views.setup(app, state)
    signin.setup(app, dash)  # sign-in link, sign-out, home
    worlds.setup(app, dash)  # live and known worlds, pairing codes
    api = session_api.setup(app, dash)  # the session's API calls and streams, no key pasted
    world.setup(app, dash, api)  # one world's table: actors, combat, scene, chat and rolls
    requests.setup(app, dash)  # pair and key requests: approve or refuse
    keys.setup(app, dash)  # API keys
    tools.setup(app, dash)  # live events and the request console
    assets.setup(app, dash)  # stylesheet, script, icon
    account_pages.setup(app, dash)  # password sign-in, password reset, invite codes
    activity_page.setup(app, dash)  # the API calls recorded, filtered, and usage per key
    return dash
