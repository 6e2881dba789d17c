"""The entity routes (endpoints-beyond-seed §1) through a real relay and the embedded world over
a WebSocket: reply keys in order, each error text, the userId gates, and that a failed call
leaves the world as it was."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import api_for

from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.model import documents

ELARA = "Actor.elaraWizard00001"  # Aria owns her, Ben has LIMITED
BRANN = "Actor.brannFighter0001"  # Aria owns him
GOBLIN = "Actor.goblinNpc0000001"  # GM only
RATIONS = f"{ELARA}.Item.z9DoeELCT6mb2zVi"  # quantity 5
DAGGER = f"{ELARA}.Item.o7Hk4IMxG5vKZS34"
SCENE = "Scene.sceneTavern00001"
TOK_ELARA = f"{SCENE}.Token.tokElara00000001"
TOK_GOBLIN = f"{SCENE}.Token.tokGoblin0000001"


def stored(world: EmbeddedWorld, uuid: str) -> dict[str, Any] | None:
    with world.world.store.transaction() as tx:
        res = documents.resolve_uuid(tx, uuid)
        return res.doc if res else None


def snapshot(world: EmbeddedWorld) -> dict[str, list[dict[str, Any]]]:
    from vttrelay.world.model.collections import COLLECTIONS

    with world.world.store.transaction() as tx:
        return {c: tx.all(c) for c in COLLECTIONS}


async def test_get(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/get", uuid=ELARA)
    assert status == 200 and list(body) == ["type", "requestId", "uuid", "data"]
    assert body["type"] == "entity-result" and body["requestId"].startswith("entity_")
    assert body["uuid"] == ELARA and body["data"]["name"] == "Elara Quill"
    assert body["data"] == stored(world, ELARA)
    _, body = await api("GET", "/get", uuid=RATIONS)
    assert body["data"]["name"] == "Rations" and body["data"]["system"]["quantity"] == 5
    _, body = await api("GET", "/get", uuid=TOK_GOBLIN)
    assert body["data"]["name"] == "Goblin" and body["data"]["actorId"] == "goblinNpc0000001"

    status, body = await api("GET", "/get", uuid="Actor.nope")
    assert status == 400 and list(body) == ["type", "requestId", "uuid", "error", "data"]
    assert (body["uuid"], body["error"], body["data"]) == ("Actor.nope", "Entity not found", None)
    status, body = await api("GET", "/get")
    assert status == 400 and list(body) == ["type", "requestId", "error", "data"]
    assert body["error"] == "Entity not found"
    status, body = await api("GET", "/get", selected=True)  # nothing controlled
    assert status == 400 and body["error"] == "Entity not found"

    # userId: OWNER and OBSERVER see everything, LIMITED four keys, NONE an error
    _, body = await api("GET", "/get", uuid=ELARA, userId="Aria")
    assert body["data"]["system"] == stored(world, ELARA)["system"]  # type: ignore[index]
    _, body = await api("GET", "/get", uuid=RATIONS, userId="Ben")
    img = stored(world, RATIONS)["img"]  # type: ignore[index]
    assert body["data"] == {"uuid": RATIONS, "name": "Rations", "type": "Item", "img": img}
    status, body = await api("GET", "/get", uuid=GOBLIN, userId="Ben")
    assert status == 400 and list(body) == ["type", "requestId", "uuid", "error", "data"]
    assert body["error"] == "User 'Ben' does not have permission to view this entity"
    status, body = await api("GET", "/get", uuid=GOBLIN, userId="nobody-xyz")
    assert status == 400 and body["error"] == "User not found: nobody-xyz"

    # selected: the controlled tokens (or their actors), filtered silently per user
    status, body = await api("POST", "/select", {"uuids": [TOK_ELARA, TOK_GOBLIN]})
    assert status == 200, body
    _, body = await api("GET", "/get", selected=True)
    assert body["uuid"] == TOK_GOBLIN and [t["name"] for t in body["data"]] == [
        "Elara Quill",
        "Goblin",
    ]
    _, body = await api("GET", "/get", selected=True, actor=True)
    # the unlinked goblin token's actor is its own synthetic actor
    assert body["uuid"] == f"{TOK_GOBLIN}.Actor.goblinNpc0000001"
    assert [a["_id"] for a in body["data"]] == [
        "elaraWizard00001",
        "goblinNpc0000001",
    ]
    _, body = await api("GET", "/get", selected=True, actor=True, userId="Ben")
    img = stored(world, ELARA)["img"]  # type: ignore[index]
    assert body["data"] == [{"uuid": ELARA, "name": "Elara Quill", "type": "Actor", "img": img}]


async def test_create(relay: Any, world: EmbeddedWorld, api: Any) -> None:
    status, body = await api(
        "POST", "/create", {"entityType": "Actor", "data": {"name": "Hook", "type": "base"}}
    )
    assert status == 200 and list(body) == ["type", "requestId", "uuid", "entity"]
    assert body["type"] == "create-result" and body["uuid"] == f"Actor.{body['entity']['_id']}"
    assert stored(world, body["uuid"]) == body["entity"]
    assert body["entity"]["folder"] is None and body["entity"]["items"] == []

    for kind, data in (
        ("Item", {"name": "Lantern", "type": "loot", "system": {"quantity": 2}}),
        ("JournalEntry", {"name": "Notes", "pages": [{"name": "Day 1", "type": "text"}]}),
        ("RollTable", {"name": "Loot", "results": [{"text": "gold"}]}),
        ("Playlist", {"name": "Tavern"}),
        ("Folder", {"name": "NPCs", "type": "Actor"}),
        ("Cards", {"name": "Deck"}),
        ("Scene", {"name": "Cave"}),
    ):
        status, body = await api(
            "POST", "/create", {"entityType": kind, "data": data, "folder": "fold0000000001"}
        )
        assert status == 200, (kind, body)
        assert body["uuid"].startswith(f"{kind}.") and body["entity"]["folder"] == "fold0000000001"
        assert stored(world, body["uuid"]) == body["entity"]
    _, found = await api("GET", "/search", query="Notes", filter="JournalEntry")
    journal = found["results"][0]["uuid"]
    entry = stored(world, journal)
    assert entry is not None and entry["pages"][0]["_id"]  # embedded entries get ids
    assert stored(world, f"{journal}.JournalEntryPage.{entry['pages'][0]['_id']}")

    # keepId / an existing id / override
    data = {"_id": "keptActor0000001", "name": "Kept", "type": "npc"}
    _, body = await api("POST", "/create", {"entityType": "Actor", "data": data, "keepId": True})
    assert body["uuid"] == "Actor.keptActor0000001"
    status, body = await api("POST", "/create", {"entityType": "Actor", "data": data})
    assert status == 400 and list(body) == ["type", "requestId", "error", "message"]
    assert body["error"] == (
        "Entity with ID 'keptActor0000001' already exists. Set override=true to replace it."
    )
    assert body["message"] == "Failed to create entity"
    status, body = await api(
        "POST",
        "/create",
        {"entityType": "Actor", "data": {**data, "name": "Replaced"}, "override": True},
    )
    assert status == 200 and body["entity"]["name"] == "Replaced"
    assert stored(world, "Actor.keptActor0000001")["name"] == "Replaced"  # type: ignore[index]

    before = snapshot(world)
    for payload, error in (
        ({"entityType": "Spaceship", "data": {"name": "x"}}, "Invalid entity type: Spaceship"),
        (
            {"entityType": "Actor", "data": {"type": "npc"}},
            "Actor validation errors:\n  name: may not be undefined",
        ),
        (
            {"entityType": "Item", "data": {"name": "x", "type": "pony"}},
            '"pony" is not a valid type for the Item Document class',
        ),
        (
            {"entityType": "Actor", "data": {"name": "x", "type": "npc"}, "userId": "Aria"},
            "User 'Aria' does not have permission to create Actor documents",
        ),
    ):
        status, body = await api("POST", "/create", payload)
        assert status == 400 and body["error"] == error, body
    status, body = await api("POST", "/create", {"data": {"name": "x"}})
    assert (status, body) == (400, {"error": "'entityType' is required"})
    status, body = await api("POST", "/create", {"entityType": "Actor", "data": [1]})
    assert (status, body) == (400, {"error": "'data' must be an object"})

    # Macros: off by default in the module's settings, then the key's macro:write scope
    macro = {"entityType": "Macro", "data": {"name": "Hi", "type": "chat", "command": "Hi"}}
    status, body = await api("POST", "/create", macro)
    assert status == 400 and list(body) == ["type", "requestId", "error"]
    assert body["error"].startswith("Macro creation is disabled in REST API module settings.")
    assert snapshot(world) == before  # nothing half-written by any failed call
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_WRITE, True)
    status, body = await api("POST", "/create", macro)
    assert status == 200 and body["uuid"].startswith("Macro.")
    # the relay's own checks of a Macro create: the key's scope, then the script
    without_scope = api_for(relay, ("entity:write", "search"))
    status, body = await without_scope("POST", "/create", macro)
    assert (status, body) == (400, {"error": "macro:write scope is required to create macros"})
    sneaky = {"entityType": "Macro", "data": {"name": "x", "type": "script", "command": "eval(1)"}}
    status, body = await api("POST", "/create", sneaky)
    assert (status, body) == (400, {"error": "Script contains forbidden patterns"})
    status, body = await without_scope("POST", "/create", {**macro, "entityType": "Item"})
    assert body["error"] == '"chat" is not a valid type for the Item Document class'  # the world


async def test_update(world: EmbeddedWorld, api: Any) -> None:
    before_items = stored(world, ELARA)["items"]  # type: ignore[index]
    data = {
        "name": "Elara the Wise",
        "system.attributes.hp.value": 7,
        "system": {"currency": {"gp": 99}},
        "flags": {"x": {"y": [1, 2]}},
        "items": [
            {"_id": "z9DoeELCT6mb2zVi", "system": {"quantity": 9}},
            {"name": "Chalk", "type": "loot"},
        ],
    }
    status, body = await api("PUT", "/update", {"data": data}, uuid=ELARA)
    assert status == 200 and list(body) == ["type", "requestId", "uuid", "entity"]
    actor = body["entity"][0]
    assert stored(world, ELARA) == actor
    assert actor["name"] == "Elara the Wise" and actor["system"]["attributes"]["hp"]["value"] == 7
    assert actor["system"]["attributes"]["hp"]["max"] == 20  # merged, not replaced
    assert actor["system"]["currency"]["gp"] == 99 and actor["system"]["currency"]["sp"] >= 0
    assert actor["flags"]["x"] == {"y": [1, 2]}
    items = {i["name"]: i for i in actor["items"]}
    assert items["Rations"]["system"]["quantity"] == 9 and items["Rations"]["name"] == "Rations"
    assert items["Chalk"]["_id"] and items["Chalk"]["type"] == "loot"
    assert len(actor["items"]) == len(before_items) + 1
    status, body = await api("PUT", "/update", {"data": {"name": "Sharp"}}, uuid=DAGGER)
    assert status == 200 and body["entity"][0]["name"] == "Sharp"

    # two tokens of one scene, both changed (each target sees the other's change)
    await api("POST", "/select", {"uuids": [TOK_ELARA, TOK_GOBLIN], "overwrite": True})
    status, body = await api("PUT", "/update", {"data": {"hidden": True}, "selected": True})
    assert status == 200 and list(body) == ["type", "requestId", "entity"]
    assert all(stored(world, t)["hidden"] for t in (TOK_ELARA, TOK_GOBLIN))  # type: ignore[index]
    _, body = await api(
        "PUT", "/update", {"data": {"system.attributes.hp.value": 1}}, selected=True, actor=True
    )
    assert [e["_id"] for e in body["entity"]] == ["elaraWizard00001", "goblinNpc0000001"]

    before = snapshot(world)
    status, body = await api("PUT", "/update", {"data": {"name": "x"}}, uuid="Actor.nope")
    assert status == 400 and list(body) == ["type", "requestId", "uuid", "error", "message"]
    assert (
        body["error"] == "Entity not found: Actor.nope"
        and body["message"] == "Failed to update entity"
    )
    status, body = await api("PUT", "/update", {"data": {"name": "x"}})
    assert status == 400 and body["error"] == "Entity not found: undefined"
    status, body = await api("PUT", "/update", {"data": {"name": "x"}, "userId": "Ben"}, uuid=ELARA)
    assert (
        status == 400
        and body["error"] == "User 'Ben' does not have permission to update 'Elara the Wise'"
    )
    status, body = await api("PUT", "/update", {}, uuid=ELARA)
    assert (status, body) == (400, {"error": "'data' is required"})
    assert snapshot(world) == before
    status, body = await api(
        "PUT", "/update", {"data": {"name": "Mine"}, "userId": "Aria"}, uuid=ELARA
    )
    assert status == 200 and body["entity"][0]["name"] == "Mine"


async def test_delete(world: EmbeddedWorld, api: Any) -> None:
    before = snapshot(world)
    status, body = await api("DELETE", "/delete", uuid=DAGGER, userId="Ben")
    assert status == 400 and list(body) == ["type", "requestId", "uuid", "error", "message"]
    assert body["error"] == "User 'Ben' does not have permission to delete 'Dagger'"
    assert body["message"] == "Failed to delete entity"
    status, body = await api("DELETE", "/delete", uuid="Actor.nope", userId="Aria")
    assert status == 400 and body["error"] == "Entity not found: Actor.nope"
    status, body = await api("DELETE", "/delete")
    assert status == 400 and body["error"] == "Entity not found: undefined"
    assert snapshot(world) == before

    status, body = await api("DELETE", "/delete", uuid=DAGGER, userId="Aria")
    assert status == 200 and body == {
        "type": "delete-result",
        "requestId": body["requestId"],
        "uuid": DAGGER,
        "success": True,
    }
    assert stored(world, DAGGER) is None and stored(world, ELARA) is not None
    status, body = await api("DELETE", "/delete", uuid=GOBLIN)
    assert status == 200 and stored(world, GOBLIN) is None
    status, body = await api("DELETE", "/delete", uuid=GOBLIN)  # gone already: as the module
    assert status == 200 and body["success"] is True
    await api("POST", "/select", {"uuids": [TOK_ELARA], "overwrite": True})
    status, body = await api("DELETE", "/delete", selected=True)
    assert status == 200 and stored(world, TOK_ELARA) is None and stored(world, ELARA)


def quantity(world: EmbeddedWorld, actor: str, name: str) -> Any:
    doc = stored(world, actor)
    assert doc is not None
    found = [i for i in doc["items"] if i["name"] == name]
    return found[0]["system"].get("quantity") if found else None


async def test_give_and_remove(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api(
        "POST", "/give", {"fromUuid": ELARA, "toUuid": GOBLIN, "itemUuid": RATIONS, "quantity": 2}
    )
    assert status == 200, body
    assert list(body) == [
        "type", "requestId", "fromUuid", "toUuid", "quantity", "itemUuid", "newItemId", "success",
    ]  # fmt: skip
    assert body["quantity"] == 2 and body["success"] is True
    assert quantity(world, ELARA, "Rations") == 3 and quantity(world, GOBLIN, "Rations") == 2
    new_id = body["newItemId"]
    _, body = await api(
        "POST", "/give", {"fromUuid": ELARA, "toUuid": GOBLIN, "itemName": "rations", "quantity": 3}
    )
    assert body["newItemId"] == new_id and body["quantity"] == 5  # stacked
    assert quantity(world, ELARA, "Rations") is None and quantity(world, GOBLIN, "Rations") == 5

    # a world item is copied, the original stays
    _, made = await api(
        "POST", "/create", {"entityType": "Item", "data": {"name": "Rope", "type": "loot"}}
    )
    status, body = await api("POST", "/give", {"toUuid": ELARA, "itemUuid": made["uuid"]})
    assert status == 200 and body["quantity"] == 1 and "fromUuid" not in body
    assert stored(world, made["uuid"]) is not None and quantity(world, ELARA, "Rope") == 1
    _, body = await api("POST", "/give", {"toUuid": ELARA, "itemName": "rop"})  # by the index
    assert body["quantity"] == 2

    # selected: the first controlled token's actor is the target
    await api("POST", "/select", {"uuids": [f"{SCENE}.Token.tokBrann00000001"], "overwrite": True})
    status, body = await api("POST", "/give", {"selected": True, "itemUuid": made["uuid"]})
    assert status == 200 and list(body)[2:4] == ["selected", "toUuid"] and body["toUuid"] == BRANN

    before = snapshot(world)
    for payload, error in (
        ({"itemUuid": DAGGER}, "Target UUID or selected is required"),
        ({"toUuid": BRANN}, "Item UUID or Item Name is required"),
        (
            {"toUuid": BRANN, "itemUuid": DAGGER, "fromUuid": SCENE},
            "Source entity must be an Actor, got Scene",
        ),
        (
            {"toUuid": BRANN, "itemUuid": DAGGER, "fromUuid": "Actor.x"},
            "Source entity must be an Actor, got undefined",
        ),
        ({"toUuid": "Actor.x", "itemUuid": DAGGER}, "Target entity not found: Actor.x"),
        ({"toUuid": SCENE, "itemUuid": DAGGER}, "Target entity must be an Actor, got Scene"),
        ({"toUuid": BRANN, "itemUuid": f"{ELARA}.Item.nope"}, f"Item not found: {ELARA}.Item.nope"),
        ({"toUuid": BRANN, "itemUuid": ELARA}, "Entity must be an Item, got Actor"),
        ({"toUuid": BRANN, "itemName": "Dagger", "fromUuid": GOBLIN}, "Item not found: Dagger"),
        (
            {"toUuid": BRANN, "itemUuid": DAGGER, "fromUuid": GOBLIN},
            f"Item {DAGGER} does not belong to source actor {GOBLIN}",
        ),
        (
            {"toUuid": GOBLIN, "itemUuid": DAGGER, "fromUuid": ELARA, "userId": "Aria"},
            "User 'Aria' does not have permission to give items to 'Goblin'",
        ),
        (
            {"toUuid": BRANN, "itemUuid": DAGGER, "fromUuid": ELARA, "userId": "Ben"},
            "User 'Ben' does not have permission to give items from 'Elara Quill'",
        ),
    ):
        status, body = await api("POST", "/give", payload)
        assert status == 400 and body["error"] == error, (payload, body)
        assert body["success"] is False and list(body)[-2:] == ["success", "error"]
    _, body = await api("POST", "/give", {"toUuid": "Actor.x", "itemUuid": DAGGER, "quantity": 2})
    assert list(body) == [
        "type", "requestId", "fromUuid", "toUuid", "quantity", "itemUuid", "success", "error",
    ]  # fmt: skip
    assert (body["fromUuid"], body["quantity"]) == ("", 2)
    assert snapshot(world) == before

    # /remove
    status, body = await api(
        "POST", "/remove", {"actorUuid": GOBLIN, "itemName": "Rations", "quantity": 2}
    )
    assert status == 200 and list(body) == [
        "type",
        "requestId",
        "actorUuid",
        "itemUuid",
        "quantity",
        "success",
    ]
    assert body["quantity"] == 3 and body["itemUuid"] == f"{GOBLIN}.Item.{new_id}"
    _, body = await api(
        "POST", "/remove", {"actorUuid": GOBLIN, "itemUuid": f"{GOBLIN}.Item.{new_id}"}
    )
    assert body["quantity"] == 0 and quantity(world, GOBLIN, "Rations") is None
    before = snapshot(world)
    for payload, error in (
        ({"itemName": "Rope"}, "Target actor UUID or selected is required"),
        ({"actorUuid": ELARA}, "Item UUID or Item Name is required"),
        ({"actorUuid": "Actor.x", "itemName": "Rope"}, "Target actor not found: Actor.x"),
        ({"actorUuid": SCENE, "itemName": "Rope"}, "Target entity must be an Actor, got Scene"),
        (
            {"actorUuid": ELARA, "itemName": "Rope", "userId": "Ben"},
            "User 'Ben' does not have permission to remove items from 'Elara Quill'",
        ),
        ({"actorUuid": ELARA, "itemName": "Nothing"}, "Item not found: Nothing"),
        (
            {"actorUuid": BRANN, "itemUuid": f"{ELARA}.Item.kwtCbxdmftLHe2bt"},
            f"Item not found: {ELARA}.Item.kwtCbxdmftLHe2bt",
        ),
    ):
        status, body = await api("POST", "/remove", payload)
        assert status == 400 and body == {
            "type": "remove-result",
            "requestId": body["requestId"],
            "success": False,
            "error": error,
        }, payload
    assert snapshot(world) == before


async def test_increase_decrease(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api(
        "POST", "/increase", {"attribute": "prototypeToken.height", "amount": 5}, uuid=ELARA
    )
    assert status == 200 and list(body) == ["type", "requestId", "results", "success"]
    assert body["results"] == [
        {"uuid": ELARA, "attribute": "prototypeToken.height", "oldValue": 1, "newValue": 6}
    ]
    _, body = await api(
        "POST", "/decrease", {"attribute": "prototypeToken.height", "amount": 5}, uuid=ELARA
    )
    assert body["results"][0]["oldValue"] == 6 and body["results"][0]["newValue"] == 1
    _, body = await api(
        "POST", "/decrease", {"attribute": "system.attributes.hp.value", "amount": 2.5}, uuid=ELARA
    )
    assert body["results"][0]["newValue"] == 17.5
    _, body = await api(
        "POST", "/increase", {"attribute": "system.quantity", "amount": 1}, uuid=RATIONS
    )
    assert body["results"][0]["newValue"] == 6 and quantity(world, ELARA, "Rations") == 6

    await api("POST", "/select", {"uuids": [TOK_ELARA, TOK_GOBLIN], "overwrite": True})
    _, body = await api(
        "POST", "/increase", {"attribute": "system.currency.gp", "amount": 1, "selected": True}
    )
    # the unlinked goblin token's own actor is changed, not the world actor
    assert [r["uuid"] for r in body["results"]] == [ELARA, f"{TOK_GOBLIN}.Actor.goblinNpc0000001"]

    before = snapshot(world)
    status, body = await api(
        "POST", "/increase", {"attribute": "name", "amount": 1, "selected": True}
    )
    assert status == 400 and body["error"] == "Attribute name is not a number, found: string"
    assert snapshot(world) == before  # the first target is not left changed
    for payload, query, error in (
        ({"attribute": "x", "amount": 1}, {}, "UUID or selected is required"),
        (
            {"attribute": "system.nope", "amount": 1},
            {"uuid": ELARA},
            "Attribute system.nope is not a number, found: undefined",
        ),
        (
            {"attribute": "system.attributes.hp", "amount": 1},
            {"uuid": ELARA},
            "Attribute system.attributes.hp is not a number, found: object",
        ),
        ({"attribute": "x", "amount": 1}, {"uuid": "Actor.nope"}, "No entities found to modify"),
        (
            {"attribute": "system.currency.gp", "amount": 1, "userId": "Ben"},
            {"uuid": ELARA},
            "User 'Ben' does not have permission to increase attribute on 'Elara Quill'",
        ),
    ):
        status, body = await api("POST", "/increase", payload, **query)
        assert status == 400 and body == {
            "type": "increase-result",
            "requestId": body["requestId"],
            "success": False,
            "error": error,
        }
    status, body = await api("POST", "/decrease", {"amount": 1}, uuid=ELARA)
    assert (status, body) == (400, {"error": "'attribute' is required"})
    status, body = await api("POST", "/decrease", {"attribute": "x", "amount": "lots"}, uuid=ELARA)
    assert (status, body) == (400, {"error": "'amount' must be a valid number"})
    assert snapshot(world) == before


async def test_kill(world: EmbeddedWorld, api: Any) -> None:
    # a running combat with the goblin in it
    combat = {
        "name": "Fight",
        "active": True,
        "scene": "sceneTavern00001",
        "combatants": [
            {
                "_id": "cbtGoblin0000001",
                "tokenId": "tokGoblin0000001",
                "actorId": "goblinNpc0000001",
                "sceneId": "sceneTavern00001",
                "defeated": False,
            },
            {
                "_id": "cbtElara00000001",
                "tokenId": "tokElara00000001",
                "actorId": "elaraWizard00001",
                "sceneId": "sceneTavern00001",
                "defeated": False,
            },
        ],
    }
    status, body = await api("POST", "/create", {"entityType": "Combat", "data": combat})
    assert status == 200, body
    combat_uuid = body["uuid"]

    status, body = await api("POST", "/kill", uuid=ELARA)
    assert status == 200 and list(body) == ["type", "requestId", "results"]
    assert body["results"] == [
        {
            "uuid": ELARA,
            "success": True,
            "message": "Actor marked as defeated, HP set to 0, and dead effect applied to 1 tokens",
        }
    ]
    elara = stored(world, ELARA)
    assert elara is not None and elara["system"]["attributes"]["hp"]["value"] == 0
    assert any("dead" in e.get("statuses", []) for e in elara["effects"])
    fight = stored(world, combat_uuid)
    assert fight is not None and [c["defeated"] for c in fight["combatants"]] == [False, True]

    status, body = await api("POST", "/kill", uuid=TOK_GOBLIN)
    assert (
        body["results"][0]["message"]
        == "Token marked as defeated, HP set to 0, and dead effect applied"
    )
    # the token is unlinked: its own actor is at 0 HP and dead, the world goblin is not
    _, body = await api("GET", "/get", uuid=f"{TOK_GOBLIN}.Actor.goblinNpc0000001")
    assert body["data"]["system"]["attributes"]["hp"]["value"] == 0
    assert any("dead" in e["statuses"] for e in body["data"]["effects"])
    assert stored(world, GOBLIN)["system"]["attributes"]["hp"]["value"] == 7  # type: ignore[index]
    assert stored(world, GOBLIN)["effects"] == []  # type: ignore[index]
    assert [c["defeated"] for c in stored(world, combat_uuid)["combatants"]] == [True, True]  # type: ignore[index]

    _, made = await api(
        "POST", "/create", {"entityType": "Actor", "data": {"name": "Far", "type": "npc"}}
    )
    _, body = await api("POST", "/kill", uuid=made["uuid"])
    assert body["results"][0]["message"].endswith("applied to 0 tokens")
    far = stored(world, made["uuid"])
    assert (
        far is not None and far["system"]["attributes"]["hp"]["value"] == 0 and far["effects"] == []
    )

    before = snapshot(world)
    for query, error in (
        ({"uuid": "Actor.nope"}, "Entity not found: Actor.nope"),
        ({}, "No entities found to mark as defeated"),
        ({"selected": True}, "No entities found to mark as defeated"),
        ({"uuid": SCENE}, "Cannot mark entity type Scene as defeated"),
        (
            {"uuid": BRANN, "userId": "Ben"},
            "User 'Ben' does not have permission to kill 'Brann Stoneheart'",
        ),
    ):
        status, body = await api("POST", "/kill", **query)
        assert status == 400 and body == {
            "type": "kill-result",
            "requestId": body["requestId"],
            "success": False,
            "error": error,
        }
    assert snapshot(world) == before


async def test_give_from_a_compendium_pack(world: EmbeddedWorld, api: Any) -> None:
    potion = "Compendium.dnd5e.items.Item.srdPotionOfHeali"
    status, body = await api("POST", "/give", {"toUuid": GOBLIN, "itemUuid": potion, "quantity": 2})
    assert status == 200 and body["itemUuid"] == potion and body["quantity"] == 2, body
    goblin = stored(world, GOBLIN)
    assert goblin is not None
    given = [i for i in goblin["items"] if i["_id"] == body["newItemId"]]
    assert given[0]["name"] == "Potion of Healing" and given[0]["type"] == "consumable"
    _, body = await api("POST", "/give", {"toUuid": GOBLIN, "itemName": "hempen rope"})
    assert body["success"] is True  # found by the search index among the pack's items
    assert quantity(world, GOBLIN, "Hempen Rope (50 feet)") == 1
    status, body = await api("PUT", "/update", {"data": {"name": "x"}}, uuid=potion)
    assert status == 400 and body["error"] == "You may not modify the locked compendium dnd5e.items"
    status, body = await api("GET", "/get", uuid=potion)
    assert status == 200 and body["data"]["name"] == "Potion of Healing"


async def test_macro_writes_need_the_setting_and_the_scope(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    with world.world.store.transaction() as tx:
        tx.put(
            "Macro", {"_id": "macro00000000001", "name": "Hello", "type": "chat", "command": "Hi"}
        )
    uuid = "Macro.macro00000000001"
    before = snapshot(world)
    status, body = await api("PUT", "/update", {"data": {"command": "Bye"}}, uuid=uuid)
    assert status == 400 and list(body) == ["type", "requestId", "error"]
    assert body["error"].startswith("Macro editing is disabled in REST API module settings.")
    status, body = await api("DELETE", "/delete", uuid=uuid)
    assert status == 400 and body["error"].startswith("Macro deletion is disabled")
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_WRITE, True)
    without_scope = api_for(relay, ("entity:write",))
    status, body = await without_scope("PUT", "/update", {"data": {"command": "Bye"}}, uuid=uuid)
    assert (status, body["error"]) == (400, "macro:write scope is required to update macros")
    status, body = await without_scope("DELETE", "/delete", uuid=uuid)
    assert (status, body["error"]) == (400, "macro:write scope is required to delete macros")
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_WRITE, False)
    assert snapshot(world) == before
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_WRITE, True)
    status, body = await api("PUT", "/update", {"data": {"command": "Bye"}}, uuid=uuid)
    assert status == 200 and body["entity"][0]["command"] == "Bye"
    status, body = await api("DELETE", "/delete", uuid=uuid)
    assert status == 200 and stored(world, uuid) is None
