"""Document changes -> event frames (world-behaviour §6.2, "Module payload" shapes).

At the end of every action the dispatcher passes the transaction's changed documents here. Each
change is walked into document events, as the tabletop fires its hooks: a created or deleted
top-level document is one `create<Type>`/`delete<Type>`; an updated one is `update<Type>` (when its
own fields changed) plus a create/update/delete for each embedded document that changed, following
`documents.EMBEDDED` down any depth (an effect on an actor's item is an `ActiveEffect` event).
Every document event becomes a `hook-event` (`createActor`, `updateItem`, `deleteJournalEntry`,
...), for every document type.

Typed streams are rows of `STREAM_RULES`, keyed by (top-level collection, document name): the
actor stream (`update`, `item-add/-remove/-update`, `effect-add/-remove`) and the scene stream
(`token-create/-update/-delete`, `scene-activate`) and the combat stream (`start`, `turn`,
`combatant-add/-remove`, `end`, plus the combatStart/combatRound/combatTurn hooks). A new stream
is new rows. An unlinked token's delta changing is also its synthetic actor changing: those
actor events (`updateActor`, `createActiveEffect`, the actor stream under the token actor uuid)
are walked from the synthetic actor before and after (`token_actor_changes`). Chat events are
emitted by `ActionContext.create_chat_message` and the chat actions themselves. Nothing is
computed for channels without subscribers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from vttrelay.world.model import deltas, documents
from vttrelay.world.rules import combat as combat_rules
from vttrelay.world.store.sqlite import Change, Tx

if TYPE_CHECKING:
    from vttrelay.world.runtime.context import ActionContext

Kind = Literal["create", "update", "delete"]


def diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Foundry-style nested change set from `before` to `after` (removed keys as `-=key`)."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        if key not in before:
            out[key] = value
        elif isinstance(value, dict) and isinstance(before[key], dict):
            inner = diff(before[key], value)
            if inner:
                out[key] = inner
        elif before[key] != value:
            out[key] = value
    for key in before:
        if key not in after:
            out[f"-={key}"] = None
    return out


@dataclass(frozen=True)
class DocEvent:
    """One document created, updated or deleted. `doc` is the document after the change (before
    it, for a delete); `changes` is the update's change set (with `_id`), else None. `change` is
    the top-level change it came from."""

    kind: Kind
    document_name: str
    doc: dict[str, Any]
    changes: dict[str, Any] | None
    change: Change


@dataclass(frozen=True)
class StreamRule:
    """How one kind of document event reaches a typed stream: `payloads` returns the frames'
    data (none, one or more) for the event."""

    frame_type: str
    payloads: Callable[[DocEvent], list[dict[str, Any]]]


# Types whose embedded changes come before their own update: a combat's turn moves after the
# combatants it accounts for were added or removed (the tabletop updates the turn afterwards).
CHILDREN_FIRST: Final = frozenset({"Combat"})


def _by_id(docs: Any) -> dict[str, dict[str, Any]]:
    return {d["_id"]: d for d in docs or () if isinstance(d, dict) and "_id" in d}


def _own_changes(name: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed in a document itself (not in its embedded documents, not its `_stats`),
    with its `_id`; empty if nothing did."""
    skip = set(documents.EMBEDDED.get(name, {}).values())
    changes = diff(
        {k: v for k, v in before.items() if k not in skip},
        {k: v for k, v in after.items() if k not in skip},
    )
    changes.pop("_stats", None)
    return {**changes, "_id": after.get("_id", before.get("_id"))} if changes else {}


def _walk_update(
    name: str, before: dict[str, Any], after: dict[str, Any], change: Change
) -> Iterator[DocEvent]:
    """The events of an updated document: its own update, then its embedded collections' (for
    the types of `CHILDREN_FIRST`, the other way round)."""
    own = _own_changes(name, before, after)
    if own and name not in CHILDREN_FIRST:
        yield DocEvent("update", name, after, own, change)
    yield from _walk_children(name, before, after, change)
    if own and name in CHILDREN_FIRST:
        yield DocEvent("update", name, after, own, change)


def _walk_children(
    name: str, before: dict[str, Any], after: dict[str, Any], change: Change
) -> Iterator[DocEvent]:
    for child_name, key in documents.EMBEDDED.get(name, {}).items():
        old, new = _by_id(before.get(key)), _by_id(after.get(key))
        for doc_id, doc in new.items():
            if doc_id not in old:
                yield DocEvent("create", child_name, doc, None, change)
            elif doc != old[doc_id]:
                yield from _walk_update(child_name, old[doc_id], doc, change)
        for doc_id, doc in old.items():
            if doc_id not in new:
                yield DocEvent("delete", child_name, doc, None, change)


def document_events(change: Change) -> Iterator[DocEvent]:
    """The document events of one top-level change, in the order the tabletop fires them."""
    name = change.collection
    if change.before is None and change.after is not None:
        yield DocEvent("create", name, change.after, None, change)
    elif change.after is None and change.before is not None:
        yield DocEvent("delete", name, change.before, None, change)
    elif change.before is not None and change.after is not None:
        yield from _walk_update(name, change.before, change.after, change)


@dataclass(frozen=True)
class TokenActorChange(Change):
    """An unlinked token's synthetic actor changed (through its token's delta)."""

    actor_uuid: str = ""


def token_actor_changes(tx: Tx, change: Change) -> list[TokenActorChange]:
    """The synthetic actor changes of a scene update: one per unlinked token whose delta changed,
    its actor built from the world actor with the delta before and after."""
    if change.collection != "Scene" or change.before is None or change.after is None:
        return []
    before = {t.get("_id"): t for t in change.before.get("tokens") or () if isinstance(t, dict)}
    out = []
    for token in change.after.get("tokens") or ():
        old = before.get(token.get("_id")) if isinstance(token, dict) else None
        if old is None or token.get("actorLink") or old.get("delta") == token.get("delta"):
            continue
        actor_id = token.get("actorId")
        base = tx.get("Actor", actor_id) if isinstance(actor_id, str) else None
        if base is None:
            continue
        out.append(
            TokenActorChange(
                "Actor",
                base["_id"],
                deltas.synthetic_actor(base, old.get("delta")),
                deltas.synthetic_actor(base, token.get("delta")),
                actor_uuid=documents.token_actor_uuid(change.doc_id, token["_id"], base["_id"]),
            )
        )
    return out


# Typed streams -----------------------------------------------------------------------------------


def _actor(event_type: str, **fields: Callable[[DocEvent], Any]) -> StreamRule:
    """An actor-event rule: `{actorUuid, actorName, eventType, **fields}` for one event (the
    name, beyond the reference's fields, so that a reader can say whose event it is)."""

    def payloads(ev: DocEvent) -> list[dict[str, Any]]:
        uuid = (
            ev.change.actor_uuid
            if isinstance(ev.change, TokenActorChange)
            else documents.actor_uuid(ev.change.doc_id)
        )
        actor = ev.change.after or ev.change.before or {}
        head = {"actorUuid": uuid, "actorName": actor.get("name", ""), "eventType": event_type}
        return [{**head, **{k: get(ev) for k, get in fields.items()}}]

    return StreamRule("actor-event", payloads)


def _scene(event_type: str, **fields: Callable[[DocEvent], Any]) -> StreamRule:
    """A scene-event rule: `{sceneId, eventType, **fields}` for one event."""

    def payloads(ev: DocEvent) -> list[dict[str, Any]]:
        head = {"sceneId": ev.change.doc_id, "eventType": event_type}
        return [{**head, **{k: get(ev) for k, get in fields.items()}}]

    return StreamRule("scene-event", payloads)


def _scene_activated(ev: DocEvent) -> list[dict[str, Any]]:
    before, after = ev.change.before or {}, ev.change.after or {}
    if after.get("active") and not before.get("active"):
        return [
            {
                "sceneId": ev.change.doc_id,
                "eventType": "scene-activate",
                "name": after.get("name", ""),
            }
        ]
    return []


def _doc_id(ev: DocEvent) -> Any:
    return ev.doc["_id"]


def _doc_name(ev: DocEvent) -> Any:
    return ev.doc.get("name", "")


def _doc(ev: DocEvent) -> Any:
    return ev.doc


def _changes(ev: DocEvent) -> Any:
    return ev.changes


# Combats (endpoints-beyond-seed §8.8): `combatants` is the turn order, each
# `{id, name, initiative, defeated, uuid}`; there is no round event, a new round is a `turn`.


def _combatant(combat_id: str, combatant: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": combatant.get("_id"),
        "name": combatant.get("name"),
        "initiative": combatant.get("initiative"),
        "defeated": bool(combatant.get("defeated")),
        "uuid": documents.doc_uuid("Combatant", str(combatant.get("_id")), f"Combat.{combat_id}"),
    }


def _combat_state(event_type: str, combat: dict[str, Any]) -> dict[str, Any]:
    """`{eventType, encounterId, round, turn, started, combatants}` of a combat as it is."""
    members = combat_rules.turn_order(combat.get("combatants") or [])
    round_ = combat.get("round") or 0
    return {
        "eventType": event_type,
        "encounterId": combat["_id"],
        "round": round_,
        "turn": combat.get("turn"),
        "started": bool(members) and round_ > 0,
        "combatants": [_combatant(combat["_id"], c) for c in members],
    }


def _unstarted(combat: dict[str, Any], combatants: Any) -> dict[str, Any]:
    """The combat as `combatStart` sees it: before its first round is set."""
    return {**combat, "round": 0, "turn": None, "combatants": combatants}


def _started(ev: DocEvent) -> bool:
    """The change took the combat from round 0 into a round: `startCombat`."""
    before = ev.change.before or {}
    return (before.get("round") or 0) == 0 and (ev.doc.get("round") or 0) > 0


def _combat_created(ev: DocEvent) -> list[dict[str, Any]]:
    """A combat created already started (start-encounter): `start` as the tabletop fires it,
    before any combatant exists, then one `combatant-add` per combatant."""
    out = []
    if _started(ev):
        out.append(_combat_state("start", _unstarted(ev.doc, [])))
    for member in ev.doc.get("combatants") or ():
        out.append(_combatant_event("combatant-add", ev.doc, member))
    return out


def _combat_updated(ev: DocEvent) -> list[dict[str, Any]]:
    """`start` when the combat begins, else `turn` when its turn or round changed."""
    changes = ev.changes or {}
    if _started(ev):
        before = ev.change.before or {}
        return [_combat_state("start", _unstarted(ev.doc, before.get("combatants")))]
    if "turn" in changes or "round" in changes:
        return [_combat_state("turn", ev.doc)]
    return []


def _combatant_event(
    event_type: str, combat: dict[str, Any], member: dict[str, Any]
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "encounterId": combat["_id"],
        "combatant": _combatant(combat["_id"], member),
    }


def _combat_hooks(ev: DocEvent) -> list[dict[str, Any]]:
    """The non-document hooks of a combat change: combatStart, combatRound, combatTurn
    (`[combat, {round, turn}]`), fired before the combat's own update hook."""
    combat, changes = ev.doc, ev.changes or {}
    update = {"round": combat.get("round"), "turn": combat.get("turn")}
    if _started(ev):
        return [{"hook": "combatStart", "args": [combat, update]}]
    if ev.kind != "update":
        return []
    if "round" in changes:
        return [{"hook": "combatRound", "args": [combat, update]}]
    if "turn" in changes:
        return [{"hook": "combatTurn", "args": [combat, update]}]
    return []


def _combat_child(event_type: str) -> StreamRule:
    def payloads(ev: DocEvent) -> list[dict[str, Any]]:
        combat = ev.change.after or ev.change.before or {}
        return [_combatant_event(event_type, combat, ev.doc)]

    return StreamRule("combat-event", payloads)


def _combat_deleted(ev: DocEvent) -> list[dict[str, Any]]:
    return [{"eventType": "end", "encounterId": ev.doc["_id"], "round": ev.doc.get("round", 0)}]


# (top-level collection, document name) -> {event kind: rules}. Top-level creates and deletes of
# actors and scenes reach only the hooks, as in the module.
STREAM_RULES: dict[tuple[str, str], dict[Kind, tuple[StreamRule, ...]]] = {
    ("Actor", "Actor"): {"update": (_actor("update", changes=_changes),)},
    ("Actor", "Item"): {
        "create": (_actor("item-add", item=_doc),),
        "delete": (_actor("item-remove", itemId=_doc_id, itemName=_doc_name),),
        "update": (_actor("item-update", itemId=_doc_id, itemName=_doc_name, changes=_changes),),
    },
    ("Actor", "ActiveEffect"): {
        "create": (_actor("effect-add", effect=_doc),),
        "delete": (_actor("effect-remove", effectId=_doc_id, effectName=_doc_name),),
    },
    ("Scene", "Scene"): {"update": (StreamRule("scene-event", _scene_activated),)},
    ("Combat", "Combat"): {
        "create": (
            StreamRule("hook-event", _combat_hooks),
            StreamRule("combat-event", _combat_created),
        ),
        "update": (
            StreamRule("hook-event", _combat_hooks),
            StreamRule("combat-event", _combat_updated),
        ),
        "delete": (StreamRule("combat-event", _combat_deleted),),
    },
    ("Combat", "Combatant"): {
        "create": (_combat_child("combatant-add"),),
        "delete": (_combat_child("combatant-remove"),),
    },
    ("Scene", "Token"): {
        "create": (_scene("token-create", token=_doc),),
        "delete": (_scene("token-delete", tokenId=_doc_id, tokenName=_doc_name),),
        "update": (_scene("token-update", tokenId=_doc_id, changes=_changes),),
    },
}


def collect_document_events(ctx: ActionContext, changes: Callable[[], list[Change]]) -> None:
    """Queue the stream and hook events for one transaction's changes (`changes` is only
    called when some channel wants them)."""
    streams = {
        rule.frame_type for rows in STREAM_RULES.values() for rs in rows.values() for rule in rs
    }
    wanted = {frame for frame in streams if ctx.wants(frame)}
    hooks = ctx.wants("hook-event")
    if not (wanted or hooks):
        return
    user_id, now = ctx.acting_user_id, ctx.now_ms()
    every = [c for change in changes() for c in (change, *token_actor_changes(ctx.tx, change))]
    for change in every:
        for ev in document_events(change):
            for rule in STREAM_RULES.get((change.collection, ev.document_name), {}).get(
                ev.kind, ()
            ):
                if rule.frame_type in wanted:
                    for payload in rule.payloads(ev):
                        ctx.emit(rule.frame_type, payload)
            if hooks:
                options = {
                    "action": ev.kind,
                    "documentName": ev.document_name,
                    "modifiedTime": now,
                }
                args = [ev.doc, ev.changes] if ev.kind == "update" else [ev.doc]
                hook = f"{ev.kind}{ev.document_name}"
                ctx.emit("hook-event", {"hook": hook, "args": [*args, options, user_id]})
