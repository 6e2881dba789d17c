"""The route table against the spec: every endpoint of relay-api.md §4 and the relay's own,
with the scope, world action and timeout of wire-protocol §4.7-4.10 and §7.2."""

from __future__ import annotations

from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES, ROUTES

DND5E_GET = {"get-actor-details": "get-actor-details", "concentration": "get-concentration"}
DND5E_POST = (
    "modify-item-charges", "use-ability", "use-feature", "use-spell", "use-item", "short-rest",
    "long-rest", "skill-check", "ability-save", "ability-check", "death-save",
    "modify-experience", "break-concentration", "concentration-save", "equip-item",
    "attune-item", "transfer-currency", "modify-currency", "prepare-spell",
)  # fmt: skip
ENTITY_POST = ("give", "remove", "increase", "decrease", "kill")
USE = {"use-ability", "use-feature", "use-spell", "use-item"}

# (method, path) -> (scope, action, timeout); None where the relay answers itself.
EXPECTED: dict[tuple[str, str], tuple[str | None, str | None, float | None]] = {
    **{("GET", f"/dnd5e/{n}"): ("dnd5e", a, 10.0) for n, a in DND5E_GET.items()},
    **{("POST", f"/dnd5e/{n}"): ("dnd5e", n, 30.0 if n in USE else 10.0) for n in DND5E_POST},
    ("GET", "/chat"): ("chat:read", "chat-messages", 10.0),
    ("POST", "/chat"): ("chat:write", "chat-send", 10.0),
    ("DELETE", "/chat/{messageId}"): ("chat:write", "chat-delete", 10.0),
    ("DELETE", "/chat"): ("chat:write", "chat-flush", 10.0),
    ("POST", "/select"): ("entity:read", "select", 10.0),
    ("GET", "/selected"): ("entity:read", "selected", 10.0),
    ("GET", "/players"): ("entity:read", "players", 10.0),
    ("GET", "/world-info"): ("world:info", "world-info", 10.0),
    ("POST", "/execute-js"): ("execute-js", "execute-js", 20.0),
    # endpoints-beyond-seed §0.4
    ("POST", "/roll"): ("roll:execute", "roll", 10.0),
    ("GET", "/rolls"): ("roll:read", "rolls", 10.0),
    ("GET", "/lastroll"): ("roll:read", "last-roll", 10.0),
    ("GET", "/effects/list"): ("effects:read", "get-status-effects", 10.0),
    ("GET", "/effects"): ("effects:read", "get-effects", 10.0),
    ("POST", "/effects"): ("effects:write", "add-effect", 10.0),
    ("DELETE", "/effects"): ("effects:write", "remove-effect", 10.0),
    # endpoints-beyond-seed §0.4: encounters and scenes
    ("GET", "/encounters"): ("encounter:read", "encounters", 10.0),
    **{
        ("POST", f"/{n}"): ("encounter:manage", n, 10.0)
        for n in (
            "start-encounter",
            "next-turn",
            "next-round",
            "last-turn",
            "last-round",
            "end-encounter",
            "add-to-encounter",
            "remove-from-encounter",
            "roll-initiative",  # vttrelay's own
            "set-initiative",
        )
    },
    ("GET", "/scene"): ("scene:read", "get-scene", 10.0),
    ("POST", "/scene"): ("scene:write", "create-scene", 30.0),
    ("PUT", "/scene"): ("scene:write", "update-scene", 30.0),
    ("DELETE", "/scene"): ("scene:write", "delete-scene", 10.0),
    ("POST", "/switch-scene"): ("scene:write", "switch-scene", 30.0),
    ("GET", "/scene/image"): ("scene:read", "scene-screenshot", 30.0),
    ("GET", "/scene/image/raw"): ("scene:read", "scene-raw-image", 30.0),
    # files-sheet-sessions §1
    ("GET", "/file-system"): ("file:read", "file-system", 15.0),
    ("GET", "/download"): ("file:read", "download-file", 45.0),
    ("POST", "/upload"): ("file:write", "upload-file", 30.0),
    ("GET", "/sheet"): ("sheet:read", "sheet-screenshot", 20.0),
    # files-sheet-sessions §4
    ("POST", "/session-handshake"): ("session:manage", None, 10.0),
    ("POST", "/start-session"): ("session:manage", None, 90.0),
    ("DELETE", "/end-session"): ("session:manage", None, 10.0),
    ("GET", "/session"): ("session:manage", None, 10.0),
    ("GET", "/session/worlds"): ("session:manage", None, 10.0),
    ("POST", "/session/worlds"): ("session:manage", None, 10.0),
    ("GET", "/get"): ("entity:read", "entity", 10.0),
    ("POST", "/create"): ("entity:write", "create", 10.0),
    ("PUT", "/update"): ("entity:write", "update", 10.0),
    ("DELETE", "/delete"): ("entity:write", "delete", 10.0),
    **{("POST", f"/{a}"): ("entity:write", a, 10.0) for a in ENTITY_POST},
    ("GET", "/search"): ("search", "search", 10.0),
    ("GET", "/structure"): ("structure:read", "structure", 10.0),
    ("GET", "/get-folder"): ("structure:read", "get-folder", 10.0),
    ("POST", "/create-folder"): ("structure:write", "create-folder", 10.0),
    ("DELETE", "/delete-folder"): ("structure:write", "delete-folder", 10.0),
    ("GET", "/contents/{path:.*}"): ("structure:read", None, None),
    ("GET", "/macros"): ("macro:list", "macros", 10.0),
    ("POST", "/macro/{uuid}/execute"): ("macro:execute", "macro-execute", 10.0),
    **{
        ("GET", f"/{s}/subscribe"): ("events:subscribe", None, None)
        for s in ("chat", "rolls", "hooks", "encounters", "actor", "scene")
    },
    # endpoints-beyond-seed §0.4: canvas, playlists, users
    ("GET", "/canvas/{documentType}"): ("canvas:read", "get-canvas-documents", 10.0),
    ("POST", "/canvas/{documentType}"): ("canvas:write", "create-canvas-document", 30.0),
    ("PUT", "/canvas/{documentType}"): ("canvas:write", "update-canvas-document", 30.0),
    ("DELETE", "/canvas/{documentType}"): ("canvas:write", "delete-canvas-document", 10.0),
    ("POST", "/move-token"): ("canvas:write", "move-token", 10.0),
    ("GET", "/measure-distance"): ("canvas:read", "measure-distance", 10.0),
    ("GET", "/playlists"): ("playlist:control", "get-playlists", 10.0),
    **{
        ("POST", f"/playlist/{n}"): ("playlist:control", f"playlist-{n}", 10.0)
        for n in ("play", "stop", "next", "volume")
    },
    ("POST", "/play-sound"): ("playlist:control", "play-sound", 10.0),
    ("POST", "/stop-sound"): ("playlist:control", "stop-sound", 10.0),
    ("GET", "/users"): ("user:read", "get-users", 10.0),
    ("GET", "/user"): ("user:read", "get-user", 10.0),
    ("POST", "/user"): ("user:write", "create-user", 10.0),
    ("PUT", "/user"): ("user:write", "update-user", 10.0),
    ("DELETE", "/user"): ("user:write", "delete-user", 10.0),
    ("GET", "/clients"): ("clients:read", None, None),
    ("GET", "/api/key"): (None, None, None),
    ("GET", "/api/health"): (None, None, None),
    ("GET", "/health"): (None, None, None),
    ("GET", "/api/status"): (None, None, None),
    ("POST", "/auth/pair"): (None, None, None),
    ("GET", "/api/clients/{clientId}/active"): (None, None, None),
    ("POST", "/api/self-unpair"): (None, None, None),
    ("GET", "/openapi.json"): (None, None, None),
    ("GET", "/docs"): (None, None, None),
    ("GET", "/metrics"): (None, None, None),
    ("POST", "/auth/pair-request"): (None, None, None),
    ("GET", "/auth/pair-request/{code}/status"): (None, None, None),
    ("POST", "/auth/key-request"): (None, None, None),
    ("GET", "/auth/key-request/{code}/status"): (None, None, None),
    ("POST", "/auth/key-request/exchange"): (None, None, None),
    # accounts-auth.md §5, §12.1: the account routes and billing (answered by the relay)
    **{
        route: (None, None, None)
        for route in (
            ("POST", "/auth/register"),
            ("GET", "/auth/verify"),
            ("POST", "/auth/resend-verification"),
            ("POST", "/auth/login"),
            ("POST", "/auth/logout"),
            ("GET", "/auth/user-data"),
            ("POST", "/auth/regenerate-key"),
            ("POST", "/auth/change-password"),
            ("POST", "/auth/forgot-password"),
            ("POST", "/auth/reset-password"),
            ("GET", "/auth/validate-reset-token/{token}"),
            ("GET", "/auth/export-data"),
            ("DELETE", "/auth/account"),
            ("GET", "/api/subscriptions/status"),
            ("POST", "/api/subscriptions/create-checkout-session"),
            ("POST", "/api/subscriptions/create-portal-session"),
            ("POST", "/api/webhooks/stripe"),
            ("POST", "/auth/api-keys"),
            ("GET", "/auth/api-keys"),
            ("PATCH", "/auth/api-keys/{id}"),
            ("DELETE", "/auth/api-keys/{id}"),
            ("POST", "/auth/api-keys/{id}/regenerate"),
            ("POST", "/auth/connection-tokens"),
            ("GET", "/auth/connection-tokens"),
            ("PATCH", "/auth/connection-tokens/{id}"),
            ("DELETE", "/auth/connection-tokens/{id}"),
            ("GET", "/auth/known-clients"),
            ("DELETE", "/auth/known-clients/{id}"),
            ("PATCH", "/auth/known-clients/{id}"),
            ("PATCH", "/auth/known-clients/{id}/credential"),
            ("PATCH", "/auth/known-clients/{id}/auto-start"),
            ("GET", "/auth/known-clients/{id}/users"),
            ("GET", "/auth/connection-logs"),
            ("GET", "/auth/remote-request-logs"),
            ("GET", "/auth/activity"),
            *(
                (method, f"/auth/{kind}/{{code}}{tail}")
                for kind in ("key-request", "pair-request")
                for method, tail in (("GET", ""), ("POST", "/approve"), ("POST", "/deny"))
            ),
            ("POST", "/auth/credentials"),
            ("GET", "/auth/credentials"),
            ("PATCH", "/auth/credentials/{id}"),
            ("DELETE", "/auth/credentials/{id}"),
            ("GET", "/auth/notification-settings"),
            ("PUT", "/auth/notification-settings"),
            ("POST", "/auth/notification-settings/test"),
            *(
                (method, f"/auth/{kind}/{{id}}/notification-settings{tail}")
                for kind in ("api-keys", "known-clients")
                for method, tail in (("GET", ""), ("PUT", ""), ("DELETE", ""), ("POST", "/test"))
            ),
        )
    },
    ("GET", "/pair/{code}"): (None, None, None),
    ("GET", "/approve/{code}"): (None, None, None),
}


def test_every_endpoint_once_with_scope_action_and_timeout() -> None:
    table = {(r.method, r.path): r for r in ROUTES}
    assert len(table) == len(ROUTES)  # no duplicates
    assert set(table) == set(EXPECTED)
    for where, (scope, action, timeout) in EXPECTED.items():
        route = table[where]
        assert route.scope == scope, where
        assert route.action == action, where
        if timeout is not None:
            assert route.timeout == timeout, where
    counts = {
        "Search": 1,
        "DnD5e": 21,
        "Chat": 4,
        "Utility": 5,
        "Events": 6,
        "Rolls": 3,
        "Effects": 4,
        "Structure": 5,
        "Macros": 2,
        "Canvas": 6,
        "Playlists": 7,
        "Users": 5,
        "Encounters": 11,  # the reference's 9, and roll- and set-initiative
        "Scenes": 7,
        "Entities": 9,
    }
    for group, n in counts.items():
        assert sum(r.group == group for r in ROUTES) == n, group


def test_every_forward_route_takes_client_id_from_the_query_only() -> None:
    for route in ROUTES:
        if route.mode == "local":
            continue
        client = [p for p in route.params if p.name == "clientId"]
        assert len(client) == 1 and client[0].sources == ("query",), route.path
        if route.mode == "forward":
            user = [p for p in route.params if p.name == "userId"]
            assert len(user) == 1 and user[0].sources == ("query", "body"), route.path
        if route.system:
            assert route.path.startswith("/dnd5e/") and route.system == "dnd5e"


def test_scopes_are_the_reference_list() -> None:
    assert len(ALL_SCOPES) == len(set(ALL_SCOPES)) == 32
    assert set(DEFAULT_SCOPES) <= set(ALL_SCOPES)
    writes = {s for s in ALL_SCOPES if s.endswith((":write", ":execute", ":manage"))}
    assert not writes & set(DEFAULT_SCOPES) and "execute-js" not in DEFAULT_SCOPES
    assert {r.scope for r in ROUTES if r.scope} <= set(ALL_SCOPES)
