"""The routes about the caller's worlds and key, answered by the relay itself."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import local
from vttrelay.relay.routes.model import Group, Sdk

NAME: Final = "Clients"

ROUTES: Final = (
    local(
        "GET",
        "/clients",
        "clients",
        "Worlds of this account, live ones first.",
        NAME,
        scope="clients:read",
        sdk=Sdk("list", "ClientsReply"),
    ),
    local(
        "GET",
        "/api/key",
        "key_info",
        "The calling API key: its name, scopes, allowed worlds and forced user (never the "
        "secret). Any valid key may read itself.",
        NAME,
        keyed=True,
        sdk=Sdk("key", "KeyInfo"),
    ),
)

GROUP: Final = Group(NAME, "clients", ROUTES)
