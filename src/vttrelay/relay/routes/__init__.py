"""THE route table: one entry per HTTP endpoint the relay serves, one module per API group.
Data only, no logic.

Everything else is derived from this table: the aiohttp handlers (`app.py`), parameter
extraction and the exact error messages (`params.py`), scope checks and the frame sent to the
world (`core.py`), the OpenAPI document (`openapi.py`) and the Python SDK (`tools/codegen`
writes `vttrelay.client.groups` from each route's `sdk`). What an entry is: `model.py`; what the
groups share (sources, `clientId`/`userId`, the route factories): `common.py`.

Adding an endpoint is adding one entry to its group's module. Adding a group is one new module
(`NAME`, `ROUTES`, `GROUP` as in `chat.py`) and one line in `GROUPS` below; then run
`python -m tools.codegen` for the SDK.
"""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes import (
    accounts,
    auth,
    canvas,
    chat,
    clients,
    dnd5e,
    effects,
    encounters,
    entities,
    events,
    files,
    macros,
    playlists,
    rolls,
    scenes,
    search,
    sessions,
    sheets,
    status,
    structure,
    users,
    utility,
)
from vttrelay.relay.routes.chat import CHAT_CONTENT_MAX, CHAT_PAGE_MAX, FLAVOR_MAX
from vttrelay.relay.routes.model import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LENGTH,
    DEFAULT_TIMEOUT,
    MAX_SAFE_INTEGER,
    MISSING,
    SCRIPT_TIMEOUT,
    USE_TIMEOUT,
    Group,
    Guard,
    Mode,
    NoSdk,
    Param,
    ParamType,
    Route,
    Sdk,
    Source,
)
from vttrelay.relay.routes.scopes import (
    ALL_SCOPES,
    DEFAULT_SCOPES,
    GM_SCOPES,
    SCOPE_PRESETS,
    ScopePreset,
    scope_preset,
)
from vttrelay.relay.routes.structure import WS_ONLY_ROUTES
from vttrelay.relay.routes.utility import SCRIPT_MAX

# The API groups in table order (the OpenAPI document's and the SDK's order).
GROUPS: Final[tuple[Group, ...]] = (
    dnd5e.GROUP,
    chat.GROUP,
    utility.GROUP,
    rolls.GROUP,
    effects.GROUP,
    structure.GROUP,
    macros.GROUP,
    canvas.GROUP,
    playlists.GROUP,
    users.GROUP,
    encounters.GROUP,
    scenes.GROUP,
    files.GROUP,
    sheets.GROUP,
    sessions.GROUP,
    entities.GROUP,
    search.GROUP,
    events.GROUP,
    clients.GROUP,
    status.GROUP,
    auth.GROUP,
    accounts.GROUP,
)

ROUTES: Final[tuple[Route, ...]] = tuple(route for group in GROUPS for route in group.routes)
STREAM_ROUTES: Final = events.ROUTES

__all__ = [
    "ALL_SCOPES",
    "CHAT_CONTENT_MAX",
    "CHAT_PAGE_MAX",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_SCOPES",
    "DEFAULT_TIMEOUT",
    "FLAVOR_MAX",
    "GM_SCOPES",
    "GROUPS",
    "MAX_SAFE_INTEGER",
    "MISSING",
    "ROUTES",
    "SCOPE_PRESETS",
    "SCRIPT_MAX",
    "SCRIPT_TIMEOUT",
    "STREAM_ROUTES",
    "USE_TIMEOUT",
    "WS_ONLY_ROUTES",
    "Group",
    "Guard",
    "Mode",
    "NoSdk",
    "Param",
    "ParamType",
    "Route",
    "ScopePreset",
    "Sdk",
    "Source",
    "scope_preset",
]
