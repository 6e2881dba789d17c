"""Entity actions (endpoints-beyond-seed §1): entity (GET /get), create, update, delete,
increase, decrease, kill (give and remove: `transfers.py`). Any document type the world holds,
by `uuid` or by the GM's controlled tokens (`selected`: `targets.py`).

Each call is one store transaction: a failed call changes nothing, also where the module would
leave earlier targets changed (/increase on several targets, /kill). Targets are resolved again
right before each change, so two targets inside one top-level document (two tokens of a scene,
giving an item to its own holder) see each other's changes.

Decisions where the reference is a quirk (endpoints-beyond-seed §1.4): a `uuid` that
resolves to nothing is `Entity not found: <uuid>` for /update (the module fails with a script
TypeError), and for /delete with a `userId` (without one, the module answers success and so do
we).
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.actions.canvas import check_written
from vttrelay.world.actions.targets import (
    controlled_tokens,
    flag,
    resolve,
    selected_targets,
)
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
    if flag(params, "selected"):
        targets = [resolve(ctx, u) for u in selected_targets(ctx, flag(params, "actor"))]
        found = [r for r in targets if r is not None]
        if not found:
            raise ActionError("Entity not found")
        data = [v for v in (view(ctx.user, r) for r in found) if v is not None]
        return {"uuid": found[-1].uuid, "data": data}
    res = resolve(ctx, uuid) if isinstance(uuid, str) and uuid else None
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
        existing = resolve(ctx, f"{entity_type}.{wanted_id}")
        if existing is not None:
            if not flag(params, "override"):
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
    keep = flag(params, "keepId") and isinstance(wanted_id, str) and bool(wanted_id)
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
    if flag(params, "selected"):
        return selected_targets(ctx, actors)
    return []


def _resolve_all(ctx: ActionContext, params: dict[str, Any], uuids: list[str]) -> list[Resolved]:
    if not uuids:
        raise ActionError(f"Entity not found: {params.get('uuid') or 'undefined'}")
    out = []
    for uuid in uuids:
        res = resolve(ctx, uuid)
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
    uuids = _targets(ctx, params, flag(params, "actor"))
    targets = _resolve_all(ctx, params, uuids)
    if any(r.kind == "Macro" for r in targets):
        _macro_write_checks(ctx, params, "editing")
    for res in targets:
        assert_can_write(ctx, res, "update")
        _read_only(res)
    entities = []
    for uuid in uuids:
        fresh = resolve(ctx, uuid)
        assert fresh is not None
        rules.apply_document_update(fresh.doc, data, fresh.kind, ctx.new_id)
        check_written(fresh.kind, fresh.doc)
        _touch(ctx, fresh)
        documents.save(ctx.tx, fresh)
    for uuid in uuids:
        again = resolve(ctx, uuid)
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
        found = [r for r in (resolve(ctx, u) for u in uuids) if r is not None]
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
        again = resolve(ctx, res.uuid)
        if again is not None:
            documents.remove(ctx.tx, again)
    return {"uuid": params.get("uuid"), "success": True}


# POST /increase and POST /decrease ---------------------------------------------------------------


def _change_attribute(ctx: ActionContext, params: dict[str, Any], sign: int) -> dict[str, Any]:
    uuid = params.get("uuid")
    if not uuid and not flag(params, "selected"):
        raise ActionError("UUID or selected is required")
    attribute = params.get("attribute")
    if not isinstance(attribute, str) or not attribute:
        raise ActionError("Attribute path is required")
    amount = params.get("amount")
    if not isinstance(amount, int | float) or isinstance(amount, bool):
        raise ActionError("Amount must be a number")
    uuids = selected_targets(ctx, actors=True) if flag(params, "selected") else [str(uuid)]
    targets = [r for r in (resolve(ctx, u) for u in uuids) if r is not None]
    if not targets:
        raise ActionError("No entities found to modify")
    verb = "increase" if sign > 0 else "decrease"
    for res in targets:
        assert_can_write(ctx, res, f"{verb} attribute on")
        _read_only(res)
    results = []
    for target in targets:
        again = resolve(ctx, target.uuid)
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
        res = resolve(ctx, uuid)
        if res is None:
            raise ActionError(f"Entity not found: {uuid}")
        targets = [res]
    elif flag(params, "selected"):
        targets = [r for r in (resolve(ctx, u) for u in controlled_tokens(ctx)) if r]
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
