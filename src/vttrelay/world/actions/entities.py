"""Entity actions (endpoints-beyond-seed §1): entity (GET /get), create, update, delete, give,
remove, increase, decrease, kill. Any document type the world holds, by `uuid` or by the GM's
controlled tokens (`selected`).

Each call is one store transaction: a failed call changes nothing, also where the module would
leave earlier targets changed (/increase on several targets, /kill). Targets are resolved again
right before each change, so two targets inside one top-level document (two tokens of a scene,
giving an item to its own holder) see each other's changes.

Decisions where the reference is a quirk (endpoints-beyond-seed §1.4, §1.5, §1.7): a `uuid` that
resolves to nothing is `Entity not found: <uuid>` for /update (the module fails with a script
TypeError), and for /delete with a `userId` (without one, the module answers success and so do
we); /remove refuses an `itemUuid` of another actor (`Item not found`), where the module would
delete that other actor's item; /give from an actor refuses to move more than the actor holds
(`<actor> has only <n> of <item>, not <amount>`), where the module deletes the source item and
still gives the whole amount, so that items are conserved.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.actions.canvas import check_written
from vttrelay.world.actions.search import ranked_entries
from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.model.collections import COLLECTIONS
from vttrelay.world.model.documents import Resolved
from vttrelay.world.rules import entities as rules
from vttrelay.world.rules.permissions import OWNER, assert_can_write, resolved_level, view
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}
SETTING_REFUSED: Final = "Setting documents can't be changed or deleted through the API"
SETTING_ALLOW_MACRO_WRITE: Final = documents.SETTING_ALLOW_MACRO_WRITE
MACRO_WRITE_SCOPE: Final = "macro:write"
_MACRO_DISABLED: Final = (
    "Macro {} is disabled in REST API module settings. A GM must enable "
    "'Allow Macro Creation/Editing' to allow this."
)
# User permissions of the tabletop's `<TYPE>_CREATE` form and the lowest role holding each by
# default (CONST.USER_PERMISSIONS); a name that is not listed is held by nobody but GMs.
CREATE_PERMISSION_ROLES: Final = {"ACTOR_CREATE": 3, "ITEM_CREATE": 3, "CARDS_CREATE": 3}


def _name(user: dict[str, Any]) -> str:
    return str(user.get("name", user.get("_id", "")))


def _resolve(ctx: ActionContext, uuid: str) -> Resolved | None:
    return documents.resolve_uuid(ctx.tx, uuid)


def _controlled_tokens(ctx: ActionContext) -> list[str]:
    """Uuids of the GM's controlled tokens."""
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        return []
    return [documents.token_uuid(scene["_id"], t["_id"]) for t in ctx.selected_tokens()]


def _token_actor_uuid(ctx: ActionContext, token_uuid: str) -> str | None:
    """The uuid of a token's actor (an unlinked token's own synthetic actor)."""
    res = _resolve(ctx, token_uuid)
    if res is None or res.actor is None:
        return None
    return documents.actor_uuid_of(res.actor)


def _selected_targets(ctx: ActionContext, actors: bool) -> list[str]:
    """The controlled tokens' uuids, or their actors' (tokens without an actor skipped)."""
    tokens = _controlled_tokens(ctx)
    if not actors:
        return tokens
    return [u for u in (_token_actor_uuid(ctx, t) for t in tokens) if u is not None]


def _flag(params: dict[str, Any], name: str) -> bool:
    return params.get(name) is True


def _macro_write_checks(ctx: ActionContext, params: dict[str, Any], verb: str) -> None:
    """The module's Macro guards: the world setting, then the key's `macro:write` scope."""
    if not ctx.setting(documents.SETTING_ALLOW_MACRO_WRITE, False):
        raise ActionError(_MACRO_DISABLED.format(verb), bare=True)
    scopes = params.get("_scopes")
    if isinstance(scopes, list) and MACRO_WRITE_SCOPE not in scopes:
        noun = {"creation": "create", "editing": "update", "deletion": "delete"}[verb]
        raise ActionError(f"macro:write scope is required to {noun} macros", bare=True)


def _touch(ctx: ActionContext, res: Resolved) -> None:
    documents.touch_stats(res.root, ctx.now_ms(), ctx.acting_user_id)
    if res.doc is not res.root and isinstance(res.doc.get("_stats"), dict):
        documents.touch_stats(res.doc, ctx.now_ms(), ctx.acting_user_id)


# GET /get ----------------------------------------------------------------------------------------


def _get_error_shape(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    before = {"uuid": frame["uuid"]} if frame.get("uuid") is not None else {}
    return before, {"data": None}


@action("entity", error_shape=_get_error_shape)
def get_entity(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """One document by uuid, or the controlled tokens (their actors with `actor=true`)."""
    uuid = params.get("uuid")
    if _flag(params, "selected"):
        targets = [_resolve(ctx, u) for u in _selected_targets(ctx, _flag(params, "actor"))]
        found = [r for r in targets if r is not None]
        if not found:
            raise ActionError("Entity not found")
        data = [v for v in (view(ctx.user, r) for r in found) if v is not None]
        return {"uuid": found[-1].uuid, "data": data}
    res = _resolve(ctx, uuid) if isinstance(uuid, str) and uuid else None
    if res is None:
        raise ActionError("Entity not found")
    seen = view(ctx.user, res)
    if seen is None:
        assert ctx.user is not None
        raise ActionError(f"User '{_name(ctx.user)}' does not have permission to view this entity")
    return {"uuid": uuid, "data": seen}


# POST /create ------------------------------------------------------------------------------------


def _create_error_shape(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return {}, {"message": "Failed to create entity"}


def _can_create(user: dict[str, Any] | None, entity_type: str) -> bool:
    if documents.is_gm(user):
        return True
    assert user is not None
    permission = f"{entity_type.upper()}_CREATE"
    granted = (user.get("permissions") or {}).get(permission)
    if isinstance(granted, bool):
        return granted
    return int(user.get("role", 0)) >= CREATE_PERMISSION_ROLES.get(permission, 99)


@action("create", error_shape=_create_error_shape)
def create(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a top-level document of any type (or, with `override`, replace one in place)."""
    entity_type = str(params.get("entityType", ""))
    data = params.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    if ctx.user is not None and not _can_create(ctx.user, entity_type):
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to create {entity_type} documents"
        )
    if entity_type == "Macro":
        _macro_write_checks(ctx, params, "creation")
    if entity_type not in COLLECTIONS or entity_type == "Setting":
        raise ActionError(f"Invalid entity type: {entity_type}")
    folder = params.get("folder")
    data = {**data, "folder": folder if folder not in (None, "") else None}
    wanted_id = data.get("_id")
    if isinstance(wanted_id, str) and wanted_id:
        existing = _resolve(ctx, f"{entity_type}.{wanted_id}")
        if existing is not None:
            if not _flag(params, "override"):
                raise ActionError(
                    f"Entity with ID '{wanted_id}' already exists. Set override=true to replace it."
                )
            if ctx.user is not None and resolved_level(ctx.user, existing) < OWNER:
                raise ActionError(
                    f"User '{_name(ctx.user)}' does not have permission to modify "
                    f"{entity_type} '{wanted_id}'"
                )
            rules.apply_document_update(existing.doc, data, entity_type, ctx.new_id)
            check_written(existing.kind, existing.doc)
            _touch(ctx, existing)
            documents.save(ctx.tx, existing)
            return {"uuid": existing.uuid, "entity": existing.doc}
    problem = rules.validate_new(entity_type, data)
    if problem is not None:
        raise ActionError(problem)
    keep = _flag(params, "keepId") and isinstance(wanted_id, str) and bool(wanted_id)
    doc = rules.new_document(
        entity_type,
        data,
        doc_id=str(wanted_id) if keep else ctx.new_id(),
        now_ms=ctx.now_ms(),
        user_id=ctx.user["_id"] if ctx.user is not None else None,
        new_id=ctx.new_id,
    )
    check_written(entity_type, doc)
    ctx.tx.put(entity_type, doc)
    return {"uuid": documents.doc_uuid(entity_type, doc["_id"]), "entity": doc}


# PUT /update and DELETE /delete ------------------------------------------------------------------


def _uuid_error_shape(message: str) -> Any:
    def shape(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"uuid": frame.get("uuid")}, {"message": message}

    return shape


def _targets(ctx: ActionContext, params: dict[str, Any], actors: bool) -> list[str]:
    """The `uuid` if given (it wins), else the controlled tokens (or their actors)."""
    uuid = params.get("uuid")
    if isinstance(uuid, str) and uuid:
        return [uuid]
    if _flag(params, "selected"):
        return _selected_targets(ctx, actors)
    return []


def _resolve_all(ctx: ActionContext, params: dict[str, Any], uuids: list[str]) -> list[Resolved]:
    if not uuids:
        raise ActionError(f"Entity not found: {params.get('uuid') or 'undefined'}")
    out = []
    for uuid in uuids:
        res = _resolve(ctx, uuid)
        if res is None:
            raise ActionError(f"Entity not found: {uuid}")
        out.append(res)
    return out


def _read_only(res: Resolved) -> None:
    """Refuse changing a compendium document or a world setting: settings are what /create and
    scripts already refuse (who may run scripts, which writes are allowed); the API never
    changes them (issue 20 item 9)."""
    if res.pack is not None:
        raise ActionError(f"You may not modify the locked compendium {res.pack}")
    if res.root_collection == "Setting":
        raise ActionError(SETTING_REFUSED)


@action("update", error_shape=_uuid_error_shape("Failed to update entity"))
def update(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Apply `data` to the target documents as the tabletop's update does."""
    data = params.get("data")
    if not isinstance(data, dict):
        raise ActionError("data must be an object")
    uuids = _targets(ctx, params, _flag(params, "actor"))
    targets = _resolve_all(ctx, params, uuids)
    if any(r.kind == "Macro" for r in targets):
        _macro_write_checks(ctx, params, "editing")
    for res in targets:
        assert_can_write(ctx, res, "update")
        _read_only(res)
    entities = []
    for uuid in uuids:
        fresh = _resolve(ctx, uuid)
        assert fresh is not None
        rules.apply_document_update(fresh.doc, data, fresh.kind, ctx.new_id)
        check_written(fresh.kind, fresh.doc)
        _touch(ctx, fresh)
        documents.save(ctx.tx, fresh)
    for uuid in uuids:
        again = _resolve(ctx, uuid)
        assert again is not None
        entities.append(again.doc)
    reply: dict[str, Any] = {}
    if params.get("uuid"):
        reply["uuid"] = params["uuid"]
    reply["entity"] = entities
    return reply


@action("delete", error_shape=_uuid_error_shape("Failed to delete entity"))
def delete(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete the target documents (embedded ones from their holder)."""
    uuids = _targets(ctx, params, actors=False)
    if not uuids:
        raise ActionError(f"Entity not found: {params.get('uuid') or 'undefined'}")
    if ctx.user is not None:
        found = _resolve_all(ctx, params, uuids)  # the module fails on a missing one here
    else:
        found = [r for r in (_resolve(ctx, u) for u in uuids) if r is not None]
    if any(r.kind == "Macro" for r in found):
        _macro_write_checks(ctx, params, "deletion")
    for res in found:
        assert_can_write(ctx, res, "delete")
        _read_only(res)
        if isinstance(res.doc, documents.TokenActor):
            raise ActionError(
                f"Cannot delete {res.uuid}: it is the actor of an unlinked token; "
                "delete the token instead"
            )
    for res in found:
        again = _resolve(ctx, res.uuid)
        if again is not None:
            documents.remove(ctx.tx, again)
    return {"uuid": params.get("uuid"), "success": True}


# POST /give and POST /remove ---------------------------------------------------------------------


def _give_error_shape(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    before: dict[str, Any] = {}
    if frame.get("selected") is not None:
        before["selected"] = frame["selected"]
    before["fromUuid"] = frame.get("fromUuid") or ""
    before["toUuid"] = frame.get("toUuid") or ""
    if frame.get("quantity") is not None:
        before["quantity"] = frame["quantity"]
    before["itemUuid"] = frame.get("itemUuid") or ""
    return before, {}


def _actor_target(ctx: ActionContext, uuid: Any, missing: str) -> Resolved:
    res = _resolve(ctx, uuid) if isinstance(uuid, str) else None
    if res is None:
        raise ActionError(f"{missing}: {uuid}")
    if res.kind != "Actor":
        raise ActionError(f"Target entity must be an Actor, got {res.kind}")
    return res


def _find_item_by_name(ctx: ActionContext, name: str) -> Resolved | None:
    """The best world (or compendium) Item for a name, as the module's search index ranks."""
    for entry in ranked_entries(ctx, name, {"documentType": "Item"}, 1):
        return _resolve(ctx, entry["uuid"])
    return None


@action("give", error_extra=FAILED, error_shape=_give_error_shape)
def give(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Give an item to an actor: moved from `fromUuid`'s inventory, else copied (a world or
    compendium item). One transaction: both actors change or neither does."""
    from_uuid, to_uuid = params.get("fromUuid"), params.get("toUuid")
    item_uuid, item_name = params.get("itemUuid"), params.get("itemName")
    selected = _flag(params, "selected")
    if not to_uuid and not selected:
        raise ActionError("Target UUID or selected is required")
    if not item_uuid and not item_name:
        raise ActionError("Item UUID or Item Name is required")
    given = params.get("quantity")
    amount = 1 if given is None else rules.whole_quantity(given)
    if amount is None:
        raise ActionError(rules.QUANTITY_ERROR)
    source: Resolved | None = None
    if from_uuid:
        source = _resolve(ctx, from_uuid) if isinstance(from_uuid, str) else None
        if source is None or source.kind != "Actor":
            raise ActionError(
                f"Source entity must be an Actor, got {source.kind if source else 'undefined'}"
            )
        assert_can_write(ctx, source, "give items from")
    if selected:
        first = _selected_targets(ctx, actors=True)[:1]
        to_uuid = first[0] if first else "undefined"
    target = _actor_target(ctx, to_uuid, "Target entity not found")
    assert_can_write(ctx, target, "give items to")
    wanted = item_uuid or item_name
    item: Resolved | None
    if item_uuid:
        item = _resolve(ctx, item_uuid)
    elif source is not None:
        found = documents.find_by_name(source.doc.get("items") or [], item_name)
        item = _resolve(ctx, f"{source.uuid}.Item.{found['_id']}") if found else None
    else:
        item = _find_item_by_name(ctx, str(item_name))
    if item is None:
        raise ActionError(f"Item not found: {wanted}")
    if item.kind != "Item":
        raise ActionError(f"Entity must be an Item, got {item.kind}")
    if source is not None and not (
        item.root_collection == "Actor"
        and item.root["_id"] == source.doc["_id"]
        and item.pack is None
    ):
        raise ActionError(f"Item {wanted} does not belong to source actor {from_uuid}")
    item_data = dict(item.doc)
    if source is not None and amount > rules.held(item.doc):
        raise ActionError(
            f"{source.doc.get('name') or from_uuid} has only {rules.held(item.doc)} of "
            f"{item.doc.get('name', wanted)}, not {amount}"
        )
    if source is not None:
        holder = _resolve(ctx, source.uuid)
        assert holder is not None
        rules.take_from_source(holder.doc, str(item.doc["_id"]), amount)
        documents.save(ctx.tx, holder)
    receiver = _resolve(ctx, str(to_uuid))
    assert receiver is not None
    new_item_id, quantity = rules.add_to_target(
        receiver.doc, item_data, amount, ctx.new_id(), ctx.now_ms()
    )
    if quantity > rules.MAX_QUANTITY:
        raise ActionError(
            f"{receiver.doc.get('name') or to_uuid} would hold {quantity} of "
            f"{item.doc.get('name', wanted)}: at most {rules.MAX_QUANTITY}"
        )
    documents.save(ctx.tx, receiver)
    reply: dict[str, Any] = {}
    if from_uuid:
        reply["fromUuid"] = from_uuid
    if params.get("selected") is not None:
        reply["selected"] = params["selected"]
    reply["toUuid"] = to_uuid
    reply["quantity"] = quantity
    if item_uuid:
        reply["itemUuid"] = item_uuid
    reply["newItemId"] = new_item_id
    reply["success"] = True
    return reply


@action("remove", error_extra=FAILED)
def remove(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Remove an item (or some of its quantity) from an actor."""
    actor_uuid = params.get("actorUuid")
    item_uuid, item_name = params.get("itemUuid"), params.get("itemName")
    selected = _flag(params, "selected")
    if not actor_uuid and not selected:
        raise ActionError("Target actor UUID or selected is required")
    if not item_uuid and not item_name:
        raise ActionError("Item UUID or Item Name is required")
    if selected:
        first = _selected_targets(ctx, actors=True)[:1]
        actor_uuid = first[0] if first else "undefined"
    actor = _actor_target(ctx, actor_uuid, "Target actor not found")
    assert_can_write(ctx, actor, "remove items from")
    if item_uuid:
        item = _resolve(ctx, item_uuid) if isinstance(item_uuid, str) else None
        if item is not None and (
            item.kind != "Item"
            or item.root_collection != "Actor"
            or item.root["_id"] != actor.doc["_id"]
        ):
            item = None  # not an item of this actor
    else:
        found = documents.find_by_name(actor.doc.get("items") or [], item_name)
        item = _resolve(ctx, f"{actor.uuid}.Item.{found['_id']}") if found else None
    if item is None:
        raise ActionError(f"Item not found: {item_uuid or item_name}")
    given = params.get("quantity")
    quantity = None if given is None else rules.whole_quantity(given)
    if given is not None and quantity is None:
        raise ActionError(rules.QUANTITY_ERROR)
    left = rules.remove_quantity(actor.doc, str(item.doc["_id"]), quantity)
    documents.save(ctx.tx, actor)
    return {
        "actorUuid": actor.uuid,
        "itemUuid": item.uuid,
        "quantity": left,
        "success": True,
    }


# POST /increase and POST /decrease ---------------------------------------------------------------


def _change_attribute(ctx: ActionContext, params: dict[str, Any], sign: int) -> dict[str, Any]:
    uuid = params.get("uuid")
    if not uuid and not _flag(params, "selected"):
        raise ActionError("UUID or selected is required")
    attribute = params.get("attribute")
    if not isinstance(attribute, str) or not attribute:
        raise ActionError("Attribute path is required")
    amount = params.get("amount")
    if not isinstance(amount, int | float) or isinstance(amount, bool):
        raise ActionError("Amount must be a number")
    uuids = _selected_targets(ctx, actors=True) if _flag(params, "selected") else [str(uuid)]
    targets = [r for r in (_resolve(ctx, u) for u in uuids) if r is not None]
    if not targets:
        raise ActionError("No entities found to modify")
    verb = "increase" if sign > 0 else "decrease"
    for res in targets:
        assert_can_write(ctx, res, f"{verb} attribute on")
        _read_only(res)
    results = []
    for target in targets:
        again = _resolve(ctx, target.uuid)
        assert again is not None
        res = again
        try:
            old, new = rules.change_number(res.doc, attribute, sign * amount)
        except ValueError as exc:
            raise ActionError(str(exc)) from None
        _touch(ctx, res)
        documents.save(ctx.tx, res)
        results.append({"uuid": res.uuid, "attribute": attribute, "oldValue": old, "newValue": new})
    return {"results": results, "success": True}


@action("increase", error_extra=FAILED)
def increase(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add `amount` to a numeric attribute path of each target."""
    return _change_attribute(ctx, params, 1)


@action("decrease", error_extra=FAILED)
def decrease(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Subtract `amount` from a numeric attribute path of each target."""
    return _change_attribute(ctx, params, -1)


# POST /kill --------------------------------------------------------------------------------------


def _defeat_combatants(ctx: ActionContext, *, token_id: str | None, actor_id: str | None) -> None:
    combat = documents.current_combat(ctx.tx)
    if combat is None:
        return
    changed = False
    for combatant in combat.get("combatants") or []:
        if (token_id and combatant.get("tokenId") == token_id) or (
            actor_id and combatant.get("actorId") == actor_id
        ):
            combatant["defeated"] = True
            changed = True
    if changed:
        ctx.tx.put("Combat", combat)


def _defeat_actor(
    ctx: ActionContext, actor: dict[str, Any], *, zero_hp: bool = True, toggle_status: bool
) -> None:
    """HP to 0 and the defeated status toggled, on a world actor or a token's own actor."""
    if zero_hp:
        rules.zero_hp(actor)
    status = rules.defeated_status()
    if toggle_status and status is not None:
        rules.toggle_status(actor, status, effect_id=ctx.new_id(), now_ms=ctx.now_ms())
    documents.touch_stats(actor, ctx.now_ms(), ctx.acting_user_id)
    documents.put_actor(ctx.tx, actor)


@action("kill", error_extra=FAILED)
def kill(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Bring actors to 0 HP, mark their combatants defeated and toggle the dead status."""
    uuid = params.get("uuid")
    if isinstance(uuid, str) and uuid:
        res = _resolve(ctx, uuid)
        if res is None:
            raise ActionError(f"Entity not found: {uuid}")
        targets = [res]
    elif _flag(params, "selected"):
        targets = [r for r in (_resolve(ctx, u) for u in _controlled_tokens(ctx)) if r]
    else:
        targets = []
    if not targets:
        raise ActionError("No entities found to mark as defeated")
    for res in targets:
        assert_can_write(ctx, res, "kill")
    results = []
    for res in targets:
        if res.kind == "Token":
            if res.actor is None:
                raise ActionError("Token has no associated actor")
            _defeat_combatants(ctx, token_id=str(res.doc["_id"]), actor_id=None)
            _defeat_actor(ctx, res.actor, toggle_status=True)
            message = "Token marked as defeated, HP set to 0, and dead effect applied"
        elif res.kind == "Actor" and isinstance(res.doc, documents.TokenActor):
            # an unlinked token's own actor: its token alone
            scene = documents.active_scene(ctx.tx)
            viewed = int(scene is not None and scene["_id"] == res.doc.scene_id)
            _defeat_combatants(ctx, token_id=res.doc.token_id, actor_id=None)
            _defeat_actor(ctx, res.doc, toggle_status=bool(viewed))
            message = (
                f"Actor marked as defeated, HP set to 0, and dead effect applied to {viewed} tokens"
            )
        elif res.kind == "Actor":
            scene = documents.active_scene(ctx.tx) or {}
            tokens = [t for t in scene.get("tokens") or [] if t.get("actorId") == res.doc["_id"]]
            _defeat_combatants(ctx, token_id=None, actor_id=str(res.doc["_id"]))
            base = ctx.tx.get("Actor", str(res.doc["_id"]))
            assert base is not None
            linked = [t for t in tokens if t.get("actorLink")]
            _defeat_actor(ctx, base, toggle_status=bool(linked))
            for token in tokens:  # an unlinked token's status is its own actor's
                if token.get("actorLink"):
                    continue
                own = documents.token_actor(ctx.tx, scene, token)
                if own is not None:
                    _defeat_actor(ctx, own, zero_hp=False, toggle_status=True)
            message = (
                "Actor marked as defeated, HP set to 0, and dead effect applied to "
                f"{len(tokens)} tokens"
            )
        else:
            raise ActionError(f"Cannot mark entity type {res.kind} as defeated")
        results.append({"uuid": res.uuid, "success": True, "message": message})
    return {"results": results}
