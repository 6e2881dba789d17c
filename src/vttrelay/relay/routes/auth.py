"""The pairing and key routes (endpoints-beyond-seed §12), answered by the relay: a world trades
a pairing code for a connection token; browser pairing and API-key requests, approved by the
relay's owner with `vttrelay pair approve` / `vttrelay keys approve`. All public."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import B, P, local
from vttrelay.relay.routes.model import Group, NoSdk, Param, Sdk

NAME: Final = "Auth"

CODE = Param("code", "string", P, required=True, description="The request's code.")
WORLD_ID_B = Param("worldId", "string", B, required=True, description="The world's id.")
LIMITED = "Over 20 pair/key requests per IP in 15 minutes."
MISSES = "Over 10 unknown codes looked up from this IP in 15 minutes (known codes are free)."
PAIR_STATUS = (
    "`pending`, `approved` (once, with `pairingCode`; or `upgraded`), `denied`, `exchanged`."
)
KEY_STATUS = "`pending`, `approved` (device flow: once, with `apiKey`), `denied`, `exchanged`."
PAGE = {"content_type": "text/html"}
# The body a public route that reads its own body (pairing, self-unpair, pair and key requests)
# reads at most: theirs are a few short fields, and nobody has authenticated yet (issue 20 item 5)
PUBLIC_BODY: Final = {"max_body": 64 * 1024}
_TEXT_B = ("worldTitle", "systemId", "systemTitle", "systemVersion", "foundryVersion")
STRINGS = "Sequence[str]"

ROUTES: Final = (
    local(
        "POST",
        "/auth/pair",
        "pair",
        "Trade a pairing code for a connection token.",
        NAME,
        params=(
            Param("code", "string", B, required=True, description="6-character code."),
            WORLD_ID_B,
            Param("worldTitle", "string", B, description="The world's title."),
            Param(
                "existingClientId", "string", B, description="Keep this client id when re-pairing."
            ),
        ),
        extra={**PUBLIC_BODY},
        sdk=Sdk("pair", "Paired"),
    ),
    local(
        "GET",
        "/api/clients/{clientId}/active",
        "client_active",
        "Is this world connected?",
        NAME,
        params=(Param("clientId", "string", P, required=True, description="World id."),),
        sdk=Sdk("client_active", "Active"),
    ),
    local(
        "POST",
        "/api/self-unpair",
        "self_unpair",
        "Revoke this world's connection token.",
        NAME,
        params=(Param("token", "string", B, required=True, description="Connection token."),),
        extra={**PUBLIC_BODY},
        sdk=Sdk("self_unpair", "Unpaired"),
    ),
    local(
        "POST",
        "/auth/pair-request",
        "pair_request",
        "A world asks to be paired (the module's Pair and Upgrade buttons); 201 with its code.",
        NAME,
        extra={
            **PUBLIC_BODY,
            "responses": {"201": "Created: code, pairUrl.", "400": "Bad body.", "429": LIMITED},
        },
        params=(
            WORLD_ID_B,
            *(Param(name, "string", B, description=f"The world's {name}.") for name in _TEXT_B),
            Param("clientId", "string", B, description="The paired world's id (upgrade)."),
            Param(
                "requestedRemoteScopes",
                "array",
                B,
                description="Cross-world scopes asked.",
                sdk_type=STRINGS,
            ),
            Param(
                "requestedTargetClients",
                "array",
                B,
                description="Cross-world targets asked.",
                sdk_type=STRINGS,
            ),
            Param("upgradeOnly", "boolean", B, description="Only upgrade permissions."),
        ),
        sdk=Sdk("pair_request", "PairRequested"),
    ),
    local(
        "GET",
        "/auth/pair-request/{code}/status",
        "pair_status",
        "A pair request's status; the first read after approval carries the pairing code.",
        NAME,
        extra={
            "responses": {
                "200": PAIR_STATUS,
                "404": "Unknown code.",
                "410": "Expired.",
                "429": MISSES,
            }
        },  # fmt: skip
        params=(CODE,),
        sdk=Sdk("pair_status", "PairStatus"),
    ),
    local(
        "POST",
        "/auth/key-request",
        "key_request",
        "An app asks for an API key with these scopes; 201 with its code and approval URL.",
        NAME,
        extra={
            **PUBLIC_BODY,
            "responses": {"201": "Created: code, approvalUrl.", "400": "Bad body.", "429": LIMITED},
        },
        params=(
            Param("appName", "string", B, required=True, description="The app's name."),
            Param(
                "scopes",
                "array",
                B,
                required=True,
                description="Scopes asked for.",
                sdk_type=STRINGS,
            ),
            Param("appDescription", "string", B, description="What the app does."),
            Param("appUrl", "string", B, description="The app's public http(s) URL."),
            Param("callbackUrl", "string", B, description="Set: web flow (exchange code)."),
            Param(
                "clientIds",
                "array",
                B,
                description="Worlds the key should reach.",
                sdk_type=STRINGS,
            ),
            Param("suggestedMonthlyLimit", "integer", B, description="Shown to the approver."),
            Param("suggestedExpiry", "string", B, description="Shown to the approver."),
        ),
        sdk=Sdk("key_request", "KeyRequested"),
    ),
    local(
        "GET",
        "/auth/key-request/{code}/status",
        "key_status",
        "A key request's status; device flow: the first read after approval carries the key.",
        NAME,
        extra={
            "responses": {
                "200": KEY_STATUS,
                "404": "Unknown code.",
                "410": "Expired.",
                "429": MISSES,
            }
        },  # fmt: skip
        params=(CODE,),
        sdk=Sdk("key_status", "KeyStatus"),
    ),
    local(
        "POST",
        "/auth/key-request/exchange",
        "key_exchange",
        "Web flow: trade the one-time exchange code for the approved API key.",
        NAME,
        extra={
            **PUBLIC_BODY,
            "responses": {
                "200": "apiKey, clientIds, scopes.",
                "400": "No code.",
                "404": "Unknown code.",
                "410": "Used, refused or expired.",
                "429": LIMITED,
            },
        },  # fmt: skip
        params=(Param("code", "string", B, required=True, description="The exchange code."),),
        sdk=Sdk("key_exchange", "KeyExchanged"),
    ),
    local(
        "GET",
        "/pair/{code}",
        "pair_page",
        "The page a pair request's pairUrl opens: who asks, and how to approve.",
        NAME,
        extra={**PAGE, "responses": {"200": "The page.", "404": "Unknown code.", "429": MISSES}},
        params=(CODE,),
        sdk=NoSdk("an HTML page for people (the pairing approval page)"),
    ),
    local(
        "GET",
        "/approve/{code}",
        "key_page",
        "The page a key request's approvalUrl opens: what is asked, and how to approve.",
        NAME,
        extra={**PAGE, "responses": {"200": "The page.", "404": "Unknown code.", "429": MISSES}},
        params=(CODE,),
        sdk=NoSdk("an HTML page for people (the key approval page)"),
    ),
)

GROUP: Final = Group(NAME, "auth", ROUTES)
