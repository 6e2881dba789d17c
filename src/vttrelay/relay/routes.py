"""THE route table: one entry per HTTP endpoint the relay serves. Data only, no logic.

Everything else is derived from this table: the aiohttp handlers (`app.py`), parameter extraction
and the exact error messages (`params.py`), scope checks and the frame sent to the
world (`core.py`) and the OpenAPI document (`openapi.py`). Adding an endpoint is adding one entry.
An entry the world answers is made with `_forward(method, path, action, summary, group, *params,
**fields)`, which puts the `clientId` and `userId` every world call takes before its own params.

Sources follow wire-protocol §4.2: each parameter lists where it may come from, in order; the first
source with a non-null, non-empty value wins. GET bodies are never read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from vttrelay import protocol

ParamType = Literal["string", "number", "boolean", "array", "object"]
Source = Literal["body", "query", "path"]
Mode = Literal["forward", "stream", "local"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()

DEFAULT_TIMEOUT: Final = 10.0
SCRIPT_TIMEOUT: Final = 20.0
USE_TIMEOUT: Final = 30.0

# Limits every parameter has unless its entry declares its own (README "Limits"). The relay
# refuses a value past them before anything reaches the world: sizes with 413, ranges and nesting
# with 400, each as `{"error": "'<name>' ..."}` (params.py).
MAX_SAFE_INTEGER: Final = 2**53 - 1  # the largest integer a JavaScript number holds exactly
DEFAULT_MAX_LENGTH: Final = 65_536  # characters of a string value
DEFAULT_MAX_BYTES: Final = 4 * 1024 * 1024  # JSON bytes of an array, object or untyped value
DEFAULT_MAX_DEPTH: Final = 32  # nesting of arrays and objects (a real actor nests about 8)
CHAT_CONTENT_MAX: Final = 100_000  # characters of a chat message (a rich item card is ~10,000)
FLAVOR_MAX: Final = 10_000  # characters of a chat message's flavor text
CHAT_PAGE_MAX: Final = 1_000  # chat messages per GET /chat page
SCRIPT_MAX: Final = 1_000_000  # characters of an execute-js script


@dataclass(frozen=True)
class Param:
    """One declared parameter of a route."""

    name: str
    type: ParamType | None  # None: untyped, passed through as given
    sources: tuple[Source, ...]
    required: bool = False
    default: Any = MISSING  # applied by the relay when the caller gave nothing
    description: str = ""
    # Constraints (declarative; params.py enforces them, openapi.py shows them):
    minimum: float = -MAX_SAFE_INTEGER  # numbers
    maximum: float = MAX_SAFE_INTEGER  # numbers
    max_length: int = DEFAULT_MAX_LENGTH  # strings (and untyped values given as strings)
    max_bytes: int = DEFAULT_MAX_BYTES  # arrays, objects, untyped non-strings: JSON size
    max_depth: int = DEFAULT_MAX_DEPTH  # arrays, objects, untyped: nesting levels
    # Other names a client may use for this parameter; the world always gets `name` (DESIGN §6
    # item 9: the reference relay and the module disagree on some names).
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Guard:
    """A relay-side check for calls whose parameter `param` equals `value` (endpoints-beyond-seed
    §1.3: a /create of a Macro): the key must hold `scope` (else 400 `scope_error`), and the
    script at the dotted path `script` of the parameters must not match the route's
    `forbidden_patterns` (else 400 `Script contains forbidden patterns`)."""

    param: str
    value: Any
    scope: str | None = None
    scope_error: str = ""
    script: str | None = None


@dataclass(frozen=True)
class Route:
    """One endpoint. `mode` says who answers it:

    - `forward`: the world, through `action`; the reply is returned byte for byte.
    - `stream`: a Server-Sent Events stream of the world's events on `channel`.
    - `local`: the relay itself, by the handler named `handler` in `app.py`.
    """

    method: str
    path: str
    mode: Mode
    summary: str
    group: str
    scope: str | None = None  # None: public, no API key needed (unless `keyed`)
    keyed: bool = False  # a valid API key is needed even without a scope (GET /api/key)
    params: tuple[Param, ...] = ()
    action: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    system: str | None = None  # the world's system id this route needs (e.g. "dnd5e")
    channel: str | None = None
    handler: str | None = None
    require_any: tuple[str, ...] = ()  # at least one of these parameters must be given
    require_any_error: str = ""  # the error text when none is (default: "At least one of ...")
    # The `documentType` values the route accepts, each with the `className` the relay adds to
    # the frame (the canvas routes); any other value is refused (params.validate).
    document_types: dict[str, str] | None = None
    forbidden_patterns: tuple[str, ...] = ()  # regexes a `script` parameter must not match
    guards: tuple[Guard, ...] = ()  # checks for calls with a given parameter value
    extra: dict[str, Any] = field(default_factory=dict)


# Common parameters -------------------------------------------------------------------------------

BQ: Final[tuple[Source, ...]] = ("body", "query")
QB: Final[tuple[Source, ...]] = ("query", "body")
Q: Final[tuple[Source, ...]] = ("query",)
B: Final[tuple[Source, ...]] = ("body",)
P: Final[tuple[Source, ...]] = ("path",)

CLIENT_ID = Param("clientId", "string", Q, description="Id of the connected world.")
CLIENT_ID_REQUIRED = Param(
    "clientId", "string", Q, required=True, description="Id of the connected world."
)
USER_ID = Param(
    "userId", "string", QB, description="User id or name whose permissions scope the call."
)
USER_ID_QUERY = Param(
    "userId", "string", Q, description="Only deliver what this user (id or name) may see."
)
SELECTED = Param(
    "selected", "boolean", QB, description="Use the selected token's actor instead of actorUuid."
)


def _p(name: str, type_: ParamType | None, required: bool = False, **kw: Any) -> Param:
    """A dnd5e-style parameter: body first, then query."""
    return Param(name, type_, kw.pop("sources", BQ), required=required, **kw)


ACTOR_UUID = _p("actorUuid", "string", description="Actor uuid, `Actor.<id>`.")
ACTOR_UUID_REQ = _p("actorUuid", "string", True, description="Actor uuid, `Actor.<id>`.")
ACTOR_NAME = _p("actorName", "string", description="Actor name (case-insensitive).")
ITEM_UUID = _p("itemUuid", "string", description="Item uuid, `Actor.<id>.Item.<id>`.")
ITEM_NAME = _p("itemName", "string", description="Item name (case-insensitive).")

ABILITY = _p("ability", "string", True, description="One of str, dex, con, int, wis, cha.")
ADVANTAGE = _p("advantage", "boolean", description="Roll with advantage.")
CREATE_CHAT_MESSAGE = _p(
    "createChatMessage",
    "boolean",
    default=True,
    description="Post the roll to chat (default true).",
)
ROLL_OPTIONS = (
    ADVANTAGE,
    _p("disadvantage", "boolean", description="Roll with disadvantage."),
    _p("bonus", "string", description="Extra bonus formula, e.g. `1d4` or `+2`."),
    CREATE_CHAT_MESSAGE,
)

USE_PARAMS = (
    ACTOR_UUID_REQ,
    _p("abilityUuid", "string", description="Uuid of the item to use."),
    _p("abilityName", "string", description="Name of the item to use."),
    _p("targetUuid", "string", description="Token or actor uuid to target."),
    _p("targetName", "string", description="Token or actor name to target."),
)


def _forward(
    method: str, path: str, action: str, summary: str, group: str, *params: Param, **fields: Any
) -> Route:
    """A route the relay forwards to the world as `action`: the world's `clientId` and the
    acting `userId` first, then the route's own parameters; `fields` are the other Route fields.
    The per-group factories below (`_dnd5e`, `_scene`, ...) fill in their group's defaults."""
    return Route(
        method,
        path,
        "forward",
        summary,
        group,
        action=action,
        params=(CLIENT_ID, USER_ID, *params),
        **fields,
    )


def _dnd5e(
    method: str,
    name: str,
    summary: str,
    *params: Param,
    action: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Route:
    return _forward(
        method,
        f"/dnd5e/{name}",
        action or name,
        summary,
        "DnD5e",
        *params,
        scope="dnd5e",
        timeout=timeout,
        system="dnd5e",
    )


DND5E_ROUTES: Final = (
    _dnd5e(
        "GET",
        "get-actor-details",
        "Read an actor's resources, items, spells, features and more.",
        ACTOR_UUID_REQ,
        _p(
            "details",
            "array",
            True,
            description="Sections to return: resources, spells, items, features, stats, "
            "abilities, skills, details, conditions (a JSON array in the query).",
        ),
    ),
    _dnd5e(
        "POST",
        "modify-item-charges",
        "Add or spend charges of an item.",
        ACTOR_UUID_REQ,
        _p("amount", "number", True, description="Charges to add (negative spends)."),
        ITEM_UUID,
        ITEM_NAME,
    ),
    _dnd5e("POST", "use-ability", "Use any item of an actor.", *USE_PARAMS, timeout=USE_TIMEOUT),
    _dnd5e("POST", "use-feature", "Use a feature of an actor.", *USE_PARAMS, timeout=USE_TIMEOUT),
    _dnd5e("POST", "use-spell", "Cast a spell of an actor.", *USE_PARAMS, timeout=USE_TIMEOUT),
    _dnd5e(
        "POST",
        "use-item",
        "Use an item (not a feature or spell).",
        *USE_PARAMS,
        timeout=USE_TIMEOUT,
    ),
    _dnd5e(
        "POST",
        "short-rest",
        "Take a short rest: hit dice, short-rest features, pact slots.",
        ACTOR_UUID,
        SELECTED,
        _p("autoHD", "boolean", description="Spend hit dice automatically."),
        _p(
            "autoHDThreshold",
            "number",
            description="0 to 1: spend hit dice while HP is below this fraction of maximum HP.",
        ),
    ),
    _dnd5e(
        "POST",
        "long-rest",
        "Take a long rest: HP, spell slots, hit dice, features.",
        ACTOR_UUID,
        SELECTED,
        _p("newDay", "boolean", default=True, description="Whether the rest marks a new day."),
    ),
    _dnd5e(
        "POST",
        "skill-check",
        "Roll a skill check.",
        ACTOR_UUID_REQ,
        _p("skill", "string", True, description="Skill abbreviation, e.g. `prc`."),
        *ROLL_OPTIONS,
    ),
    _dnd5e(
        "POST",
        "ability-save",
        "Roll an ability saving throw.",
        ACTOR_UUID_REQ,
        ABILITY,
        *ROLL_OPTIONS,
    ),
    _dnd5e(
        "POST",
        "ability-check",
        "Roll an ability check.",
        ACTOR_UUID_REQ,
        ABILITY,
        *ROLL_OPTIONS,
    ),
    _dnd5e(
        "POST",
        "death-save",
        "Roll a death saving throw.",
        ACTOR_UUID_REQ,
        ADVANTAGE,
        CREATE_CHAT_MESSAGE,
    ),
    _dnd5e(
        "POST",
        "modify-experience",
        "Add or remove experience points.",
        _p("amount", "number", True, description="Experience to add (may be negative)."),
        ACTOR_UUID,
        SELECTED,
    ),
    _dnd5e(
        "GET",
        "concentration",
        "Is the actor concentrating, and on what?",
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
        action="get-concentration",
    ),
    _dnd5e(
        "POST",
        "break-concentration",
        "End the actor's concentration.",
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
    ),
    _dnd5e(
        "POST",
        "concentration-save",
        "Roll a concentration save: DC max(10, floor(damage / 2)).",
        _p("damage", "number", True, description="Damage taken."),
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
        *ROLL_OPTIONS,
    ),
    _dnd5e(
        "POST",
        "equip-item",
        "Equip or unequip an item.",
        _p("equipped", "boolean", True, description="true equips, false unequips."),
        ACTOR_UUID,
        ACTOR_NAME,
        ITEM_UUID,
        ITEM_NAME,
    ),
    _dnd5e(
        "POST",
        "attune-item",
        "Attune to or end attunement with an item.",
        _p("attuned", "boolean", True, description="true attunes, false ends attunement."),
        ACTOR_UUID,
        ACTOR_NAME,
        ITEM_UUID,
        ITEM_NAME,
    ),
    _dnd5e(
        "POST",
        "transfer-currency",
        "Move coins from one actor to another, all or nothing.",
        _p(
            "currency",
            "object",
            True,
            sources=B,
            max_depth=1,
            description='Coins to move, e.g. {"gp": 5, "sp": 3}.',
        ),
        _p("sourceActorUuid", "string", description="Uuid of the paying actor."),
        _p("sourceActorName", "string", description="Name of the paying actor."),
        _p("targetActorUuid", "string", description="Uuid of the receiving actor."),
        _p("targetActorName", "string", description="Name of the receiving actor."),
    ),
    _dnd5e(
        "POST",
        "modify-currency",
        "Add or remove coins of one denomination.",
        ACTOR_UUID_REQ,
        _p("currency", "string", True, description="One of pp, gp, ep, sp, cp."),
        _p("amount", "number", True, description="Coins to add (negative removes)."),
    ),
    _dnd5e(
        "POST",
        "prepare-spell",
        "Prepare or unprepare a spell.",
        ACTOR_UUID_REQ,
        _p("spellName", "string", True, description="Name of the spell."),
        _p("prepared", "boolean", True, description="true prepares, false unprepares."),
    ),
)


CHAT_ROUTES: Final = (
    _forward(
        "GET",
        "/chat",
        "chat-messages",
        "List chat messages, newest first.",
        "Chat",
        Param(
            "limit",
            "number",
            Q,
            default=10,
            minimum=0,
            maximum=CHAT_PAGE_MAX,
            description="At most this many (default 10).",
        ),
        Param("offset", "number", Q, default=0, minimum=0, description="Messages to skip."),
        Param("chatType", "number", Q, description="0 OOC, 1 IC, 2 emote, 3 whisper, 4 roll."),
        Param("speaker", "string", Q, description="Speaker name or actor id."),
        scope="chat:read",
    ),
    _forward(
        "POST",
        "/chat",
        "chat-send",
        "Send a chat message.",
        "Chat",
        Param(
            "content",
            "string",
            B,
            required=True,
            max_length=CHAT_CONTENT_MAX,
            description="Message text (HTML).",
        ),
        Param("whisper", "array", B, max_bytes=65_536, description="User ids to whisper to."),
        Param("speaker", "string", B, description="Actor id or uuid speaking."),
        Param("alias", "string", B, description="Display name of the speaker."),
        Param("chatType", "number", B, description="0 OOC, 1 IC, 2 emote, 3 whisper, 4 roll."),
        Param("flavor", "string", B, max_length=FLAVOR_MAX, description="Flavor text."),
        scope="chat:write",
    ),
    _forward(
        "DELETE",
        "/chat/{messageId}",
        "chat-delete",
        "Delete one chat message (its author or a GM).",
        "Chat",
        Param("messageId", "string", P, required=True, description="Message id."),
        scope="chat:write",
    ),
    _forward(
        "DELETE",
        "/chat",
        "chat-flush",
        "Delete all chat history (GM only).",
        "Chat",
        scope="chat:write",
    ),
)

# wire-protocol §4.9: the reference relay's pre-check on execute-js scripts.
FORBIDDEN_SCRIPT_PATTERNS: Final = (
    r"localStorage",
    r"sessionStorage",
    r"document\.cookie",
    r"eval\(",
    r"new Worker\(",
    r"new SharedWorker\(",
    r"__proto__",
    r"atob\(",
    r"btoa\(",
    r"crypto\.",
    r"Intl\.",
    r"postMessage\(",
    r"XMLHttpRequest",
    r"importScripts\(",
    r"apiKey",
    r"privateKey",
    r"password",
    r"Function\(",
    r"Function\.constructor",
    r"globalThis",
    r"game\.settings\.set",
    r"Reflect\.",
    r"Proxy",
    r"import\(",
)

UTILITY_ROUTES: Final = (
    _forward(
        "POST",
        "/select",
        "select",
        "Select tokens on the active scene (GM only).",
        "Utility",
        Param("uuids", "array", B, description="Token uuids to select."),
        Param("name", None, B, description="Token name to select."),
        Param("data", "object", B, description="Attribute path -> value pairs to match."),
        Param("overwrite", "boolean", B, description="Replace the current selection."),
        Param("all", "boolean", B, description="Select every token on the scene."),
        scope="entity:read",
        require_any=("uuids", "name", "data", "all"),
    ),
    _forward(
        "GET",
        "/selected",
        "selected",
        "The selected tokens and their actors (GM only).",
        "Utility",
        scope="entity:read",
    ),
    _forward(
        "GET",
        "/players",
        "players",
        "The world's users: the valid userId values.",
        "Utility",
        scope="entity:read",
    ),
    _forward(
        "GET",
        "/world-info",
        "world-info",
        "World, system, modules, users and active scene.",
        "Utility",
        scope="world:info",
    ),
    _forward(
        "POST",
        "/execute-js",
        "execute-js",
        "Run a script in the world (off unless the world enables it).",
        "Utility",
        Param(
            "script",
            None,
            B,
            max_length=SCRIPT_MAX,
            description="JavaScript: the body of an async function.",
        ),
        scope="execute-js",
        timeout=SCRIPT_TIMEOUT,
        forbidden_patterns=FORBIDDEN_SCRIPT_PATTERNS,
    ),
)

ROLL_ROUTES: Final = (
    _forward(
        "POST",
        "/roll",
        "roll",
        "Roll a dice formula, optionally posting it to chat.",
        "Rolls",
        Param(
            "formula",
            "string",
            B,
            required=True,
            description="Dice formula, e.g. `2d20kh + 5`.",
        ),
        Param("flavor", None, B, description="Flavor text (default empty)."),
        Param(
            "createChatMessage",
            "boolean",
            B,
            description="Post the roll to chat (default false).",
        ),
        Param("speaker", None, B, description="Token or actor uuid speaking."),
        Param("whisper", "array", B, description="User ids: a private roll for them."),
        scope="roll:execute",
    ),
    _forward(
        "GET",
        "/rolls",
        "rolls",
        "The recent rolls, newest first (at most 20).",
        "Rolls",
        Param("limit", "number", Q, description="At most this many (default and cap 20)."),
        scope="roll:read",
    ),
    _forward(
        "GET",
        "/lastroll",
        "last-roll",
        "The most recent roll, or null.",
        "Rolls",
        scope="roll:read",
    ),
)

EFFECT_UUID = Param(
    "uuid",
    "string",
    BQ,
    required=True,
    description="Actor or token uuid (or anything with an actor).",
)
EFFECT_ROUTES: Final = (
    _forward(
        "GET",
        "/effects/list",
        "get-status-effects",
        "The system's status conditions (id, name, icon).",
        "Effects",
        scope="effects:read",
    ),
    _forward(
        "GET",
        "/effects",
        "get-effects",
        "The active effects on an actor.",
        "Effects",
        EFFECT_UUID,
        scope="effects:read",
    ),
    _forward(
        "POST",
        "/effects",
        "add-effect",
        "Add a status condition or a custom effect to an actor.",
        "Effects",
        EFFECT_UUID,
        Param("statusId", None, BQ, description="A status id from /effects/list; wins."),
        Param("effectData", "object", BQ, description="ActiveEffect data: name, changes..."),
        scope="effects:write",
    ),
    _forward(
        "DELETE",
        "/effects",
        "remove-effect",
        "Remove an effect by id, or the first one carrying a status.",
        "Effects",
        EFFECT_UUID,
        Param("effectId", None, BQ, description="Id of the effect to remove."),
        Param("statusId", None, BQ, description="Remove the effect with this status; wins."),
        scope="effects:write",
    ),
)


ENCOUNTER_ID = Param(
    "encounterId",
    "string",
    BQ,
    aliases=("encounter",),
    description="Id of the encounter to act on (default: the current one).",
)


def _encounter(path: str, summary: str, *params: Param, action: str | None = None) -> Route:
    action = action or path.lstrip("/")
    return _forward("POST", path, action, summary, "Encounters", *params, scope="encounter:manage")


ENCOUNTER_ROUTES: Final = (
    _forward(
        "GET",
        "/encounters",
        "encounters",
        "Every encounter (combat) of the world, with its combatants in turn order.",
        "Encounters",
        scope="encounter:read",
    ),
    _encounter(
        "/start-encounter",
        "Start an encounter from tokens, the selected tokens or the players' tokens (GM only).",
        Param(
            "tokenUuids",
            "array",
            B,
            aliases=("tokens",),
            description="Token (or actor) uuids to add as combatants.",
        ),
        Param("startWithSelected", "boolean", B, description="Add the selected tokens."),
        Param(
            "startWithPlayers",
            "boolean",
            B,
            description="Add every token of the active scene whose actor a player owns.",
        ),
        Param("rollNPC", "boolean", B, description="Roll initiative for the NPCs."),
        Param("rollAll", "boolean", B, description="Roll initiative for every combatant."),
        Param("name", None, B, description="Name of the encounter (default New Encounter)."),
    ),
    _encounter("/next-turn", "Advance to the next turn (GM only).", ENCOUNTER_ID),
    _encounter("/next-round", "Advance to the next round (GM only).", ENCOUNTER_ID),
    _encounter("/last-turn", "Go back one turn (GM only).", ENCOUNTER_ID),
    _encounter("/last-round", "Go back one round (GM only).", ENCOUNTER_ID),
    _encounter("/end-encounter", "End (delete) an encounter (GM only).", ENCOUNTER_ID),
    _encounter(
        "/add-to-encounter",
        "Add tokens or actors (their token on the active scene) as combatants.",
        ENCOUNTER_ID,
        Param("selected", "boolean", QB, description="Also add the selected tokens."),
        Param("uuids", "array", B, description="Token or actor uuids to add."),
        Param("rollInitiative", "boolean", B, description="Roll initiative for what was added."),
    ),
    _encounter(
        "/remove-from-encounter",
        "Remove tokens or actors (all their combatants) from an encounter.",
        ENCOUNTER_ID,
        Param("selected", "boolean", QB, description="Also remove the selected tokens."),
        Param("uuids", "array", B, description="Token or actor uuids to remove."),
    ),
)

SCENE_SELECTORS = ("sceneId", "name", "active", "viewed", "all")


def _scene(
    method: str,
    path: str,
    action: str,
    summary: str,
    *params: Param,
    scope: str = "scene:write",
    timeout: float = DEFAULT_TIMEOUT,
    require_any: tuple[str, ...] = (),
) -> Route:
    return _forward(
        method,
        path,
        action,
        summary,
        "Scenes",
        *params,
        scope=scope,
        timeout=timeout,
        require_any=require_any,
    )


SCENE_ROUTES: Final = (
    _scene(
        "GET",
        "/scene",
        "get-scene",
        "One scene (by id, exact name, active or viewed) or all of them.",
        Param("sceneId", None, Q, description="Scene id."),
        Param("name", None, Q, description="Exact scene name (case-sensitive)."),
        Param("active", "boolean", Q, description="The active scene."),
        Param("viewed", "boolean", Q, description="The scene the GM is viewing."),
        Param("all", "boolean", Q, description="Every scene."),
        scope="scene:read",
        require_any=SCENE_SELECTORS,
    ),
    _scene(
        "POST",
        "/scene",
        "create-scene",
        "Create a scene.",
        Param("data", "object", B, required=True, description="The new scene's data."),
        timeout=USE_TIMEOUT,
    ),
    _scene(
        "PUT",
        "/scene",
        "update-scene",
        "Update a scene (selected by id, exact name or active).",
        Param("data", "object", B, required=True, description="Fields to change."),
        Param("sceneId", None, BQ, description="Scene id."),
        Param("name", None, BQ, description="Exact name of the scene to update."),
        Param("active", "boolean", BQ, description="Update the active scene."),
        timeout=USE_TIMEOUT,
        require_any=("sceneId", "name", "active"),
    ),
    _scene(
        "DELETE",
        "/scene",
        "delete-scene",
        "Delete a scene (by id or exact name).",
        Param("sceneId", None, Q, description="Scene id."),
        Param("name", None, Q, description="Exact scene name."),
        require_any=("sceneId", "name"),
    ),
    Route(
        "GET",
        "/scene/image",
        "local",
        "A picture of the viewed scene: PNG or JPEG bytes (X-Image-Width, X-Image-Height).",
        "Scenes",
        scope="scene:read",
        action="scene-screenshot",
        handler="scene_image",
        timeout=USE_TIMEOUT,
        params=(
            CLIENT_ID,
            USER_ID,
            Param("sceneId", None, Q, description="Scene id (default: the viewed scene)."),
            Param("active", "boolean", Q, description="The active (viewed) scene."),
            Param("format", "string", Q, description="png (default) or jpeg."),
            Param("quality", "number", Q, description="JPEG quality, 0-1."),
            Param("viewport", None, Q, description="Accepted; the whole scene is drawn."),
            Param("width", "number", Q, description="Width in pixels (keeps the aspect ratio)."),
            Param("height", "number", Q, description="Height in pixels (keeps the aspect)."),
            Param("showGrid", "boolean", Q, description="Draw the grid (default true)."),
            Param("hideOverlays", "boolean", Q, description="Leave out walls and lights."),
        ),
        extra={
            "content_type": "image/png",
            "responses": {"200": "The picture (image/png or image/jpeg)."},
        },
    ),
    _scene(
        "GET",
        "/scene/image/raw",
        "scene-raw-image",
        "The scene's background image: its src (the embedded world holds no image files).",
        Param("sceneId", None, BQ, description="Scene id (default: the viewed scene)."),
        Param("active", "boolean", BQ, description="The active (viewed) scene."),
        scope="scene:read",
        timeout=USE_TIMEOUT,
    ),
    _scene(
        "POST",
        "/switch-scene",
        "switch-scene",
        "Activate a scene (GM only): it becomes the scene everyone sees.",
        Param("sceneId", None, BQ, description="Scene id."),
        Param("name", None, BQ, description="Exact scene name."),
        timeout=USE_TIMEOUT,
        require_any=("sceneId", "name"),
    ),
)

# Entities and search (endpoints-beyond-seed §1-2). `uuid` is query-only on the entity routes.

ENTITY_UUID = Param("uuid", "string", Q, description="Document uuid, e.g. `Actor.<id>`.")
ENTITY_SELECTED = Param(
    "selected", "boolean", QB, description="Target the GM's controlled tokens instead of uuid."
)
ENTITY_ACTOR = Param(
    "actor", "boolean", Q, description="With selected: the tokens' actors instead of the tokens."
)
ATTRIBUTE_PARAMS = (
    Param(
        "attribute",
        "string",
        B,
        required=True,
        description="Path from the document root, e.g. `system.attributes.hp.value`.",
    ),
    Param("amount", "number", B, required=True, description="Amount (may be fractional)."),
    ENTITY_UUID,
    Param("selected", "boolean", QB, description="The actors of the controlled tokens."),
)


def _entity(
    method: str,
    path: str,
    action: str,
    summary: str,
    scope: str,
    *params: Param,
    guards: tuple[Guard, ...] = (),
) -> Route:
    return _forward(
        method,
        path,
        action,
        summary,
        "Entities",
        *params,
        scope=scope,
        guards=guards,
        forbidden_patterns=FORBIDDEN_SCRIPT_PATTERNS if guards else (),
    )


# A Macro's command is a script: creating one needs macro:write and passes the script check.
MACRO_CREATE = Guard(
    "entityType",
    "Macro",
    scope="macro:write",
    scope_error="macro:write scope is required to create macros",
    script="data.command",
)


ENTITY_ROUTES: Final = (
    _entity(
        "GET",
        "/get",
        "entity",
        "Read any document by uuid, or the controlled tokens.",
        "entity:read",
        ENTITY_UUID,
        ENTITY_SELECTED,
        ENTITY_ACTOR,
    ),
    _entity(
        "POST",
        "/create",
        "create",
        "Create a document of any type (Actor, Item, JournalEntry, Macro, RollTable, ...).",
        "entity:write",
        Param("entityType", "string", B, required=True, description="Document type, e.g. Actor."),
        Param("data", "object", B, required=True, description="The new document's data."),
        Param("folder", None, B, description="Folder id written into the document's folder."),
        Param("keepId", "boolean", BQ, description="Keep data._id."),
        Param("override", "boolean", BQ, description="Replace the document with data._id."),
        guards=(MACRO_CREATE,),
    ),
    _entity(
        "PUT",
        "/update",
        "update",
        "Update documents: nested and dotted keys merge, embedded arrays upsert by _id.",
        "entity:write",
        Param("data", "object", B, required=True, description="The change set."),
        ENTITY_UUID,
        ENTITY_SELECTED,
        ENTITY_ACTOR,
    ),
    _entity(
        "DELETE",
        "/delete",
        "delete",
        "Delete a document (embedded ones from their holder).",
        "entity:write",
        ENTITY_UUID,
        ENTITY_SELECTED,
    ),
    _entity(
        "POST",
        "/give",
        "give",
        "Give an item to an actor: moved from fromUuid, or copied from a world or pack item.",
        "entity:write",
        Param("fromUuid", None, B, description="Source actor uuid (moves the item)."),
        Param("toUuid", None, B, description="Target actor uuid."),
        Param("selected", "boolean", QB, description="Target the first controlled token's actor."),
        Param("itemUuid", None, B, description="Uuid of the item to give."),
        Param("itemName", None, B, description="Name of the item to give."),
        Param("quantity", "number", B, description="How many (default 1)."),
    ),
    _entity(
        "POST",
        "/remove",
        "remove",
        "Remove an item, or some of its quantity, from an actor.",
        "entity:write",
        Param("actorUuid", None, B, description="Actor uuid."),
        Param("selected", "boolean", QB, description="The first controlled token's actor."),
        Param("itemUuid", None, B, description="Uuid of the item."),
        Param("itemName", None, B, description="Name of the item (case-insensitive)."),
        Param("quantity", "number", B, description="How many to remove (default: the item)."),
    ),
    _entity(
        "POST",
        "/increase",
        "increase",
        "Add to a numeric attribute of documents.",
        "entity:write",
        *ATTRIBUTE_PARAMS,
    ),
    _entity(
        "POST",
        "/decrease",
        "decrease",
        "Subtract from a numeric attribute of documents.",
        "entity:write",
        *ATTRIBUTE_PARAMS,
    ),
    _entity(
        "POST",
        "/kill",
        "kill",
        "Bring actors or tokens to 0 HP, mark them defeated and dead.",
        "entity:write",
        ENTITY_UUID,
        ENTITY_SELECTED,
    ),
    _forward(
        "GET",
        "/search",
        "search",
        "Search the world's documents by name and filters.",
        "Search",
        Param("query", "string", Q, description="Text to find in names."),
        Param(
            "filter",
            None,
            Q,
            description="`Actor`, or `key:value` pairs: `documentType:Item,subType:weapon`.",
        ),
        Param("excludeCompendiums", "boolean", Q, description="World documents only."),
        Param("limit", "number", Q, description="At most this many (default 200, max 500)."),
        Param("minified", "boolean", Q, description="Only uuid, id, name, img, documentType."),
        Param("ownedByUserId", None, Q, description="Only documents this user owns."),
        scope="search",
        require_any=("query", "filter"),
        require_any_error="'query' or 'filter' is required",
    ),
)


STRUCTURE_ROUTES: Final = (
    _forward(
        "GET",
        "/structure",
        "structure",
        "Folders, documents and compendium packs of the world.",
        "Structure",
        Param("includeEntityData", "boolean", Q, description="Whole documents, not references."),
        Param(
            "path",
            None,
            Q,
            description="`Folder.<id>` or `Compendium.<pack id>`; the root when absent.",
        ),
        Param("recursive", "boolean", Q, description="Nest sub-folders."),
        Param("recursiveDepth", "number", Q, description="How deep to nest (default 5)."),
        Param(
            "types",
            None,
            Q,
            description="Comma-separated document types, e.g. `Actor,Item` (default all).",
        ),
        scope="structure:read",
    ),
    _forward(
        "GET",
        "/get-folder",
        "get-folder",
        "A folder by exact name, with its contents.",
        "Structure",
        Param("name", "string", BQ, required=True, description="Folder name (exact)."),
        scope="structure:read",
    ),
    _forward(
        "POST",
        "/create-folder",
        "create-folder",
        "Create a folder (GM only).",
        "Structure",
        Param("name", "string", BQ, required=True, description="Folder name."),
        Param(
            "folderType",
            "string",
            BQ,
            required=True,
            description="Scene, Actor, Item, JournalEntry, RollTable, Cards, Macro, Playlist.",
        ),
        Param("parentFolderId", None, BQ, description="Id of the parent folder."),
        scope="structure:write",
    ),
    _forward(
        "DELETE",
        "/delete-folder",
        "delete-folder",
        "Delete a folder; with deleteAll, its sub-folders and documents too (GM only).",
        "Structure",
        Param("folderId", "string", BQ, required=True, description="Folder id."),
        Param("deleteAll", "boolean", BQ, description="Also delete what it holds."),
        scope="structure:write",
    ),
    Route(
        "GET",
        "/contents/{path:.*}",
        "local",
        "Deprecated: use GET /structure?path=...",
        "Structure",
        scope="structure:read",
        handler="contents_deprecated",
        params=(Param("path", "string", P, description="Anything: the answer is always 400."),),
    ),
)

MACRO_ROUTES: Final = (
    _forward(
        "GET",
        "/macros",
        "macros",
        "The world's macros (what the user may see).",
        "Macros",
        scope="macro:list",
    ),
    _forward(
        "POST",
        "/macro/{uuid}/execute",
        "macro-execute",
        "Execute a macro (off unless the world enables allowMacroExecute).",
        "Macros",
        Param("uuid", "string", P, required=True, description="Macro uuid, `Macro.<id>`."),
        Param("args", "object", B, description="Arguments the macro sees as `args`."),
        scope="macro:execute",
    ),
)

HOOK_FILTERS = (
    Param("hooks", "string", Q, description="Comma-separated hook names (hooks stream)."),
    Param("encounterId", "string", Q, description="Only this encounter (encounters stream)."),
    Param("actorUuid", "string", Q, description="Only this actor (actor stream)."),
    Param("sceneId", "string", Q, description="Only this scene (scene stream)."),
)


def _stream(path: str, channel: str, summary: str, *params: Param) -> Route:
    return Route(
        "GET",
        path,
        "stream",
        summary,
        "Events",
        scope="events:subscribe",
        channel=channel,
        params=(CLIENT_ID_REQUIRED, *params),
    )


STREAM_ROUTES: Final = (
    _stream(
        "/chat/subscribe",
        protocol.CHAT_CHANNEL,
        "Chat events: chat-create, chat-update, chat-delete.",
        Param("speaker", "string", Q, description="Only this speaker (name or actor id)."),
        Param("type", "number", Q, description="Only this chat type (0-4)."),
        Param("whisperOnly", "boolean", Q, description="Only whispered messages."),
        USER_ID_QUERY,
    ),
    _stream("/rolls/subscribe", protocol.ROLL_CHANNEL, "Dice rolls: roll.", USER_ID_QUERY),
    _stream("/hooks/subscribe", protocol.HOOK_CHANNEL, "Hook events by hook name.", *HOOK_FILTERS),
    _stream(
        "/encounters/subscribe",
        protocol.COMBAT_CHANNEL,
        "Combat events: combat-<eventType>.",
        *HOOK_FILTERS,
    ),
    _stream(
        "/actor/subscribe",
        protocol.ACTOR_CHANNEL,
        "Actor events: actor-<eventType>.",
        *HOOK_FILTERS,
    ),
    _stream(
        "/scene/subscribe",
        protocol.SCENE_CHANNEL,
        "Scene events: scene-<eventType>.",
        *HOOK_FILTERS,
    ),
)


WORLD_ID_B = Param("worldId", "string", B, required=True, description="The world's id.")


# The body a public route that reads its own body (pairing, self-unpair, pair and key requests)
# reads at most: theirs are a few short fields, and nobody has authenticated yet (issue 20 item 5)
PUBLIC_BODY: Final = {"max_body": 64 * 1024}


def _local(
    method: str,
    path: str,
    handler: str,
    summary: str,
    group: str,
    scope: str | None = None,
    params: tuple[Param, ...] = (),
    extra: dict[str, Any] | None = None,
) -> Route:
    return Route(
        method,
        path,
        "local",
        summary,
        group,
        scope=scope,
        params=params,
        handler=handler,
        extra=dict(extra or {}),
    )


RELAY_ROUTES: Final = (
    _local(
        "GET",
        "/clients",
        "clients",
        "Worlds of this account, live ones first.",
        "Clients",
        scope="clients:read",
    ),
    Route(
        "GET",
        "/api/key",
        "local",
        "The calling API key: its name, scopes, allowed worlds and forced user (never the "
        "secret). Any valid key may read itself.",
        "Clients",
        keyed=True,
        handler="key_info",
    ),
    _local("GET", "/api/health", "health", "Liveness of this relay instance.", "Status"),
    _local("GET", "/health", "health", "Liveness of this relay instance.", "Status"),
    _local(
        "GET",
        "/api/status",
        "status",
        "Version, WebSocket path, the answering instance and how many are alive.",
        "Status",
    ),
    _local(
        "POST",
        "/auth/pair",
        "pair",
        "Trade a pairing code for a connection token.",
        "Auth",
        params=(
            Param("code", "string", B, required=True, description="6-character code."),
            WORLD_ID_B,
            Param("worldTitle", "string", B, description="The world's title."),
            Param(
                "existingClientId", "string", B, description="Keep this client id when re-pairing."
            ),
        ),
        extra=PUBLIC_BODY,
    ),
    _local(
        "GET",
        "/api/clients/{clientId}/active",
        "client_active",
        "Is this world connected?",
        "Auth",
        params=(Param("clientId", "string", P, required=True, description="World id."),),
    ),
    _local(
        "POST",
        "/api/self-unpair",
        "self_unpair",
        "Revoke this world's connection token.",
        "Auth",
        params=(Param("token", "string", B, required=True, description="Connection token."),),
        extra=PUBLIC_BODY,
    ),
    _local("GET", "/openapi.json", "openapi", "This API as an OpenAPI 3.1 document.", "Status"),
    _local("GET", "/docs", "docs", "Interactive API documentation.", "Status"),
    _local(
        "GET",
        "/metrics",
        "metrics",
        "This instance's counters and gauges in the Prometheus text format.",
        "Status",
    ),
)

# Canvas (endpoints-beyond-seed §10) ----------------------------------------------------------

# documentType -> the embedded document class the relay sends as `className` (§10.1).
CANVAS_DOCUMENT_TYPES: Final = {
    "tokens": "Token",
    "tiles": "Tile",
    "drawings": "Drawing",
    "lights": "AmbientLight",
    "sounds": "AmbientSound",
    "notes": "Note",
    "templates": "MeasuredTemplate",
    "walls": "Wall",
    "regions": "Region",
}
DOCUMENT_TYPE = Param(
    "documentType",
    "string",
    P,
    required=True,
    description="tokens, tiles, drawings, lights, sounds, notes, templates, walls or regions.",
)
SCENE_ID_Q = Param("sceneId", "string", Q, description="Scene id (default: the active scene).")
SCENE_ID_BQ = Param("sceneId", "string", BQ, description="Scene id (default: the active scene).")


def _canvas(
    method: str,
    path: str,
    action: str,
    summary: str,
    scope: str,
    *params: Param,
    timeout: float = DEFAULT_TIMEOUT,
    document_types: dict[str, str] | None = None,
) -> Route:
    return _forward(
        method,
        path,
        action,
        summary,
        "Canvas",
        *params,
        scope=scope,
        timeout=timeout,
        document_types=document_types,
    )


CANVAS_ROUTES: Final = (
    _canvas(
        "GET",
        "/canvas/{documentType}",
        "get-canvas-documents",
        "List a scene's embedded documents of one type, or one by id.",
        "canvas:read",
        DOCUMENT_TYPE,
        SCENE_ID_Q,
        Param("documentId", "string", Q, description="Only this document."),
        document_types=CANVAS_DOCUMENT_TYPES,
    ),
    _canvas(
        "POST",
        "/canvas/{documentType}",
        "create-canvas-document",
        "Create a document (token, tile, wall, light...) on a scene.",
        "canvas:write",
        DOCUMENT_TYPE,
        # Untyped: an object, or an array of objects to create several at once. The reference
        # relay refuses arrays although its docs and the module accept them (§15 X6); the
        # world checks the value.
        Param(
            "data",
            None,
            B,
            required=True,
            description="The new document's data, or an array of them.",
        ),
        SCENE_ID_BQ,
        timeout=USE_TIMEOUT,
        document_types=CANVAS_DOCUMENT_TYPES,
    ),
    _canvas(
        "PUT",
        "/canvas/{documentType}",
        "update-canvas-document",
        "Update a document on a scene (nested data merges).",
        "canvas:write",
        DOCUMENT_TYPE,
        Param("documentId", "string", BQ, required=True, description="Id of the document."),
        Param("data", "object", B, required=True, description="The changes."),
        SCENE_ID_BQ,
        timeout=USE_TIMEOUT,
        document_types=CANVAS_DOCUMENT_TYPES,
    ),
    _canvas(
        "DELETE",
        "/canvas/{documentType}",
        "delete-canvas-document",
        "Delete a document from a scene.",
        "canvas:write",
        DOCUMENT_TYPE,
        Param("documentId", "string", Q, required=True, description="Id of the document."),
        SCENE_ID_Q,
        document_types=CANVAS_DOCUMENT_TYPES,
    ),
    _canvas(
        "POST",
        "/move-token",
        "move-token",
        "Move a token (snapped to the grid), through optional waypoints.",
        "canvas:write",
        _p("x", "number", True, description="Target x of the token's top-left corner (pixels)."),
        _p("y", "number", True, description="Target y of the token's top-left corner (pixels)."),
        _p("uuid", "string", description="Token uuid, or an actor uuid (its token)."),
        _p("name", "string", description="Token name (case-insensitive)."),
        _p("waypoints", "array", description="[{x, y}, ...] visited first."),
        _p("animate", "boolean", description="Animate the move (default true)."),
        SCENE_ID_BQ,
    ),
    _canvas(
        "GET",
        "/measure-distance",
        "measure-distance",
        "Distance between two points or tokens, with the grid's diagonal rule and units.",
        "canvas:read",
        _p("originX", "number", description="Origin x (pixels)."),
        _p("originY", "number", description="Origin y (pixels)."),
        _p("originUuid", "string", description="Origin token uuid."),
        _p("originName", "string", description="Origin token name."),
        _p("targetX", "number", description="Target x (pixels)."),
        _p("targetY", "number", description="Target y (pixels)."),
        _p("targetUuid", "string", description="Target token uuid."),
        _p("targetName", "string", description="Target token name."),
        SCENE_ID_BQ,
    ),
)

# Playlists and sounds (endpoints-beyond-seed §11); every parameter body first, then query.

PLAYLIST_ID = _p("playlistId", "string", description="Playlist id.")
PLAYLIST_NAME = _p("playlistName", "string", description="Playlist name (case-insensitive).")
SOUND_ID = _p("soundId", "string", description="Id of a sound of the playlist.")
SOUND_NAME = _p("soundName", "string", description="Name of a sound (case-insensitive).")


def _playlist(method: str, path: str, action: str, summary: str, *params: Param) -> Route:
    return _forward(method, path, action, summary, "Playlists", *params, scope="playlist:control")


PLAYLIST_ROUTES: Final = (
    _playlist("GET", "/playlists", "get-playlists", "Every playlist with its sounds."),
    _playlist(
        "POST",
        "/playlist/play",
        "playlist-play",
        "Play a playlist, or one of its sounds.",
        PLAYLIST_ID,
        PLAYLIST_NAME,
        SOUND_ID,
        SOUND_NAME,
    ),
    _playlist(
        "POST", "/playlist/stop", "playlist-stop", "Stop a playlist.", PLAYLIST_ID, PLAYLIST_NAME
    ),
    _playlist(
        "POST",
        "/playlist/next",
        "playlist-next",
        "Skip to the playlist's next sound.",
        PLAYLIST_ID,
        PLAYLIST_NAME,
    ),
    _playlist(
        "POST",
        "/playlist/volume",
        "playlist-volume",
        "Set the volume (0 to 1) of a playlist or of one of its sounds.",
        _p("volume", "number", True, description="0 to 1."),
        PLAYLIST_ID,
        PLAYLIST_NAME,
        SOUND_ID,
        SOUND_NAME,
    ),
    _playlist(
        "POST",
        "/play-sound",
        "play-sound",
        "Play a sound file for everyone.",
        _p("src", "string", True, description="Path of the audio file."),
        _p("volume", "number", default=0.5, description="0 to 1 (default 0.5)."),
        _p("loop", "boolean", default=False, description="Repeat (default false)."),
    ),
    _playlist(
        "POST",
        "/stop-sound",
        "stop-sound",
        "Stop the sounds playing this file (every sound without `src`).",
        _p("src", "string", description="Path of the audio file."),
    ),
)

# Users (endpoints-beyond-seed §7) ------------------------------------------------------------

USER_SELECTORS = (
    Param("id", "string", Q, description="User id."),
    Param("name", "string", Q, description="User name (case-insensitive)."),
)

USER_ROUTES: Final = (
    _forward(
        "GET",
        "/users",
        "get-users",
        "Every user of the world.",
        "Users",
        scope="user:read",
    ),
    _forward(
        "GET",
        "/user",
        "get-user",
        "One user, by id or name.",
        "Users",
        *USER_SELECTORS,
        scope="user:read",
        require_any=("id", "name"),
    ),
    _forward(
        "POST",
        "/user",
        "create-user",
        "Create a user (GM only with userId).",
        "Users",
        Param("name", "string", B, required=True, description="The new user's name."),
        Param(
            "role",
            "number",
            B,
            default=1,
            description="0 none, 1 player, 2 trusted, 3 assistant GM, 4 GM (default 1).",
        ),
        Param("password", "string", B, description="Password."),
        scope="user:write",
    ),
    _forward(
        "PUT",
        "/user",
        "update-user",
        "Update a user (GM only with userId).",
        "Users",
        Param(
            "data",
            "object",
            B,
            required=True,
            description="Changes: name, role, password, color, avatar, character.",
        ),
        Param("id", "string", BQ, description="Id of the user to change."),
        Param("name", "string", BQ, description="Name of the user to change."),
        scope="user:write",
        require_any=("id", "name"),
    ),
    _forward(
        "DELETE",
        "/user",
        "delete-user",
        "Delete a user (GM only with userId).",
        "Users",
        *USER_SELECTORS,
        scope="user:write",
        require_any=("id", "name"),
    ),
)

CODE = Param("code", "string", P, required=True, description="The request's code.")
LIMITED = "Over 20 pair/key requests per IP in 15 minutes."
MISSES = "Over 10 unknown codes looked up from this IP in 15 minutes (known codes are free)."
PAIR_STATUS = (
    "`pending`, `approved` (once, with `pairingCode`; or `upgraded`), `denied`, `exchanged`."
)
KEY_STATUS = "`pending`, `approved` (device flow: once, with `apiKey`), `denied`, `exchanged`."
PAGE = {"content_type": "text/html"}
_TEXT_B = ("worldTitle", "systemId", "systemTitle", "systemVersion", "foundryVersion")

# Browser pairing and API-key requests (endpoints-beyond-seed §12): public, handled by pairing.py;
# the relay's owner approves with `vttrelay pair approve` / `vttrelay keys approve`.
PAIRING_ROUTES: Final = (
    Route(
        "POST",
        "/auth/pair-request",
        "local",
        "A world asks to be paired (the module's Pair and Upgrade buttons); 201 with its code.",
        "Auth",
        handler="pair_request",
        extra={
            **PUBLIC_BODY,
            "responses": {"201": "Created: code, pairUrl.", "400": "Bad body.", "429": LIMITED},
        },
        params=(
            WORLD_ID_B,
            *(Param(name, "string", B, description=f"The world's {name}.") for name in _TEXT_B),
            Param("clientId", "string", B, description="The paired world's id (upgrade)."),
            Param("requestedRemoteScopes", "array", B, description="Cross-world scopes asked."),
            Param("requestedTargetClients", "array", B, description="Cross-world targets asked."),
            Param("upgradeOnly", "boolean", B, description="Only upgrade permissions."),
        ),
    ),
    Route(
        "GET",
        "/auth/pair-request/{code}/status",
        "local",
        "A pair request's status; the first read after approval carries the pairing code.",
        "Auth",
        handler="pair_status",
        extra={
            "responses": {
                "200": PAIR_STATUS,
                "404": "Unknown code.",
                "410": "Expired.",
                "429": MISSES,
            }
        },  # fmt: skip
        params=(CODE,),
    ),
    Route(
        "POST",
        "/auth/key-request",
        "local",
        "An app asks for an API key with these scopes; 201 with its code and approval URL.",
        "Auth",
        handler="key_request",
        extra={
            **PUBLIC_BODY,
            "responses": {"201": "Created: code, approvalUrl.", "400": "Bad body.", "429": LIMITED},
        },
        params=(
            Param("appName", "string", B, required=True, description="The app's name."),
            Param("scopes", "array", B, required=True, description="Scopes asked for."),
            Param("appDescription", "string", B, description="What the app does."),
            Param("appUrl", "string", B, description="The app's public http(s) URL."),
            Param("callbackUrl", "string", B, description="Set: web flow (exchange code)."),
            Param("clientIds", "array", B, description="Worlds the key should reach."),
            Param("suggestedMonthlyLimit", "number", B, description="Shown to the approver."),
            Param("suggestedExpiry", "string", B, description="Shown to the approver."),
        ),
    ),
    Route(
        "GET",
        "/auth/key-request/{code}/status",
        "local",
        "A key request's status; device flow: the first read after approval carries the key.",
        "Auth",
        handler="key_status",
        extra={
            "responses": {
                "200": KEY_STATUS,
                "404": "Unknown code.",
                "410": "Expired.",
                "429": MISSES,
            }
        },  # fmt: skip
        params=(CODE,),
    ),
    Route(
        "POST",
        "/auth/key-request/exchange",
        "local",
        "Web flow: trade the one-time exchange code for the approved API key.",
        "Auth",
        handler="key_exchange",
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
    ),
    Route(
        "GET",
        "/pair/{code}",
        "local",
        "The page a pair request's pairUrl opens: who asks, and how to approve.",
        "Auth",
        handler="pair_page",
        extra={**PAGE, "responses": {"200": "The page.", "404": "Unknown code.", "429": MISSES}},
        params=(CODE,),
    ),
    Route(
        "GET",
        "/approve/{code}",
        "local",
        "The page a key request's approvalUrl opens: what is asked, and how to approve.",
        "Auth",
        handler="key_page",
        extra={**PAGE, "responses": {"200": "The page.", "404": "Unknown code.", "429": MISSES}},
        params=(CODE,),
    ),
)

ROUTES: Final[tuple[Route, ...]] = (
    *DND5E_ROUTES,
    *CHAT_ROUTES,
    *UTILITY_ROUTES,
    *ROLL_ROUTES,
    *EFFECT_ROUTES,
    *STRUCTURE_ROUTES,
    *MACRO_ROUTES,
    *CANVAS_ROUTES,
    *PLAYLIST_ROUTES,
    *USER_ROUTES,
    *ENCOUNTER_ROUTES,
    *SCENE_ROUTES,
    *ENTITY_ROUTES,
    *STREAM_ROUTES,
    *RELAY_ROUTES,
    *PAIRING_ROUTES,
)

# World actions reachable only over the client WebSocket /ws/api (no REST path): the module's
# older folder and compendium listing, whose REST route is answered by the relay as deprecated
# (endpoints-beyond-seed §4.5).
WS_ONLY_ROUTES: Final[tuple[Route, ...]] = (
    _forward(
        "GET",
        "",
        "contents",
        "A folder's documents or a compendium's index entries (WebSocket only).",
        "Structure",
        Param("path", None, B, description="`Folder.<id>` or `Compendium.<pack id>`."),
        scope="structure:read",
    ),
)

# All scopes a key may hold (wire-protocol §7.2) and those a new key gets by default.
ALL_SCOPES: Final = (
    "entity:read",
    "entity:write",
    "roll:read",
    "roll:execute",
    "chat:read",
    "chat:write",
    "encounter:read",
    "encounter:manage",
    "macro:list",
    "macro:execute",
    "macro:write",
    "scene:read",
    "scene:write",
    "canvas:read",
    "canvas:write",
    "effects:read",
    "effects:write",
    "user:read",
    "user:write",
    "file:read",
    "file:write",
    "playlist:control",
    "world:info",
    "clients:read",
    "sheet:read",
    "events:subscribe",
    "session:manage",
    "execute-js",
    "search",
    "structure:read",
    "structure:write",
    "dnd5e",
)
DEFAULT_SCOPES: Final = (
    "entity:read",
    "roll:read",
    "chat:read",
    "encounter:read",
    "macro:list",
    "scene:read",
    "canvas:read",
    "effects:read",
    "user:read",
    "file:read",
    "world:info",
    "clients:read",
    "sheet:read",
    "events:subscribe",
    "search",
    "structure:read",
    "dnd5e",
)
