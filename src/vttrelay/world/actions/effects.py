"""Effect actions (endpoints-beyond-seed §5): `get-status-effects` (GET /effects/list),
`get-effects` (GET /effects), `add-effect` (POST /effects), `remove-effect` (DELETE /effects).

The target of a uuid is the document's actor when it has one (a Token's actor, an owned Item's
or effect's owner; an unlinked token's is its synthetic actor, changed through its delta), else
the document itself when it can hold effects (a world Item). Checks in
the module's order: (unknown userId, by the dispatcher; get-status-effects never looks at it) ->
`uuid is required` -> what to add or remove -> `Document not found with UUID: <uuid>` -> the
view gate (LIMITED) or the write gate (OWNER) -> the change. A status effect is an ActiveEffect
carrying the status id, so a `concentrating` effect added here is the one the dnd5e
concentration endpoints find and end. Document events (`effect-add`, `createActiveEffect`, ...)
follow from the stored change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vttrelay.world.errors import ActionError, EffectDataError
from vttrelay.world.model import documents
from vttrelay.world.rules import effects as rules
from vttrelay.world.rules.permissions import LIMITED, assert_owner, permission_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action
from vttrelay.world.store import packs


@dataclass
class Target:
    """The document whose `effects` an action reads or changes, and how to store it back."""

    collection: str
    doc: dict[str, Any]
    pack: str | None = None  # a compendium document: read-only

    @property
    def uuid(self) -> str:
        if isinstance(self.doc, documents.TokenActor):
            return self.doc.uuid  # an unlinked token's own actor
        own = f"{self.collection}.{self.doc['_id']}"
        return f"{packs.COMPENDIUM}.{self.pack}.{own}" if self.pack else own

    @property
    def name(self) -> str:
        return str(self.doc.get("name", ""))

    @property
    def effects(self) -> list[dict[str, Any]]:
        return list(self.doc.get("effects") or [])

    def effect_uuid(self, effect_id: str) -> str:
        return f"{self.uuid}.ActiveEffect.{effect_id}"


def _uuid(frame: dict[str, Any]) -> str:
    uuid = frame.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise ActionError("uuid is required")
    return uuid


def _target(ctx: ActionContext, uuid: str, *, write: bool = False) -> Target:
    resolved = documents.resolve_uuid(ctx.tx, uuid)
    if resolved is None:
        raise ActionError(f"Document not found with UUID: {uuid}")
    if resolved.actor is not None:
        target = Target("Actor", resolved.actor, resolved.pack)
    elif resolved.kind == "Item" and resolved.doc is resolved.root:
        target = Target("Item", resolved.doc, resolved.pack)
    else:
        raise ActionError(f"Document {uuid} cannot have active effects")
    if write and target.pack is not None:
        raise ActionError(f"Compendium document {uuid} is read-only")
    return target


def _save(ctx: ActionContext, target: Target) -> None:
    documents.touch_stats(target.doc, ctx.now_ms(), ctx.acting_user_id)
    if target.collection == "Actor":
        documents.put_actor(ctx.tx, target.doc)  # a token's synthetic actor: into its delta
    else:
        ctx.tx.put(target.collection, target.doc)


@action("get-status-effects", resolve_user=False)
def get_status_effects(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The system's status conditions, in order."""
    return {"data": {"effects": [s.summary() for s in rules.STATUS_EFFECTS]}}


@action("get-effects")
def get_effects(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The target's own effects (not those its items would transfer)."""
    target = _target(ctx, _uuid(frame))
    user = ctx.user
    if user is not None and permission_level(user, target.doc) < LIMITED:
        raise ActionError(
            f"User '{user.get('name', '')}' does not have permission to view '{target.name}'"
        )
    effects = [rules.effect_detail(e, target.effect_uuid(e["_id"])) for e in target.effects]
    return {"data": {"uuid": target.uuid, "effects": effects}}


@action("add-effect")
def add_effect(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Add a status condition (`statusId`, which wins) or a custom effect (`effectData`)."""
    uuid = _uuid(frame)
    status_id, data = frame.get("statusId"), frame.get("effectData")
    if status_id in (None, "") and data is None:
        raise ActionError("Either statusId or effectData is required")
    target = _target(ctx, uuid, write=True)
    assert_owner(ctx, target.doc, "add effects to")
    if status_id not in (None, ""):
        status = rules.STATUS_BY_ID.get(str(status_id))
        if status is None:
            available = ", ".join(s.id for s in rules.STATUS_EFFECTS)
            raise ActionError(f"Unknown status effect: '{status_id}'. Available: {available}")
        if rules.with_status(target.effects, status.id) is not None:
            raise ActionError(f"Actor '{target.name}' already has status '{status.id}'")
        effect = rules.new_status_effect(ctx.new_id(), status, ctx.now_ms())
    else:
        if not isinstance(data, dict):
            raise ActionError("effectData must be an object")
        try:
            effect = rules.new_effect(ctx.new_id(), data, ctx.now_ms())
        except EffectDataError as exc:
            raise ActionError(str(exc)) from None
    if target.collection == "Actor":  # a round/turn duration starts now, in the combat
        rules.start_duration(effect, documents.current_combat(ctx.tx))
    target.doc["effects"] = [*target.effects, effect]
    _save(ctx, target)
    brief = rules.effect_brief(effect, target.effect_uuid(effect["_id"]))
    return {"data": {"uuid": target.uuid, "effect": brief}}


@action("remove-effect")
def remove_effect(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Remove the first effect carrying `statusId` (which wins), or the effect `effectId`."""
    uuid = _uuid(frame)
    status_id, effect_id = frame.get("statusId"), frame.get("effectId")
    if status_id in (None, "") and effect_id in (None, ""):
        raise ActionError("Either effectId or statusId is required")
    target = _target(ctx, uuid, write=True)
    assert_owner(ctx, target.doc, "remove effects from")
    if status_id not in (None, ""):
        effect = rules.with_status(target.effects, str(status_id))
        if effect is None:
            raise ActionError(f"Status '{status_id}' not found on actor '{target.name}'")
    else:
        effect = next((e for e in target.effects if e.get("_id") == effect_id), None)
        if effect is None:
            raise ActionError(f"Effect with ID '{effect_id}' not found on actor '{target.name}'")
    target.doc["effects"] = [e for e in target.effects if e.get("_id") != effect["_id"]]
    _save(ctx, target)
    return {"data": {"uuid": target.uuid, "removedEffectId": effect["_id"]}}
