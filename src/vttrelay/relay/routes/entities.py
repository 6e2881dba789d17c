"""The entity routes (endpoints-beyond-seed §1): read, create, update and delete any document,
give and remove items, change attributes, kill. `uuid` is query-only on these routes."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, FORBIDDEN_SCRIPT_PATTERNS, QB, B, Q, forward
from vttrelay.relay.routes.model import Group, Guard, Param, Route, Sdk

NAME: Final = "Entities"

ENTITY_UUID = Param("uuid", "string", Q, description="Document uuid, e.g. `Actor.<id>`.")
ENTITY_SELECTED = Param(
    "selected", "boolean", QB, description="Target the GM's controlled tokens instead of uuid."
)
ENTITY_ACTOR = Param(
    "actor", "boolean", Q, description="With selected: the tokens' actors instead of the tokens."
)
ATTRIBUTE_PARAMS = (
    Param(
        "attribute",
        "string",
        B,
        required=True,
        description="Path from the document root, e.g. `system.attributes.hp.value`.",
    ),
    Param("amount", "number", B, required=True, description="Amount (may be fractional)."),
    ENTITY_UUID,
    Param("selected", "boolean", QB, description="The actors of the controlled tokens."),
)

# A Macro's command is a script: creating one needs macro:write and passes the script check.
MACRO_CREATE = Guard(
    "entityType",
    "Macro",
    scope="macro:write",
    scope_error="macro:write scope is required to create macros",
    script="data.command",
)


def _entity(
    method: str,
    path: str,
    action: str,
    summary: str,
    scope: str,
    *params: Param,
    sdk: Sdk,
    guards: tuple[Guard, ...] = (),
) -> Route:
    return forward(
        method,
        path,
        action,
        summary,
        NAME,
        *params,
        scope=scope,
        guards=guards,
        forbidden_patterns=FORBIDDEN_SCRIPT_PATTERNS if guards else (),
        sdk=sdk,
    )


ROUTES: Final = (
    _entity(
        "GET",
        "/get",
        "entity",
        "Read any document by uuid, or the controlled tokens.",
        "entity:read",
        ENTITY_UUID,
        ENTITY_SELECTED,
        ENTITY_ACTOR,
        sdk=Sdk("get", "EntityReply"),
    ),
    _entity(
        "POST",
        "/create",
        "create",
        "Create a document of any type (Actor, Item, JournalEntry, Macro, RollTable, ...).",
        "entity:write",
        Param("entityType", "string", B, required=True, description="Document type, e.g. Actor."),
        Param("data", "object", B, required=True, description="The new document's data."),
        Param(
            "folder",
            None,
            B,
            description="Folder id written into the document's folder.",
            sdk_type="str",
        ),
        Param("keepId", "boolean", BQ, description="Keep data._id."),
        Param("override", "boolean", BQ, description="Replace the document with data._id."),
        guards=(MACRO_CREATE,),
        sdk=Sdk("create", "EntityCreated"),
    ),
    _entity(
        "PUT",
        "/update",
        "update",
        "Update documents: nested and dotted keys merge, embedded arrays upsert by _id.",
        "entity:write",
        Param("data", "object", B, required=True, description="The change set."),
        ENTITY_UUID,
        ENTITY_SELECTED,
        ENTITY_ACTOR,
        sdk=Sdk("update", "EntityUpdated"),
    ),
    _entity(
        "DELETE",
        "/delete",
        "delete",
        "Delete a document (embedded ones from their holder).",
        "entity:write",
        ENTITY_UUID,
        ENTITY_SELECTED,
        sdk=Sdk("delete", "Done"),
    ),
    _entity(
        "POST",
        "/give",
        "give",
        "Give an item to an actor: moved from fromUuid, or copied from a world or pack item.",
        "entity:write",
        Param(
            "fromUuid", None, B, description="Source actor uuid (moves the item).", sdk_type="str"
        ),
        Param("toUuid", None, B, description="Target actor uuid.", sdk_type="str"),
        Param("selected", "boolean", QB, description="Target the first controlled token's actor."),
        Param("itemUuid", None, B, description="Uuid of the item to give.", sdk_type="str"),
        Param("itemName", None, B, description="Name of the item to give.", sdk_type="str"),
        Param("quantity", "integer", B, description="How many (default 1)."),
        sdk=Sdk("give", "ItemGiven"),
    ),
    _entity(
        "POST",
        "/remove",
        "remove",
        "Remove an item, or some of its quantity, from an actor.",
        "entity:write",
        Param("actorUuid", None, B, description="Actor uuid.", sdk_type="str"),
        Param("selected", "boolean", QB, description="The first controlled token's actor."),
        Param("itemUuid", None, B, description="Uuid of the item.", sdk_type="str"),
        Param(
            "itemName", None, B, description="Name of the item (case-insensitive).", sdk_type="str"
        ),
        Param("quantity", "integer", B, description="How many to remove (default: the item)."),
        sdk=Sdk("remove", "ItemRemoved"),
    ),
    _entity(
        "POST",
        "/increase",
        "increase",
        "Add to a numeric attribute of documents.",
        "entity:write",
        *ATTRIBUTE_PARAMS,
        sdk=Sdk("increase", "AttributeChanged"),
    ),
    _entity(
        "POST",
        "/decrease",
        "decrease",
        "Subtract from a numeric attribute of documents.",
        "entity:write",
        *ATTRIBUTE_PARAMS,
        sdk=Sdk("decrease", "AttributeChanged"),
    ),
    _entity(
        "POST",
        "/kill",
        "kill",
        "Bring actors or tokens to 0 HP, mark them defeated and dead.",
        "entity:write",
        ENTITY_UUID,
        ENTITY_SELECTED,
        sdk=Sdk("kill", "KillReply"),
    ),
)

GROUP: Final = Group(NAME, "entities", ROUTES)
