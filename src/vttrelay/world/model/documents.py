"""Documents as plain data: uuids, lookups, `_stats`, settings and the chat-message shape.

Documents are JSON objects shaped like the tabletop's own source data (world-behaviour §3.1):
an Actor embeds its `items` and `effects`, a Scene embeds its `tokens`. Top-level collections are
those of `model.collections.COLLECTIONS`. Everything here is pure: it reads and writes through a
`model.collections.Documents` (the store's open transaction, `store.Tx`, is one).

Uuids: `<Type>.<id>` for every top-level type, then any chain of `<EmbeddedType>.<id>` pairs
that `EMBEDDED` allows (`Actor.<id>.Item.<id>`, `Actor.<id>.Item.<id>.ActiveEffect.<id>`,
`Scene.<id>.Token.<id>`, `Playlist.<id>.PlaylistSound.<id>`, ...), and
`Scene.<id>.Token.<id>.Actor.<id>` (a token's actor). Other uuid forms (compendium uuids) are
resolved by the store (`Documents.compendium`: the compendium packs).

Token actors: a linked token's actor is the world actor; an unlinked token's is a `TokenActor`,
the world actor with the token's `delta` applied (`rules.deltas`). `token_actor` gives either;
`put_actor` writes an actor back, a `TokenActor` into its token's delta (never into the world
actor), and `save` does the same for anything resolved inside a token's actor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model import deltas
from vttrelay.world.model.collections import COLLECTIONS, COMPENDIUM, name_key
from vttrelay.world.model.ids import new_id

CORE_VERSION: Final = "14.363"
SYSTEM_ID: Final = "dnd5e"
SYSTEM_VERSION: Final = "5.0.4"

# Setting keys (Setting documents are `{_id, key, value}`).
SETTING_WORLD: Final = "vttrelay.world"  # world id/title, system, tabletop version, modules
SETTING_ALLOW_EXECUTE_JS: Final = "foundry-rest-api.allowExecuteJs"
SETTING_EXECUTE_JS_ROLE: Final = "foundry-rest-api.codeExecutionPermission"
SETTING_ALLOW_MACRO_WRITE: Final = "foundry-rest-api.allowMacroWrite"
SETTING_ALLOW_MACRO_EXECUTE: Final = "foundry-rest-api.allowMacroExecute"
SETTING_NOTIFY_MACRO_EXECUTE: Final = "foundry-rest-api.notifyOnMacroExecute"

GM_ROLE: Final = 4
ASSISTANT_ROLE: Final = 3

# Embedded collections: parent document type -> {embedded document type: key in the parent}.
# The tabletop's own embedded collections; a uuid chain may only follow these steps.
EMBEDDED: Final[dict[str, dict[str, str]]] = {
    "Actor": {"Item": "items", "ActiveEffect": "effects"},
    "Item": {"ActiveEffect": "effects"},
    "Scene": {
        "Token": "tokens",
        "Tile": "tiles",
        "Drawing": "drawings",
        "Wall": "walls",
        "AmbientLight": "lights",
        "AmbientSound": "sounds",
        "Note": "notes",
        "MeasuredTemplate": "templates",
        "Region": "regions",
    },
    "Region": {"RegionBehavior": "behaviors"},
    "Playlist": {"PlaylistSound": "sounds"},
    "Combat": {"Combatant": "combatants", "CombatantGroup": "groups"},
    "JournalEntry": {"JournalEntryPage": "pages"},
    "RollTable": {"TableResult": "results"},
    "Cards": {"Card": "cards"},
}


# Uuids -------------------------------------------------------------------------------------------


def actor_uuid(actor_id: str) -> str:
    return f"Actor.{actor_id}"


def item_uuid(actor_id: str, item_id: str) -> str:
    return f"Actor.{actor_id}.Item.{item_id}"


def effect_uuid(actor_id: str, effect_id: str) -> str:
    return f"Actor.{actor_id}.ActiveEffect.{effect_id}"


def token_uuid(scene_id: str, token_id: str) -> str:
    return f"Scene.{scene_id}.Token.{token_id}"


def token_actor_uuid(scene_id: str, token_id: str, actor_id: str) -> str:
    return f"Scene.{scene_id}.Token.{token_id}.Actor.{actor_id}"


def token_actor_uuid_of(scene_id: str, token: dict[str, Any]) -> str | None:
    """The uuid of a token's actor: the world actor's if linked, else the synthetic
    `Scene.<s>.Token.<t>.Actor.<a>`; None for a token without an actor."""
    actor_id = token.get("actorId")
    if not isinstance(actor_id, str) or not actor_id:
        return None
    if token.get("actorLink"):
        return actor_uuid(actor_id)
    return token_actor_uuid(scene_id, str(token["_id"]), actor_id)


def chat_uuid(message_id: str) -> str:
    return f"ChatMessage.{message_id}"


def doc_uuid(document_name: str, doc_id: str, parent_uuid: str | None = None) -> str:
    """`<Type>.<id>`, or `<parent uuid>.<Type>.<id>` for an embedded document."""
    own = f"{document_name}.{doc_id}"
    return f"{parent_uuid}.{own}" if parent_uuid else own


@dataclass
class Resolved:
    """What a uuid points to.

    `kind` is the document name (`Actor`, `Item`, `Token`, ...). `doc` is the document itself
    (a copy, as stored). `actor` is the world Actor that owns it (for an Item or ActiveEffect of
    an actor), or the Actor a Token represents. `scene` is set for tokens and other scene
    documents. `root` is the top-level document to `put` back (see `save`) after changing `doc`
    in place. For an embedded document, `parent` is the document that holds it, in its list
    `parent[key]`. `pack` names the compendium pack of a compendium document (read-only).
    """

    kind: str
    uuid: str
    doc: dict[str, Any]
    root_collection: str
    root: dict[str, Any]
    actor: dict[str, Any] | None = None
    scene: dict[str, Any] | None = None
    parent: dict[str, Any] | None = None
    key: str | None = None
    pack: str | None = None

    @property
    def embedded(self) -> bool:
        return self.parent is not None

    @property
    def permission_doc(self) -> dict[str, Any]:
        """The document whose `ownership` decides access: a token's actor (else its scene),
        the top-level document holding an embedded one, or the document itself."""
        if self.kind == "Token":
            return self.actor or self.root
        return self.root


class Documents(Protocol):
    """What the model's functions and the rules read and write documents through: the store's
    open transaction (`store.sqlite.Tx`) is one; the model never imports the store. Private
    copies out, whole documents in; `compendium` resolves a `Compendium.` uuid (the packs)."""

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None: ...

    def all(self, collection: str) -> list[dict[str, Any]]: ...

    def active(self, collection: str) -> list[dict[str, Any]]: ...

    def named(self, collection: str, name: str) -> list[dict[str, Any]]: ...

    def put(self, collection: str, doc: dict[str, Any]) -> None: ...

    def delete(self, collection: str, doc_id: str) -> None: ...

    def compendium(self, uuid: str) -> Resolved | None: ...


class TokenActor(dict[str, Any]):
    """The synthetic actor of an unlinked token: a plain actor document (it serializes as one)
    that knows the token it belongs to, so that writing it back goes to that token's delta."""

    scene_id: str
    token_id: str

    @property
    def uuid(self) -> str:
        return token_actor_uuid(self.scene_id, self.token_id, str(self["_id"]))


def token_actor(
    tx: Documents, scene: dict[str, Any], token: dict[str, Any]
) -> dict[str, Any] | None:
    """A token's actor: the world actor if the token is linked, else its synthetic actor (the
    world actor plus the token's delta); None if the token names no existing actor."""
    actor_id = token.get("actorId")
    base = tx.get("Actor", actor_id) if isinstance(actor_id, str) and actor_id else None
    if base is None or token.get("actorLink"):
        return base
    actor = TokenActor(deltas.synthetic_actor(base, token.get("delta")))
    actor.scene_id, actor.token_id = str(scene["_id"]), str(token["_id"])
    return actor


def actor_uuid_of(actor: dict[str, Any]) -> str:
    """An actor's uuid: `Actor.<id>`, or a token actor's `Scene.<s>.Token.<t>.Actor.<id>`."""
    return actor.uuid if isinstance(actor, TokenActor) else actor_uuid(str(actor["_id"]))


def put_actor(tx: Documents, actor: dict[str, Any]) -> None:
    """Store a changed actor: a world actor as itself; a token's synthetic actor as its token's
    new delta (what differs from the world actor), in the scene as stored now."""
    if not isinstance(actor, TokenActor):
        tx.put("Actor", actor)
        return
    scene = tx.get("Scene", actor.scene_id)
    base = tx.get("Actor", str(actor["_id"]))
    token = _embedded(scene, "tokens", actor.token_id) if scene is not None else None
    if scene is None or base is None or token is None:
        raise ValueError(f"the token of {actor.uuid} no longer exists")
    token["delta"] = deltas.delta_between(base, actor)
    tx.put("Scene", scene)


def _embedded(parent: dict[str, Any], key: str, doc_id: str) -> dict[str, Any] | None:
    for child in parent.get(key) or ():
        if isinstance(child, dict) and child.get("_id") == doc_id:
            return child
    return None


def resolve_uuid(tx: Documents, uuid: object) -> Resolved | None:
    """Resolve a uuid string to its document; None for anything unknown or malformed."""
    if not isinstance(uuid, str) or not uuid:
        return None
    parts = uuid.split(".")
    if parts[0] == COMPENDIUM:
        return tx.compendium(uuid)
    if len(parts) % 2 or not all(parts):
        return None
    pairs = list(zip(parts[0::2], parts[1::2], strict=True))
    root_kind, root_id = pairs[0]
    if root_kind not in COLLECTIONS:
        return None
    root = tx.get(root_kind, root_id)
    if root is None:
        return None
    return resolve_within(tx, Resolved(root_kind, uuid, root, root_kind, root), pairs[1:])


def resolve_within(tx: Documents, res: Resolved, pairs: list[tuple[str, str]]) -> Resolved | None:
    """Follow `(type, id)` steps down from an already resolved document (`res`, whose `uuid`
    is the whole uuid being resolved). Shared by the world and compendium resolvers."""
    if res.kind == "Actor":
        res.actor = res.root
    elif res.kind == "Scene":
        res.scene = res.root
    for kind, doc_id in pairs:
        if res.kind == "Token" and kind == "Actor":
            # A token's actor: the world actor (linked) or its synthetic actor (unlinked).
            actor = res.actor
            if actor is None or res.doc.get("actorId") != doc_id:
                return None
            res = Resolved("Actor", res.uuid, actor, "Actor", actor, actor=actor, scene=res.scene)
            continue
        key = EMBEDDED.get(res.kind, {}).get(kind)
        if key is None:
            return None
        child = _embedded(res.doc, key, doc_id)
        if child is None:
            return None
        res.parent, res.key = res.doc, key
        res.kind, res.doc = kind, child
        if kind == "Token" and res.scene is not None:
            res.actor = token_actor(tx, res.scene, child)
    return res


def _put_root(tx: Documents, res: Resolved) -> None:
    if res.root_collection == "Actor":
        put_actor(tx, res.root)
    else:
        tx.put(res.root_collection, res.root)


def save(tx: Documents, res: Resolved) -> None:
    """Write back the top-level document after `res.doc` was changed in place."""
    if res.pack is not None:
        raise ValueError(f"compendium document {res.uuid} is read-only")
    _put_root(tx, res)


def remove(tx: Documents, res: Resolved) -> None:
    """Delete the document: from its parent's list if embedded, else from the store."""
    if res.pack is not None:
        raise ValueError(f"compendium document {res.uuid} is read-only")
    if res.parent is not None and res.key is not None:
        res.parent[res.key] = [
            d for d in res.parent.get(res.key) or () if not (isinstance(d, dict) and d is res.doc)
        ]
        _put_root(tx, res)
    else:
        tx.delete(res.root_collection, res.doc["_id"])


def find_by_name(docs: list[dict[str, Any]], name: object) -> dict[str, Any] | None:
    """First document whose name equals `name` case-insensitively."""
    if not isinstance(name, str):
        return None
    wanted = name.casefold()
    for doc in docs:
        if name_key(doc) == wanted:
            return doc
    return None


def find_named(tx: Documents, collection: str, name: object) -> dict[str, Any] | None:
    """`find_by_name` over a whole `store.NAME_INDEXED` collection, parsing only the matches."""
    if not isinstance(name, str):
        return None
    return next(iter(tx.named(collection, name)), None)


def find_item(actor: dict[str, Any], item_id: str) -> dict[str, Any] | None:
    """The embedded item with this id (the same object, so it can be changed in place)."""
    return _embedded(actor, "items", item_id)


# _stats -----------------------------------------------------------------------------------------


def new_stats(now_ms: int, user_id: str | None = None) -> dict[str, Any]:
    """Foundry-like `_stats` for a document created now."""
    return {
        "compendiumSource": None,
        "coreVersion": CORE_VERSION,
        "createdTime": now_ms,
        "duplicateSource": None,
        "exportSource": None,
        "lastModifiedBy": user_id,
        "modifiedTime": now_ms,
        "systemId": SYSTEM_ID,
        "systemVersion": SYSTEM_VERSION,
    }


def touch_stats(doc: dict[str, Any], now_ms: int, user_id: str | None) -> None:
    """Record a modification in the document's `_stats` (created if missing)."""
    stats = doc.get("_stats")
    if not isinstance(stats, dict):
        doc["_stats"] = new_stats(now_ms, user_id)
        return
    stats["modifiedTime"] = now_ms
    stats["lastModifiedBy"] = user_id


# Users ------------------------------------------------------------------------------------------


def find_user(tx: Documents, ref: str) -> dict[str, Any] | None:
    """A user by id, else by case-insensitive exact name (world-behaviour §2.1)."""
    user = tx.get("User", ref)
    if user is not None:
        return user
    return find_named(tx, "User", ref)


def is_gm(user: dict[str, Any] | None) -> bool:
    """GM-level: no user (the connected GM) or a role of Assistant GM or GM."""
    return user is None or int(user.get("role", 0)) >= ASSISTANT_ROLE


def gm_user(tx: Documents) -> dict[str, Any] | None:
    """The world's first full GM: the user the agent acts as (the module runs in a GM browser)."""
    for user in tx.all("User"):
        if int(user.get("role", 0)) >= GM_ROLE:
            return user
    return None


def user_summary(user: dict[str, Any], active: bool) -> dict[str, Any]:
    """A user as /players and /world-info list it: 7 keys."""
    role = int(user.get("role", 1))
    return {
        "id": user["_id"],
        "name": user.get("name", ""),
        "role": role,
        "isGM": role >= ASSISTANT_ROLE,
        "active": active,
        "color": user.get("color"),
        "avatar": user.get("avatar"),
    }


# Scenes -----------------------------------------------------------------------------------------


def active_scene(tx: Documents) -> dict[str, Any] | None:
    """The active scene, or None."""
    return next(iter(tx.active("Scene")), None)


# Combats ----------------------------------------------------------------------------------------


def current_combat(tx: Documents) -> dict[str, Any] | None:
    """`game.combat`: the active combat shown on the viewed (active) scene, i.e. one that names
    no scene or that scene; the newest if several claim it."""
    scene = active_scene(tx)
    for combat in reversed(tx.active("Combat")):
        if combat.get("scene") in (None, scene and scene["_id"]):
            return combat
    return None


# Settings ---------------------------------------------------------------------------------------


def setting_doc(tx: Documents, key: str) -> dict[str, Any] | None:
    """The Setting document of this key, or None if the world has no such setting."""
    for doc in tx.all("Setting"):
        if doc.get("key") == key:
            return doc
    return None


def get_setting(tx: Documents, key: str, default: Any = None) -> Any:
    """A world setting's value, or `default`."""
    doc = setting_doc(tx, key)
    return default if doc is None else doc.get("value", default)


def set_setting(tx: Documents, key: str, value: Any, new_id: Callable[[], str] = new_id) -> None:
    """Create or change a world setting (a new one's id from `new_id`)."""
    doc = setting_doc(tx, key) or {"_id": new_id(), "key": key}
    doc["value"] = value
    tx.put("Setting", doc)


def world_meta(tx: Documents) -> dict[str, Any]:
    """The world's metadata (world id/title, system, tabletop version, modules); {} if unset."""
    meta = get_setting(tx, SETTING_WORLD, {})
    return meta if isinstance(meta, dict) else {}


def world_and_system(meta: dict[str, Any]) -> dict[str, Any]:
    """`{"world": {id, title}, "system": {id, title, version}}`, as world-info shows them."""
    world, system = meta.get("world") or {}, meta.get("system") or {}
    return {
        "world": {"id": world.get("id", ""), "title": world.get("title", "")},
        "system": {
            "id": system.get("id", ""),
            "title": system.get("title", ""),
            "version": system.get("version", ""),
        },
    }


# Chat messages ----------------------------------------------------------------------------------


def can_see_message(user: dict[str, Any] | None, doc: dict[str, Any]) -> bool:
    """Public messages are visible to all; whispers only to recipients, the author and GMs."""
    audience = chat_rules.message_audience(doc)
    if audience is None or is_gm(user):
        return True
    assert user is not None
    return user["_id"] in audience


def chat_viewer(user: dict[str, Any] | None) -> str | None:
    """The user id whose view of the chat a list shows: None for a GM (or no user), who sees
    every message; else the user's id (see `can_see_message`)."""
    if is_gm(user):
        return None
    assert user is not None
    return str(user["_id"])


def message_to_api(doc: dict[str, Any], users: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The 12-key chat message of world-behaviour §4, from a stored ChatMessage document."""
    author_id = doc.get("author")
    author = users.get(author_id) if isinstance(author_id, str) else None
    rolls = list(doc.get("rolls") or [])
    return {
        "id": doc["_id"],
        "uuid": chat_uuid(doc["_id"]),
        "content": doc.get("content", ""),
        "speaker": doc.get("speaker") or {"scene": None, "actor": None, "token": None},
        "timestamp": doc.get("timestamp", 0),
        "whisper": list(doc.get("whisper") or []),
        "type": doc.get("type", "base"),
        "author": {"id": author["_id"], "name": author.get("name", "")} if author else None,
        "flavor": doc.get("flavor", ""),
        "isRoll": bool(rolls),
        "rolls": rolls,
        "flags": doc.get("flags") or {},
    }


def users_by_id(tx: Documents) -> dict[str, dict[str, Any]]:
    return {u["_id"]: u for u in tx.all("User")}
