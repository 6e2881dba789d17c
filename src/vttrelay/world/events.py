"""Document changes -> event frames (world-behaviour §6.2, "Module payload" shapes).

At the end of every action the dispatcher passes the transaction's changed documents here.
Actors produce `actor-event` (`update` with `changes`, `item-add/-remove/-update`,
`effect-add/-remove`) and `hook-event` (`createActor`, `updateActor`, `createItem`, ...); scenes
produce `scene-event` (`token-create/-update/-delete`, `scene-activate`) and their hooks. Chat
events are emitted by `ActionContext.create_chat_message` and the chat actions themselves.
Nothing is computed for channels without subscribers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vttrelay.world import documents
from vttrelay.world.store import Change

if TYPE_CHECKING:
    from vttrelay.world.context import ActionContext

_EMBEDDED_SKIP = {"Actor": ("items", "effects"), "Scene": ("tokens",)}


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


def _without(doc: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in keys}


def _by_id(docs: Any) -> dict[str, dict[str, Any]]:
    return {d["_id"]: d for d in docs or () if isinstance(d, dict) and "_id" in d}


class _Emitter:
    def __init__(self, ctx: ActionContext, user_id: str | None, now: int) -> None:
        self.ctx = ctx
        self.user_id = user_id
        self.now = now
        self.hooks = ctx.wants("hook-event")

    def hook(self, hook: str, doc_name: str, action: str, *args: Any) -> None:
        if self.hooks:
            options = {"action": action, "documentName": doc_name, "modifiedTime": self.now}
            self.ctx.emit("hook-event", {"hook": hook, "args": [*args, options, self.user_id]})

    def embedded(
        self,
        doc_name: str,
        before: Any,
        after: Any,
        on_add: Any,
        on_remove: Any,
        on_update: Any,
    ) -> None:
        old, new = _by_id(before), _by_id(after)
        for doc_id, doc in new.items():
            if doc_id not in old:
                on_add(doc)
                self.hook(f"create{doc_name}", doc_name, "create", doc)
            elif doc != old[doc_id]:
                changes = {**diff(old[doc_id], doc), "_id": doc_id}
                on_update(doc, changes)
                self.hook(f"update{doc_name}", doc_name, "update", doc, changes)
        for doc_id, doc in old.items():
            if doc_id not in new:
                on_remove(doc)
                self.hook(f"delete{doc_name}", doc_name, "delete", doc)


def collect_document_events(ctx: ActionContext, changes: Callable[[], list[Change]]) -> None:
    """Queue the actor, scene and hook events for one transaction's changes (`changes` is only
    called when some channel wants them)."""
    wants_actor, wants_scene = ctx.wants("actor-event"), ctx.wants("scene-event")
    if not (wants_actor or wants_scene or ctx.wants("hook-event")):
        return
    em = _Emitter(ctx, ctx.acting_user_id, ctx.now_ms())
    for change in changes():
        if change.collection == "Actor":
            _actor(em, change, wants_actor)
        elif change.collection == "Scene":
            _scene(em, change, wants_scene)


def _top_level(em: _Emitter, change: Change, name: str) -> bool:
    """Create/delete of a top-level document: hooks only. True if handled."""
    if change.before is None and change.after is not None:
        em.hook(f"create{name}", name, "create", change.after)
        return True
    if change.after is None and change.before is not None:
        em.hook(f"delete{name}", name, "delete", change.before)
        return True
    return False


def _own_changes(change: Change) -> dict[str, Any]:
    """What changed in an updated document itself (not in its embedded documents, not its
    `_stats`), with its `_id`; empty if nothing did."""
    assert change.before is not None and change.after is not None
    skip = _EMBEDDED_SKIP[change.collection]
    changes = diff(_without(change.before, skip), _without(change.after, skip))
    changes.pop("_stats", None)
    return {**changes, "_id": change.doc_id} if changes else {}


def _actor(em: _Emitter, change: Change, wanted: bool) -> None:
    if _top_level(em, change, "Actor"):
        return
    assert change.before is not None and change.after is not None
    before, after = change.before, change.after
    uuid = documents.actor_uuid(change.doc_id)

    def send(event_type: str, **fields: Any) -> None:
        if wanted:
            em.ctx.emit("actor-event", {"actorUuid": uuid, "eventType": event_type, **fields})

    changes = _own_changes(change)
    if changes:
        send("update", changes=changes)
        em.hook("updateActor", "Actor", "update", after, changes)
    em.embedded(
        "Item",
        before.get("items"),
        after.get("items"),
        lambda d: send("item-add", item=d),
        lambda d: send("item-remove", itemId=d["_id"], itemName=d.get("name", "")),
        lambda d, c: send("item-update", itemId=d["_id"], itemName=d.get("name", ""), changes=c),
    )
    em.embedded(
        "ActiveEffect",
        before.get("effects"),
        after.get("effects"),
        lambda d: send("effect-add", effect=d),
        lambda d: send("effect-remove", effectId=d["_id"], effectName=d.get("name", "")),
        lambda d, c: None,
    )


def _scene(em: _Emitter, change: Change, wanted: bool) -> None:
    if _top_level(em, change, "Scene"):
        return
    assert change.before is not None and change.after is not None
    before, after = change.before, change.after

    def send(event_type: str, **fields: Any) -> None:
        if wanted:
            em.ctx.emit(
                "scene-event", {"sceneId": change.doc_id, "eventType": event_type, **fields}
            )

    changes = _own_changes(change)
    if changes:
        em.hook("updateScene", "Scene", "update", after, changes)
        if after.get("active") and not before.get("active"):
            send("scene-activate", name=after.get("name", ""))
    em.embedded(
        "Token",
        before.get("tokens"),
        after.get("tokens"),
        lambda d: send("token-create", token=d),
        lambda d: send("token-delete", tokenId=d["_id"], tokenName=d.get("name", "")),
        lambda d, c: send("token-update", tokenId=d["_id"], changes=c),
    )
