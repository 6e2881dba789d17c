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


# Parameter values the dnd5e routes accept (the world's rule tables; a unit test keeps them equal).
Ability = Literal["str", "dex", "con", "int", "wis", "cha"]
Skill = Literal[
    "acr", "ani", "arc", "ath", "dec", "his", "ins", "itm", "inv",
    "med", "nat", "prc", "prf", "per", "rel", "slt", "ste", "sur",
]  # fmt: skip
DetailSection = Literal[
    "resources", "spells", "items", "features", "stats", "abilities", "skills", "details",
    "conditions",
]  # fmt: skip
Denomination = Literal["pp", "gp", "ep", "sp", "cp"]


class Envelope(TypedDict, Generic[T]):
    """The frame most world replies are: `type` (`<action>-result`), the relay's `requestId`,
    and `data` (often with `success`). A refusal carries `error` and is raised as `BadRequest`."""

    type: str
    requestId: str
    data: NotRequired[T]
    success: NotRequired[bool]
    error: NotRequired[str]


class WorldReply(TypedDict):
    """The frame of world replies that carry their fields at the top level (no `data`)."""

    type: str
    requestId: str
    success: NotRequired[bool]


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
    """POST /roll."""

    id: str
    chatMessageCreated: bool
    roll: RollSummary


class LastRoll(TypedDict):
    """GET /lastroll, and each roll of GET /rolls."""

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


RollList = list[LastRoll]  # GET /rolls, newest first


# D&D 5e --------------------------------------------------------------------------------------


class CheckResult(TypedDict):
    """A skill check, ability check or save: `skill` or `ability`, total, formula, dice text."""

    actorUuid: str
    total: int
    formula: str
    result: str
    skill: NotRequired[str]
    ability: NotRequired[str]


class DeathSaves(TypedDict):
    success: int
    failure: int


class DeathSaveResult(TypedDict):
    actorUuid: str
    total: int
    formula: str
    result: str
    deathSaves: DeathSaves


class UseResult(TypedDict):
    """Using an item, spell or feature: the actor, the item's name, the chat card's id, the
    attack roll when the item attacks, and `outcome` (the embedded world): what happened
    (`attack` total/natural/critical/fumble/hit/ac, `damage` formula/total/taken/applied, the
    target's `save` ability/dc/onSave/total/success, `healing`, `hp` of the healed actor,
    `target` name/uuid/hp, `notes`)."""

    uuid: str
    ability: str
    result: Json
    roll: NotRequired[RollSummary | None]
    outcome: NotRequired[dict[str, Any]]


class RestResult(TypedDict):
    """A short or long rest: `result` is the system's rest result (deltas, updates, rolls)."""

    actorUuid: str
    result: dict[str, Any]


class CurrencyChange(TypedDict):
    currency: str
    previous: int
    current: int
    delta: int


Purse = dict[str, int]  # {"pp": 0, "gp": 4, "ep": 0, "sp": 20, "cp": 30}


class CurrencyTransfer(TypedDict):
    sourceActorUuid: str
    targetActorUuid: str
    transferred: Purse
    sourceBalance: Purse
    targetBalance: Purse


class ItemCharges(TypedDict):
    itemUuid: str
    oldCharges: int
    newCharges: int


class ExperienceChange(TypedDict):
    actorUuid: str
    oldXp: int
    newXp: int


class Concentration(TypedDict):
    actorUuid: str
    isConcentrating: bool
    effect: Document | None
    spell: Json


class ConcentrationBroken(TypedDict):
    actorUuid: str
    broken: bool
    removedEffectId: NotRequired[str | None]


class ConcentrationSave(TypedDict):
    actorUuid: str
    dc: int
    total: int
    formula: str
    result: str
    maintained: bool


class ItemEquipped(TypedDict):
    actorUuid: str
    itemUuid: str
    itemName: str
    equipped: bool


class ItemAttuned(TypedDict):
    actorUuid: str
    itemUuid: str
    itemName: str
    attuned: bool


class SpellPrepared(TypedDict):
    spellName: str
    prepared: bool
    uuid: str


class ActorDetails(TypedDict):
    """GET /dnd5e/get-actor-details: the actor's uuid and each section asked for (`resources`,
    `stats`, `items`, `spells`, ...), each as the world computes it."""

    uuid: str
    resources: NotRequired[dict[str, Any]]
    stats: NotRequired[dict[str, Any]]
    items: NotRequired[list[Document]]
    spells: NotRequired[Json]
    features: NotRequired[list[Document]]
    abilities: NotRequired[dict[str, Any]]
    skills: NotRequired[dict[str, Any]]
    details: NotRequired[dict[str, Any]]
    conditions: NotRequired[list[Json]]


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


class ChatDeleted(TypedDict):
    messageId: str


class Message(TypedDict):
    """A reply that is a sentence: `{"message": "All chat messages have been deleted"}`."""

    message: str


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


class PlayersReply(WorldReply):
    users: list[User]


class SelectedReply(WorldReply):
    selected: list[Json]


class SelectReply(WorldReply):
    count: int
    message: str
    selected: list[str]


class ScriptReply(WorldReply):
    """POST /execute-js: the script's return value."""

    result: Json


# Effects, folders, macros --------------------------------------------------------------------


class StatusEffect(TypedDict):
    id: str
    name: str
    icon: str


class StatusEffects(TypedDict):
    effects: list[StatusEffect]


class EffectsData(TypedDict):
    uuid: str
    effects: list[Document]


class AddedEffect(TypedDict):
    id: str
    uuid: str
    name: str
    icon: str
    statuses: list[str]


class EffectAdded(TypedDict):
    uuid: str
    effect: AddedEffect


class EffectRemoved(TypedDict):
    uuid: str
    removedEffectId: str


class Structure(TypedDict):
    """GET /structure: folders (and, if asked, their entities) by path."""

    folders: dict[str, Any]
    entities: NotRequired[dict[str, Any]]


class Folder(TypedDict):
    id: str
    uuid: str
    name: str
    type: str
    parentFolder: str | None
    contents: NotRequired[list[Json]]


class FolderDeleted(TypedDict):
    deleted: bool
    folderId: str
    entitiesDeleted: int
    foldersDeleted: int


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


class MacrosReply(WorldReply):
    macros: list[Macro]


class MacroExecuted(WorldReply):
    """POST /macro/{uuid}/execute: a chat macro's message, or a script macro's return value."""

    uuid: str
    result: Json


# Canvas and playlists ------------------------------------------------------------------------


class CanvasDocumentsReply(WorldReply):
    """The canvas routes: the scene's documents of `documentType` (a list; one document when
    asked by `documentId`; absent on delete)."""

    sceneId: str
    documentType: str
    data: NotRequired[list[Document] | Document]


class Point(TypedDict):
    x: float
    y: float


class TokenMoved(TypedDict):
    tokenUuid: str
    name: str
    x: float
    y: float
    sceneId: str


class Distance(TypedDict):
    distance: float
    units: str
    origin: Point
    target: Point
    sceneId: str


class Sound(TypedDict):
    id: str
    name: str
    path: str
    playing: bool
    volume: float
    repeat: bool


class Playlist(TypedDict):
    id: str
    name: str
    description: str
    playing: bool
    mode: int
    folder: str | None
    sorting: str
    sounds: list[Sound]


class Playlists(TypedDict):
    playlists: list[Playlist]


class PlaylistState(TypedDict):
    """The playlist after play, stop, next or volume."""

    playlist: Playlist


class SoundPlayed(TypedDict):
    src: str
    volume: float
    loop: bool


class SoundStopped(TypedDict):
    stopped: int
    src: str | None


# Encounters and scenes -----------------------------------------------------------------------


class Combatant(TypedDict):
    id: str
    name: str
    tokenUuid: str | None
    actorUuid: str | None
    img: NotRequired[str | None]
    initiative: float | None
    hidden: bool
    defeated: bool


class Encounter(TypedDict):
    id: str
    name: str
    round: int
    turn: int | None
    combatants: NotRequired[list[Combatant]]


class EncountersReply(WorldReply):
    encounters: list[Encounter]


class EncounterStarted(WorldReply):
    encounterId: str
    encounter: Encounter


class TurnReply(WorldReply):
    """next/last turn/round: where the encounter now stands and whose turn it is."""

    encounterId: str
    action: str
    currentTurn: int | None
    currentRound: int
    encounter: Encounter
    actorTurn: NotRequired[str | None]
    tokenTurn: NotRequired[str | None]


class EncounterEnded(WorldReply):
    encounterId: str
    message: str


class CombatantsAdded(WorldReply):
    encounterId: str
    added: list[str]
    failed: list[Json]


class InitiativeReply(WorldReply):
    """roll-initiative / set-initiative: the encounter in its new order; `rolled` (the combatant
    ids that rolled) or `combatantIds` and `initiative` (what was set)."""

    encounterId: str
    encounter: Encounter
    rolled: NotRequired[list[str]]
    combatantIds: NotRequired[list[str]]
    initiative: NotRequired[float]


class CombatantsRemoved(WorldReply):
    encounterId: str
    removed: list[str]
    failed: list[Json]


class SceneBackground(TypedDict):
    sceneId: str
    sceneName: str
    src: str
    imageData: NotRequired[str]  # a data URL, when the world has the file
    mimeType: NotRequired[str]


# Files -----------------------------------------------------------------------------------------


class FileEntry(TypedDict):
    name: str
    path: str
    type: Literal["file", "directory"]


class FileListing(WorldReply):
    """GET /file-system: a folder's directories, then its files (and deeper ones)."""

    path: str
    source: str
    results: list[FileEntry]
    recursive: bool


class FileUploaded(WorldReply):
    """POST /upload: where the file was stored."""

    path: str


# Entities and search -------------------------------------------------------------------------


class EntityReply(WorldReply):
    """GET /get: the document (`data`) at `uuid`."""

    uuid: NotRequired[str]
    data: Document


class EntityCreated(WorldReply):
    uuid: str
    entity: Document


class EntityUpdated(WorldReply):
    uuid: str
    entity: list[Document] | Document


class Done(WorldReply):
    """A reply that only says it happened (`success`), e.g. a deletion."""

    uuid: NotRequired[str]


class ItemGiven(WorldReply):
    fromUuid: str
    toUuid: str
    quantity: int
    newItemId: str | None


class ItemRemoved(WorldReply):
    actorUuid: str
    itemUuid: str
    quantity: int


class AttributeChange(TypedDict):
    uuid: str
    attribute: str
    oldValue: float
    newValue: float


class AttributeChanged(WorldReply):
    results: list[AttributeChange]


class Killed(TypedDict):
    uuid: str
    success: bool
    message: str


class KillReply(WorldReply):
    results: list[Killed]


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


class SearchReply(WorldReply):
    query: str
    results: list[SearchResult]


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
    instanceId: NotRequired[str]
    instancesAlive: NotRequired[int]


class Active(TypedDict):
    active: bool


class Paired(TypedDict):
    """POST /auth/pair: the world's connection token and where to connect with it."""

    token: str
    clientId: str
    relayUrl: str


class Unpaired(TypedDict):
    success: bool
    message: str


class PairRequested(TypedDict):
    code: str
    expiresAt: str
    expiresIn: int
    pairUrl: str
    upgradeOnly: bool


class KeyRequested(TypedDict):
    code: str
    expiresAt: str
    expiresIn: int
    approvalUrl: str


class PairStatus(TypedDict):
    """A pair request's state (`pending`, `approved`, `denied`, `exchanged`); the first read
    once approved carries the `pairingCode` (or `upgraded` for a scope upgrade)."""

    status: str
    message: NotRequired[str]
    pairingCode: NotRequired[str]
    upgraded: NotRequired[bool]


class KeyStatus(TypedDict):
    """A key request's state (`pending`, `approved`, `denied`, `exchanged`); the first read
    once approved (device flow) carries the key, its scopes and worlds."""

    status: str
    message: NotRequired[str]
    apiKey: NotRequired[str]
    scopes: NotRequired[list[str]]
    clientIds: NotRequired[list[str] | None]


class KeyExchanged(TypedDict):
    apiKey: str
    scopes: list[str]
    clientIds: list[str] | None


OpenApiDocument = dict[str, Any]  # GET /openapi.json: an OpenAPI 3.1 document


# Stream events -------------------------------------------------------------------------------


class Connected(TypedDict):
    """The first event of every stream."""

    clientId: str


class Deleted(TypedDict):
    """`chat-delete` and other deletions: the id of what went away."""

    id: str


class Gap(TypedDict):
    """`gap`: on a resumed stream, events from `missedFrom` on are no longer kept (the relay
    restarted, or its history moved past them); `oldestAvailable` is the first one it has."""

    missedFrom: int
    oldestAvailable: int | None


class StreamError(TypedDict):
    """`error`: the relay ends the stream (e.g. `Too many SSE connections`, or a subscriber too
    slow to keep up); the SDK reopens it."""

    error: str


# The data of each stream's events (by event name: `connected`, `gap`, `error`, then the
# stream's own: `chat-create`/`chat-update` a ChatMessage, `chat-delete` Deleted; `roll`, hook
# and document events a document or roll as the world sends it).
ChatEventData = Union[Connected, Gap, StreamError, ChatMessage, Deleted]  # noqa: UP007
RollEventData = Union[Connected, Gap, StreamError, dict[str, Any]]  # noqa: UP007
DocumentEventData = Union[Connected, Gap, StreamError, Document]  # noqa: UP007


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
