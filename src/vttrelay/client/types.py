"""Typed shapes of the relay's replies and stream events, as `TypedDict`s.

Why TypedDicts (and not dataclasses or msgspec structs): a reply is the world's JSON passed
through by the relay byte for byte, and a world (a real Foundry module, a newer version, a
system other than dnd5e) may add keys at any time. A TypedDict is the parsed `dict` itself: every
key the world sent is kept and reachable (`reply["data"]["someNewKey"]`), nothing is copied or
converted, the value can be logged or re-sent as JSON unchanged, and mypy / IDEs still check and
complete the documented keys. Dataclasses or structs would either drop unknown keys or need a
catch-all field, and would cost a conversion per reply; msgspec would also be one more
dependency for a bot developer to install.

`conforms(value, shape)` checks a parsed reply against a shape at run time (documented keys
present with the documented types; extra keys allowed): the SDK's tests use it on every method's
reply, and a bot developer can use it to spot a world that answers differently.

Shapes follow the replies of the embedded world and the reference (spec/relay-api.md,
reference/world-behaviour.md, endpoints-beyond-seed.md). Foundry documents (actors, items,
scenes, tokens...) are large and system-specific: they are `Document`, a dict with at least an
`_id` and whatever else the world sends.
"""

import types
import typing
from dataclasses import dataclass
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar, Union

T = TypeVar("T")

# Any JSON value the world sends where no shape is documented (e.g. a script's return value).
Json = Any
# A Foundry document (Actor, Item, Scene, Token, Combat, ...): `_id`, `name`, `type`, `system`,
# `flags`, ... as the world stores it; system-specific, so not described key by key.
Document = dict[str, Any]


class Envelope(TypedDict, Generic[T]):
    """The frame every world reply is: `type` (`<action>-result`), the relay's `requestId`, and
    usually `data` (and `success`). A refusal carries `error` and is raised as `BadRequest`."""

    type: str
    requestId: str
    data: NotRequired[T]
    success: NotRequired[bool]
    error: NotRequired[str]


# Rolls ---------------------------------------------------------------------------------------


class DieResult(TypedDict):
    result: int
    active: bool


class Die(TypedDict):
    faces: int
    results: list[DieResult]


class RollSummary(TypedDict):
    """A roll as the world reports it: formula, total, each die with dropped dice inactive."""

    formula: str
    total: int
    isCritical: bool
    isFumble: bool
    dice: list[Die]
    timestamp: NotRequired[int]


class RollData(TypedDict):
    id: str
    chatMessageCreated: bool
    roll: RollSummary


class LastRoll(TypedDict):
    id: str
    messageId: str | None
    user: Json
    speaker: dict[str, Any]
    flavor: str
    rollTotal: int
    formula: str
    isCritical: bool
    isFumble: bool
    dice: list[Die]
    timestamp: int


class RollsData(TypedDict, total=False):
    rolls: list[Json]


# D&D 5e --------------------------------------------------------------------------------------


class CheckResult(TypedDict):
    """A skill check, ability check or save: `skill` or `ability`, total, formula, dice text."""

    actorUuid: str
    total: int
    formula: str
    result: str
    skill: NotRequired[str]
    ability: NotRequired[str]


class DeathSaveResult(TypedDict):
    actorUuid: str
    total: int
    formula: str


class UseResult(TypedDict):
    """Using an item, spell or feature: the actor, the item's name, its attack roll if any."""

    uuid: str
    ability: str
    result: Json
    roll: NotRequired[RollSummary | None]


class RestResult(TypedDict):
    actorUuid: str
    result: dict[str, Any]


class CurrencyChange(TypedDict):
    currency: str
    previous: int
    current: int
    delta: int


class ActorDetails(TypedDict):
    actorUuid: NotRequired[str]
    name: NotRequired[str]


# Chat ----------------------------------------------------------------------------------------


class Speaker(TypedDict):
    scene: str | None
    actor: str | None
    token: str | None
    alias: NotRequired[str]


class Author(TypedDict):
    id: str
    name: str


class ChatMessage(TypedDict):
    """A chat message as /chat lists it and the chat stream sends it."""

    id: str
    uuid: str
    content: str
    speaker: Speaker
    timestamp: int
    whisper: list[str]
    type: str
    author: Author | None
    flavor: str
    isRoll: bool
    rolls: list[Json]
    flags: dict[str, Any]


class ChatPage(TypedDict):
    """One page of GET /chat, newest first."""

    messages: list[ChatMessage]
    total: int
    offset: int
    limit: int


# Users and the world -------------------------------------------------------------------------


class User(TypedDict):
    id: str
    name: str
    role: int
    isGM: bool
    active: bool
    color: str
    avatar: str
    character: NotRequired[str | None]


UserList = list[User]  # GET /users (an alias: a group's `list` method hides the builtin)


class Named(TypedDict):
    id: str
    title: str


class System(TypedDict):
    id: str
    title: str
    version: str


class Module(TypedDict):
    id: str
    title: str
    version: str
    active: bool


class SceneRef(TypedDict):
    id: str
    name: str


class WorldInfo(TypedDict):
    world: Named
    system: System
    foundryVersion: str
    modules: list[Module]
    users: list[User]
    activeScene: SceneRef | None


class PlayersReply(TypedDict):
    type: str
    requestId: str
    users: list[User]


class SelectedReply(TypedDict):
    type: str
    requestId: str
    success: NotRequired[bool]
    selected: list[Json]


# Entities, search, macros, encounters, canvas ------------------------------------------------


class EntityReply(TypedDict):
    """GET /get: the document (`data`) at `uuid`."""

    type: str
    requestId: str
    uuid: NotRequired[str]
    data: Document


class SearchResult(TypedDict):
    documentType: str
    id: str
    name: str
    uuid: str
    subType: NotRequired[str | None]
    folder: NotRequired[str | None]
    package: NotRequired[str | None]
    packageName: NotRequired[str | None]
    icon: NotRequired[str | None]
    journalLink: NotRequired[str]
    tagline: NotRequired[str]
    formattedMatch: NotRequired[str]
    resultType: NotRequired[str]


class SearchReply(TypedDict):
    type: str
    requestId: str
    query: str
    results: list[SearchResult]


class Macro(TypedDict):
    uuid: str
    id: str
    name: str
    type: str
    author: str | None
    command: str
    img: str
    scope: str
    canExecute: bool


class MacrosReply(TypedDict):
    type: str
    requestId: str
    macros: list[Macro]


class EncountersReply(TypedDict):
    type: str
    requestId: str
    encounters: list[Document]


class CanvasDocumentsReply(TypedDict):
    """GET /canvas/{documentType}: the scene's documents of that type."""

    type: str
    requestId: str
    sceneId: str
    documentType: str
    data: list[Document] | Document


class EffectsData(TypedDict):
    uuid: str
    effects: list[Document]


# Relay-local replies -------------------------------------------------------------------------


class ClientInfo(TypedDict):
    """A connected world as GET /clients lists it."""

    clientId: str
    worldId: str
    worldTitle: str
    systemId: str
    systemTitle: str
    systemVersion: str
    foundryVersion: str
    isOnline: bool
    lastSeen: int
    connectedSince: int
    instanceId: NotRequired[str]
    ipAddress: NotRequired[str]
    tokenName: NotRequired[str | None]


class ClientsReply(TypedDict):
    total: int
    clients: list[ClientInfo]


class KeyInfo(TypedDict):
    """GET /api/key: the calling key (never its secret)."""

    id: str
    name: str
    account: str
    scopes: list[str]
    clientIds: list[str]
    userId: str | None
    expiresAt: float | None
    ratePerMinute: int | None


class HealthReply(TypedDict):
    status: str
    timestamp: str
    instanceId: NotRequired[str]


class StatusReply(TypedDict):
    status: str
    version: str
    websocket: str


# Stream events -------------------------------------------------------------------------------


class Connected(TypedDict):
    """The first event of every stream."""

    clientId: str


class Deleted(TypedDict):
    """`chat-delete` and other deletions: the id of what went away."""

    id: str


ChatEventData = Union[Connected, ChatMessage, Deleted]  # noqa: UP007 (a runtime alias)
RollEventData = Union[Connected, dict[str, Any]]  # noqa: UP007
DocumentEventData = Union[Connected, dict[str, Any]]  # noqa: UP007


@dataclass(frozen=True)
class StreamEvent(Generic[T]):
    """One event of a stream: its name (`connected`, `chat-create`, `roll`, `actor-update`, a
    hook name...), its parsed JSON `data`, and its `id` (give it back as `last_event_id` to
    resume after it)."""

    event: str
    data: T
    id: str


# Run-time check ------------------------------------------------------------------------------


def conforms(value: Any, shape: Any, path: str = "reply") -> list[str]:
    """Where `value` departs from `shape` (a TypedDict, list[...], dict[...], a union, a plain
    type or Any): a list of problems, empty when it conforms. Extra keys are allowed."""
    if shape is Any or shape is object:
        return []
    origin = typing.get_origin(shape)
    args = typing.get_args(shape)
    if origin in (Union, types.UnionType):
        options = [conforms(value, option, path) for option in args]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {args}"]
    if typing.is_typeddict(origin or shape):
        return _typeddict_problems(value, shape, path)
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in conforms(item, args[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        return [p for k, v in value.items() for p in conforms(v, args[1], f"{path}.{k}")]
    if shape is type(None):
        return [] if value is None else [f"{path}: expected null, got {value!r}"]
    if shape is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif shape is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, shape)
    return [] if ok else [f"{path}: expected {shape.__name__}, got {type(value).__name__}"]


def _typeddict_problems(value: Any, shape: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object, got {type(value).__name__}"]
    base = typing.get_origin(shape) or shape
    hints = typing.get_type_hints(base)
    binding = dict(zip(getattr(base, "__parameters__", ()), typing.get_args(shape), strict=False))
    problems: list[str] = []
    for key, hint in hints.items():
        hint = binding.get(hint, hint)
        if key not in value:
            if key in base.__required_keys__:
                problems.append(f"{path}: missing '{key}'")
            continue
        problems.extend(conforms(value[key], hint, f"{path}.{key}"))
    return problems
