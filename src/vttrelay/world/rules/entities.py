"""Pure rules of the entity routes (endpoints-beyond-seed §1): how the tabletop applies an update
object, what a new document holds, numeric attribute changes, moving items between actors, and
what "kill" does to an actor. No I/O: the actions in `world/actions/entities.py` call these.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from vttrelay.world.model import defaults, documents
from vttrelay.world.rules.effects import (
    STATUS_BY_ID,
    StatusEffect,
    new_status_effect,
    with_status,
)
from vttrelay.world.rules.paths import get_path, set_path

# Update objects ----------------------------------------------------------------------------------


def apply_document_update(
    doc: dict[str, Any], update: dict[str, Any], document_name: str, new_id: Any
) -> None:
    """Apply an update object the way the tabletop's `Document#update` does: dotted keys address
    single fields, nested objects merge into the existing data, `-=key` deletes a key, other
    arrays replace, and embedded collections (`items`, `effects`, `pages`, ...) upsert by `_id`
    (an entry with an unknown or no `_id` is created, with the tabletop's defaults where
    `world/model/defaults.py` has them and `new_id()` when it has no `_id`).
    `_id` itself never changes."""
    update = {k: v for k, v in update.items() if k != "_id"}
    embedded = documents.EMBEDDED.get(document_name, {})
    for child_name, key in embedded.items():
        entries = update.pop(key, None)
        if not isinstance(entries, list):
            continue
        current = doc.setdefault(key, [])
        by_id = {c.get("_id"): c for c in current if isinstance(c, dict)}
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            existing = by_id.get(entry.get("_id"))
            if existing is not None:
                apply_document_update(existing, entry, child_name, new_id)
            else:
                created = defaults.with_defaults(child_name, copy.deepcopy(entry), new_id)
                current.append(created)
                by_id[created["_id"]] = created
    defaults.merge(doc, update)


# New documents -----------------------------------------------------------------------------------

# The system types the embedded world's data model accepts, where the type matters.
VALID_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "Actor": ("character", "npc", "vehicle", "group", "encounter", "base"),
    "Item": (
        "weapon",
        "equipment",
        "consumable",
        "tool",
        "loot",
        "container",
        "background",
        "class",
        "subclass",
        "race",
        "spell",
        "feat",
        "facility",
        "base",
    ),
}
# Types whose documents must have a name.
NAMED: Final = frozenset(
    ("Actor", "Item", "JournalEntry", "Macro", "RollTable", "Folder", "Cards", "User", "Scene",
     "Playlist")
)  # fmt: skip


def validate_new(document_name: str, data: dict[str, Any]) -> str | None:
    """The data-model error for creating this document, or None (the tabletop's texts)."""
    if document_name in NAMED and not (isinstance(data.get("name"), str) and data["name"]):
        return f"{document_name} validation errors:\n  name: may not be undefined"
    valid = VALID_TYPES.get(document_name)
    if valid is not None:
        kind = data.get("type")
        if kind is None:
            return f"{document_name} validation errors:\n  type: may not be undefined"
        if kind not in valid:
            return f'"{kind}" is not a valid type for the {document_name} Document class'
    return None


def new_document(
    document_name: str,
    data: dict[str, Any],
    *,
    doc_id: str,
    now_ms: int,
    user_id: str | None,
    new_id: Any,
) -> dict[str, Any]:
    """A new top-level document from create data: the caller's data over the type's defaults
    (`content/document-defaults.json` through `world/model/defaults.py`, also for the embedded
    entries), embedded entries given ids, the creating user as owner, fresh `_stats`."""
    doc = defaults.with_defaults(document_name, {"_id": doc_id}, new_id)
    if document_name == "Actor":  # the prototype token is named after the actor
        doc["prototypeToken"]["name"] = data.get("name", "")
    doc["ownership"] = {"default": 0}
    if user_id is not None:
        doc["ownership"][user_id] = 3
    given = {k: v for k, v in data.items() if k != "_id"}
    apply_document_update(doc, given, document_name, new_id)
    for child_name, key in documents.EMBEDDED.get(document_name, {}).items():
        children = [c for c in doc.get(key) or () if isinstance(c, dict)]
        if defaults.has_defaults(child_name):
            children = [defaults.with_defaults(child_name, c, new_id) for c in children]
        for child in children:
            child.setdefault("_stats", documents.new_stats(now_ms, user_id))
        if key in doc:
            doc[key] = children
    doc["_stats"] = documents.new_stats(now_ms, user_id)
    return doc


# Numeric attributes ------------------------------------------------------------------------------


def js_typeof(value: Any, present: bool = True) -> str:
    """JavaScript's `typeof` of a JSON value (`undefined` when the path is missing)."""
    if not present:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


_ABSENT: Final = object()


MAX_SAFE_INTEGER: Final = 2**53 - 1  # the largest integer a JavaScript number holds exactly


def change_number(doc: dict[str, Any], attribute: str, delta: float) -> tuple[Any, Any]:
    """Add `delta` to the number at `attribute`; (old, new), or ValueError naming what was found
    there when it is not a number, or when the result would leave +-MAX_SAFE_INTEGER."""
    value = get_path(doc, attribute, _ABSENT)
    if isinstance(value, bool) or not isinstance(value, int | float):
        found = js_typeof(value, value is not _ABSENT)
        raise ValueError(f"Attribute {attribute} is not a number, found: {found}")
    new = value + delta
    if not abs(new) <= MAX_SAFE_INTEGER:
        raise ValueError(
            f"Attribute {attribute} would become {new}: numbers stay between "
            f"-{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}"
        )
    if isinstance(new, float) and new.is_integer() and abs(new) < 2**53:
        new = int(new)
    set_path(doc, attribute, new)
    return value, new


# Kill --------------------------------------------------------------------------------------------

HP_PATHS: Final = (
    "system.attributes.hp",
    "system.health",
    "system.hp",
    "data.attributes.hp",
)
# The first of these in the system's status list is what /kill toggles (dnd5e: `dead`).
DEFEATED_STATUSES: Final = ("dead", "unconscious", "defeated")


def zero_hp(actor: dict[str, Any]) -> bool:
    """Set `.value` of the first HP object the actor has to 0; False if it has none."""
    for path in HP_PATHS:
        if isinstance(get_path(actor, path), dict):
            set_path(actor, f"{path}.value", 0)
            return True
    return False


def defeated_status() -> StatusEffect | None:
    """The first of `DEFEATED_STATUSES` the system has, as the module picks it."""
    return next((STATUS_BY_ID[s] for s in DEFEATED_STATUSES if s in STATUS_BY_ID), None)


def toggle_status(
    actor: dict[str, Any], status: StatusEffect, *, effect_id: str, now_ms: int
) -> bool:
    """Toggle a status effect on the actor as the tabletop's status toggle does: remove the
    effects that carry it if any, else add one. True if it is on afterwards."""
    effects = actor.setdefault("effects", [])
    if with_status(effects, status.id) is not None:
        actor["effects"] = [e for e in effects if status.id not in (e.get("statuses") or ())]
        return False
    effects.append(new_status_effect(effect_id, status, now_ms))
    return True


# Items between actors ----------------------------------------------------------------------------


MAX_QUANTITY: Final = 1_000_000  # of one item an actor holds, gives or removes at once
QUANTITY_ERROR: Final = f"Quantity must be a whole number from 1 to {MAX_QUANTITY}"


def whole_quantity(value: Any) -> int | None:
    """A /give or /remove quantity as an int from 1 to MAX_QUANTITY (2.0 is 2), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 1 <= value <= MAX_QUANTITY else None


def _quantity(item: dict[str, Any]) -> Any:
    return get_path(item, "system.quantity", _ABSENT)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def held(item: dict[str, Any]) -> float:
    """How many of an item an actor holds: its numeric quantity, else 1."""
    quantity = _quantity(item)
    return quantity if _is_number(quantity) else 1


def take_from_source(actor: dict[str, Any], item_id: str, amount: float) -> None:
    """What giving does to the source: its quantity drops by `amount` when it holds more, else
    the item leaves the actor. The caller refuses an amount above `held` (the module would
    delete the source item and still give the whole amount, making items from nothing)."""
    item = documents.find_item(actor, item_id)
    if item is None:
        return
    quantity = _quantity(item)
    if _is_number(quantity) and quantity > amount:
        set_path(item, "system.quantity", quantity - amount)
    else:
        actor["items"] = [i for i in actor.get("items") or [] if i is not item]


def add_to_target(
    actor: dict[str, Any], item_data: dict[str, Any], amount: float, new_id: str, now_ms: int
) -> tuple[str, Any]:
    """What giving does to the target: an item of exactly the same name with a quantity grows
    by `amount`; otherwise a copy is added with `system.quantity` = `amount`.
    (item id, final quantity)."""
    for item in actor.get("items") or []:
        if item.get("name") == item_data.get("name") and _quantity(item) is not _ABSENT:
            old = _quantity(item)
            new = (old if _is_number(old) else 0) + amount
            set_path(item, "system.quantity", new)
            return str(item["_id"]), new
    item = copy.deepcopy(item_data)
    item["_id"] = new_id
    item.setdefault("system", {})
    if not isinstance(item["system"], dict):
        item["system"] = {}
    item["system"]["quantity"] = amount
    item.setdefault("effects", [])
    stats = item.get("_stats")
    stats = stats if isinstance(stats, dict) else {}
    item["_stats"] = {
        **documents.new_stats(now_ms),
        "compendiumSource": stats.get("compendiumSource"),
    }
    actor.setdefault("items", []).append(item)
    return new_id, amount


def remove_quantity(actor: dict[str, Any], item_id: str, quantity: int | None) -> Any:
    """/remove: drop `quantity` (a `whole_quantity`; None: all) when the item holds more, else
    delete it. The quantity left (0 when deleted)."""
    item = documents.find_item(actor, item_id)
    if item is None:
        return 0
    held = _quantity(item)
    if quantity and _is_number(held) and held > quantity:
        set_path(item, "system.quantity", held - quantity)
        return held - quantity
    actor["items"] = [i for i in actor.get("items") or [] if i is not item]
    return 0
