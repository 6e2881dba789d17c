"""Moving items between actors (endpoints-beyond-seed §1): give (POST /give) and remove
(POST /remove), in one store transaction each.

Decisions where the reference is a quirk (endpoints-beyond-seed §1.5, §1.7): /remove refuses an
`itemUuid` of another actor (`Item not found`), where the module would delete that other actor's
item; /give from an actor refuses to move more than the actor holds (`<actor> has only <n> of
<item>, not <amount>`), where the module deletes the source item and still gives the whole
amount, so that items are conserved.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.actions.search import ranked_entries
from vttrelay.world.actions.targets import flag, resolve, selected_targets
from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.model.documents import Resolved
from vttrelay.world.rules import entities as rules
from vttrelay.world.rules.permissions import assert_can_write
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}


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
    res = resolve(ctx, uuid) if isinstance(uuid, str) else None
    if res is None:
        raise ActionError(f"{missing}: {uuid}")
    if res.kind != "Actor":
        raise ActionError(f"Target entity must be an Actor, got {res.kind}")
    return res


def _find_item_by_name(ctx: ActionContext, name: str) -> Resolved | None:
    """The best world (or compendium) Item for a name, as the module's search index ranks."""
    for entry in ranked_entries(ctx, name, {"documentType": "Item"}, 1):
        return resolve(ctx, entry["uuid"])
    return None


@action("give", error_extra=FAILED, error_shape=_give_error_shape)
def give(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Give an item to an actor: moved from `fromUuid`'s inventory, else copied (a world or
    compendium item). One transaction: both actors change or neither does."""
    from_uuid, to_uuid = params.get("fromUuid"), params.get("toUuid")
    item_uuid, item_name = params.get("itemUuid"), params.get("itemName")
    selected = flag(params, "selected")
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
        source = resolve(ctx, from_uuid) if isinstance(from_uuid, str) else None
        if source is None or source.kind != "Actor":
            raise ActionError(
                f"Source entity must be an Actor, got {source.kind if source else 'undefined'}"
            )
        assert_can_write(ctx, source, "give items from")
    if selected:
        first = selected_targets(ctx, actors=True)[:1]
        to_uuid = first[0] if first else "undefined"
    target = _actor_target(ctx, to_uuid, "Target entity not found")
    assert_can_write(ctx, target, "give items to")
    wanted = item_uuid or item_name
    item: Resolved | None
    if item_uuid:
        item = resolve(ctx, item_uuid)
    elif source is not None:
        found = documents.find_by_name(source.doc.get("items") or [], item_name)
        item = resolve(ctx, f"{source.uuid}.Item.{found['_id']}") if found else None
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
        holder = resolve(ctx, source.uuid)
        assert holder is not None
        rules.take_from_source(holder.doc, str(item.doc["_id"]), amount)
        documents.save(ctx.tx, holder)
    receiver = resolve(ctx, str(to_uuid))
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
    selected = flag(params, "selected")
    if not actor_uuid and not selected:
        raise ActionError("Target actor UUID or selected is required")
    if not item_uuid and not item_name:
        raise ActionError("Item UUID or Item Name is required")
    if selected:
        first = selected_targets(ctx, actors=True)[:1]
        actor_uuid = first[0] if first else "undefined"
    actor = _actor_target(ctx, actor_uuid, "Target actor not found")
    assert_can_write(ctx, actor, "remove items from")
    if item_uuid:
        item = resolve(ctx, item_uuid) if isinstance(item_uuid, str) else None
        if item is not None and (
            item.kind != "Item"
            or item.root_collection != "Actor"
            or item.root["_id"] != actor.doc["_id"]
        ):
            item = None  # not an item of this actor
    else:
        found = documents.find_by_name(actor.doc.get("items") or [], item_name)
        item = resolve(ctx, f"{actor.uuid}.Item.{found['_id']}") if found else None
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
