"""GET /structure, GET /get-folder, POST /create-folder, DELETE /delete-folder and GET /contents/*
through a real relay and the embedded world over real sockets: the root with its compendium packs,
folder trees, paths, the userId views and GM gates, errors, events, and compendium uuids."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, api_for, eventually

from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.rules.structure import FOLDER_TYPES

ELARA = "Actor.elaraWizard00001"
GOBLIN_ID = "goblinNpc0000001"
PACK_GOBLIN = "Compendium.dnd5e.monsters.Actor.srdMonGoblin0000"


def put_in_folder(world: EmbeddedWorld, collection: str, doc_id: str, folder_id: str) -> None:
    """Test setup: file a document in a folder, as the tabletop's drag and drop would."""
    with world.world.store.transaction() as tx:
        doc = tx.get(collection, doc_id)
        assert doc is not None
        doc["folder"] = folder_id
        tx.put(collection, doc)


async def at_path(relay: Any, path: str, **query: str) -> tuple[int, Any]:
    """GET /structure?path=... (`path` is also the name of the api helper's argument)."""
    key = relay.key(ALL_SCOPES)
    answer = await relay.call("GET", "/structure", key=key, params={"path": path, **query})
    return answer.status, answer.json()


def failed(status: int, body: dict[str, Any], error: str, tail: Any) -> None:
    assert status == 400, body
    assert body["error"] == error, body
    assert list(body) == ["type", "requestId", "error", *tail], body
    for key, value in tail.items():
        assert body[key] == value


async def test_root_structure_with_compendium_packs(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/structure")
    assert status == 200 and list(body) == ["type", "requestId", "data"]
    assert body["type"] == "structure-result"
    data = body["data"]
    assert list(data) == ["folders", "entities", "compendiumPacks"]
    assert data["folders"] == {}
    # documents without a folder, grouped in the order of `types` (Scene first)
    keys, order = list(data["entities"]), [f"{t.lower()}s" for t in FOLDER_TYPES]
    assert keys[:2] == ["scenes", "actors"] and keys == sorted(keys, key=order.index)
    actors = {e["name"]: e for e in data["entities"]["actors"]}
    assert actors["Elara Quill"] == {
        "uuid": ELARA,
        "name": "Elara Quill",
        "id": "elaraWizard00001",
        "type": "Actor",
    }
    packs = data["compendiumPacks"]
    assert list(packs) == ["Items (SRD)", "Monsters (SRD)", "Spells (SRD)"]
    monsters = packs["Monsters (SRD)"]
    assert [monsters[k] for k in ("id", "name", "type", "uuid")] == [
        "dnd5e.monsters",
        "Monsters (SRD)",
        "Actor",
        "Compendium.dnd5e.monsters",
    ]
    goblin = next(e for e in monsters["entities"] if e["name"] == "Goblin")
    assert goblin == {
        "uuid": PACK_GOBLIN,
        "name": "Goblin",
        "id": "srdMonGoblin0000",
        "type": "npc",
    }
    items = packs["Items (SRD)"]["entities"]
    potion = next(e for e in items if e["name"] == "Potion of Healing")
    assert potion["type"] == "consumable"
    assert potion["uuid"] == "Compendium.dnd5e.items.Item.srdPotionOfHeali"

    status, body = await api("GET", "/structure", types="Actor", includeEntityData="true")
    data = body["data"]
    assert list(data["entities"]) == ["actors"]
    assert data["entities"]["actors"][0]["_id"]  # whole documents
    assert list(data["compendiumPacks"]) == ["Monsters (SRD)"]
    assert set(data["compendiumPacks"]["Monsters (SRD)"]["entities"][0]) == {
        "_id",
        "name",
        "type",
        "img",
        "uuid",
    }
    status, body = await api("GET", "/structure", types='["Actor"]')  # JSON text matches nothing
    assert body["data"] == {"folders": {}}


async def test_compendium_paths_and_uuids(world: EmbeddedWorld, api: Any, relay: Any) -> None:
    status, body = await at_path(relay, "Compendium.dnd5e.spells")
    assert status == 200
    compendium = body["data"]["compendium"]
    assert (compendium["name"], compendium["type"]) == ("Spells (SRD)", "Item")
    fireball = next(e for e in compendium["entities"] if e["name"] == "Fireball")
    assert fireball == {
        "uuid": "Compendium.dnd5e.spells.Item.srdSpFireball000",
        "name": "Fireball",
        "id": "srdSpFireball000",
        "type": "Item",
    }
    status, body = await at_path(relay, "Compendium.dnd5e.nope")
    failed(status, body, "Compendium not found: Compendium.dnd5e.nope", {"data": {}})

    # a pack document resolves by its uuid (both forms), read-only
    for uuid in (PACK_GOBLIN, "Compendium.dnd5e.monsters.srdMonGoblin0000"):
        status, body = await api("GET", "/effects", uuid=uuid, userId="Aria")
        assert status == 200 and body["data"] == {"uuid": PACK_GOBLIN, "effects": []}, body
    status, body = await api("POST", "/effects", {"uuid": PACK_GOBLIN, "statusId": "prone"})
    assert status == 400 and body["error"] == f"Compendium document {PACK_GOBLIN} is read-only"


async def test_folders_tree_paths_views_and_deletion(
    world: EmbeddedWorld, api: Any, relay: Any
) -> None:
    # the peer suite sends these in the query of a POST
    status, body = await api("POST", "/create-folder", name="test-folder", folderType="Scene")
    assert status == 200 and body["type"] == "create-folder-result", body
    scene_folder = body["data"]
    assert list(scene_folder) == ["id", "uuid", "name", "type", "parentFolder"]
    assert scene_folder["uuid"] == f"Folder.{scene_folder['id']}"
    assert (scene_folder["name"], scene_folder["type"], scene_folder["parentFolder"]) == (
        "test-folder",
        "Scene",
        None,
    )
    status, body = await api("GET", "/get-folder", name="test-folder")
    assert status == 200 and body["data"] == {**scene_folder, "contents": []}

    _, monsters = await api("POST", "/create-folder", {"name": "Monsters", "folderType": "Actor"})
    monsters_id = monsters["data"]["id"]
    _, goblins = await api(
        "POST",
        "/create-folder",
        {"name": "Goblins", "folderType": "Actor", "parentFolderId": monsters_id},
    )
    goblins_id = goblins["data"]["id"]
    assert goblins["data"]["parentFolder"] == monsters_id
    put_in_folder(world, "Actor", GOBLIN_ID, goblins_id)
    put_in_folder(world, "Actor", "elaraWizard00001", monsters_id)

    status, body = await api("GET", "/structure", types="Actor", recursive="true")
    tree = body["data"]["folders"]
    assert list(tree) == ["Monsters"]
    node = tree["Monsters"]
    assert [node[k] for k in ("id", "uuid", "type")] == [
        monsters_id,
        f"Folder.{monsters_id}",
        "Actor",
    ]
    assert node["entities"] == [
        {"uuid": ELARA, "name": "Elara Quill", "id": "elaraWizard00001", "type": "Actor"}
    ]
    assert node["Goblins"]["entities"][0]["name"] == "Goblin"
    loose = {e["name"] for e in body["data"]["entities"]["actors"]}
    assert "Goblin" not in loose and "Elara Quill" not in loose and "Wolf" in loose
    status, body = await api("GET", "/structure", types="Actor")  # not recursive: top level only
    assert list(body["data"]["folders"]["Monsters"]) == ["id", "uuid", "type", "entities"]
    status, body = await api("GET", "/structure", types="Actor", recursive="true", recursiveDepth=1)
    assert "Goblins" not in body["data"]["folders"]["Monsters"]

    status, body = await at_path(relay, f"Folder.{monsters_id}", recursive="true")
    assert status == 200
    assert list(body["data"]["folders"]) == ["Goblins"] and len(body["data"]["entities"]) == 1
    status, body = await at_path(relay, f"Folder.{monsters_id}", types="Scene")
    failed(status, body, "Folder type Actor not included in requested types", {"data": {}})
    status, body = await at_path(relay, "Folder.nope000000000001")
    failed(status, body, "Folder not found: Folder.nope000000000001", {"data": {}})
    status, body = await at_path(relay, "Folder.a.b")
    failed(status, body, "Invalid folder path: Folder.a.b", {"data": {}})

    # userId views: Aria owns Elara, sees Corvin LIMITED, does not see the goblin
    status, body = await api("GET", "/structure", types="Actor", recursive="true", userId="Aria")
    node = body["data"]["folders"]["Monsters"]
    assert node["entities"][0]["uuid"] == ELARA and "img" not in node["entities"][0]
    assert "entities" not in node["Goblins"]
    corvin = next(e for e in body["data"]["entities"]["actors"] if e["name"] == "Corvin Ash")
    assert list(corvin) == ["uuid", "name", "id", "type", "img"]
    status, body = await api("GET", "/get-folder", name="Goblins", userId="Aria")
    assert body["data"]["contents"] == []
    status, body = await api("GET", "/get-folder", name="Goblins")
    assert body["data"]["contents"] == [
        {
            "uuid": f"Actor.{GOBLIN_ID}",
            "id": GOBLIN_ID,
            "name": "Goblin",
            "type": "Actor",
            "img": "icons/svg/mystery-man.svg",
        }
    ]
    assert body["data"]["parentFolder"] == monsters_id

    # GM gates, then deletion rules
    status, body = await api(
        "POST", "/create-folder", {"name": "x", "folderType": "Actor", "userId": "Aria"}
    )
    failed(status, body, "User 'Aria' must be a GM to create folders", {"data": None})
    status, body = await api("DELETE", "/delete-folder", {"folderId": monsters_id, "userId": "Ben"})
    failed(status, body, "User 'Ben' must be a GM to delete folders", {"data": None})
    status, body = await api("DELETE", "/delete-folder", {"folderId": monsters_id})
    failed(
        status,
        body,
        "Folder contains 1 entities. Use deleteAll=true to delete them or move them first.",
        {"data": None},
    )
    put_in_folder(world, "Actor", "elaraWizard00001", "")
    status, body = await api("DELETE", "/delete-folder", {"folderId": monsters_id})
    failed(
        status,
        body,
        "Folder contains 1 child folders. Use deleteAll=true to delete them or move them first.",
        {"data": None},
    )
    status, body = await api("DELETE", "/delete-folder", folderId=monsters_id, deleteAll="true")
    assert status == 200 and body["type"] == "delete-folder-result"
    assert body["data"] == {
        "deleted": True,
        "folderId": monsters_id,
        "entitiesDeleted": 1,
        "foldersDeleted": 2,
    }
    status, body = await api("GET", "/structure", types="Actor")
    names = {e["name"] for e in body["data"]["entities"]["actors"]}
    assert "Goblin" not in names and "Elara Quill" in names and body["data"]["folders"] == {}
    status, body = await api("DELETE", "/delete-folder", {"folderId": scene_folder["id"]})
    assert body["data"]["foldersDeleted"] == 1 and body["data"]["entitiesDeleted"] == 0

    read_only = api_for(relay, DEFAULT_SCOPES)
    status, body = await read_only("POST", "/create-folder", {"name": "x", "folderType": "Actor"})
    assert (status, body) == (403, {"error": "API key lacks required scope: structure:write"})


async def test_folder_errors(world: EmbeddedWorld, api: Any) -> None:
    for method, path, params, error in (
        ("POST", "/create-folder", {"folderType": "Actor"}, "'name' is required"),
        ("POST", "/create-folder", {"name": "x"}, "'folderType' is required"),
        ("GET", "/get-folder", {}, "'name' is required"),
        ("DELETE", "/delete-folder", {}, "'folderId' is required"),
        (
            "DELETE",
            "/delete-folder",
            {"folderId": "x", "deleteAll": "maybe"},
            "'deleteAll' must be a valid boolean",
        ),
    ):
        status, body = await api(method, path, **params)
        assert (status, body) == (400, {"error": error})
    status, body = await api("GET", "/get-folder", name="nothing")
    failed(status, body, "Folder not found with name: nothing", {"data": None})
    status, body = await api(
        "POST", "/create-folder", {"name": "x", "folderType": "Actor", "parentFolderId": "nope"}
    )
    failed(status, body, "Parent folder not found with ID: nope", {"data": None})
    status, body = await api("POST", "/create-folder", {"name": "x", "folderType": "Spaceship"})
    assert status == 400 and body["error"].startswith("Folder validation errors: type: Spaceship")
    status, body = await api("DELETE", "/delete-folder", {"folderId": "nope"})
    failed(status, body, "Folder not found with ID: nope", {"data": None})
    status, body = await api("GET", "/structure", userId="nobody-xyz")
    assert status == 400 and body["error"] == "User not found: nobody-xyz"
    status, body = await api("GET", "/structure")
    assert body["data"]["folders"] == {}  # no failed call created anything


async def test_contents_is_deprecated(world: EmbeddedWorld, api: Any, relay: Any) -> None:
    status, body = await api("GET", "/contents/Folder.x/whatever")
    assert status == 400
    assert list(body) == ["error", "example", "message"]
    assert body == {
        "error": "This endpoint has been deprecated.",
        "example": "/structure?path=your/path&recursive=true",
        "message": "Use GET /structure with the path query parameter instead.",
    }
    no_scope = api_for(relay, ("entity:read",))
    status, body = await no_scope("GET", "/contents/x")
    assert (status, body) == (403, {"error": "API key lacks required scope: structure:read"})
    answer = await relay.call("GET", "/contents/x")
    assert answer.status == 401


async def test_contents_over_the_client_websocket(
    relay: Any, world: EmbeddedWorld, api_ws: Any
) -> None:
    socket = await api_ws(relay, relay.key(("structure:read",)), clientId=CLIENT_ID)
    await socket.send({"type": "structure", "requestId": "s1", "path": "Compendium.dnd5e.items"})
    reply = await socket.recv_until("structure-result")
    assert reply["requestId"] == "s1" and reply["data"]["compendium"]["type"] == "Item"
    assert "contents" in socket.hello["supportedTypes"]
    await socket.send({"type": "contents", "requestId": "c1", "path": "Compendium.dnd5e.monsters"})
    reply = await socket.recv_until("contents-result")
    assert reply["requestId"] == "c1" and reply["path"] == "Compendium.dnd5e.monsters"
    goblin = next(e for e in reply["entities"] if e["name"] == "Goblin")
    assert goblin == {
        "_id": "srdMonGoblin0000",
        "name": "Goblin",
        "type": "npc",
        "img": "icons/svg/mystery-man.svg",
        "uuid": PACK_GOBLIN,
    }
    await socket.send({"type": "contents", "requestId": "c2", "path": "Folder.nope"})
    reply = await socket.recv_until("contents-result")
    assert reply["error"] == "Folder not found: Folder.nope" and reply["entities"] == []


async def test_folder_events(relay: Any, world: EmbeddedWorld, api: Any, sse: Any) -> None:
    key = relay.key(("events:subscribe",))
    hooks = await sse(
        relay, "/hooks/subscribe", key, clientId=CLIENT_ID, hooks="createFolder,deleteFolder"
    )
    assert (await hooks.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("hooks") == 1)
    _, made = await api("POST", "/create-folder", {"name": "Loot", "folderType": "Item"})
    await api("DELETE", "/delete-folder", {"folderId": made["data"]["id"]})
    created, deleted = await hooks.events(2)
    assert created.name == "createFolder" and created.data["args"][0]["name"] == "Loot"
    assert deleted.name == "deleteFolder" and deleted.data["args"][0]["_id"] == made["data"]["id"]


async def test_give_from_a_pack(world: EmbeddedWorld, api: Any) -> None:
    """/give hands a character a Potion of Healing or a spell straight from an SRD pack; the
    pack is untouched and /get reads pack documents by their uuid."""
    potion = "Compendium.dnd5e.items.Item.srdPotionOfHeali"
    status, body = await api("GET", "/get", uuid=potion)
    assert status == 200 and body["data"]["name"] == "Potion of Healing", body
    brann = "Actor.brannFighter0001"
    _, before = await api("GET", "/get", uuid=brann)
    held = next(i for i in before["data"]["items"] if i["name"] == "Potion of Healing")
    status, body = await api("POST", "/give", {"toUuid": brann, "itemUuid": potion, "quantity": 2})
    assert status == 200 and body["success"] is True, body
    _, after = await api("GET", "/get", uuid=brann)
    stacked = next(i for i in after["data"]["items"] if i["name"] == "Potion of Healing")
    assert stacked["system"]["quantity"] == held["system"]["quantity"] + 2

    fireball = "Compendium.dnd5e.spells.Item.srdSpFireball000"
    status, body = await api("POST", "/give", {"toUuid": ELARA, "itemUuid": fireball})
    assert status == 200, body
    _, elara = await api("GET", "/get", uuid=ELARA)
    [spell] = [i for i in elara["data"]["items"] if i["name"] == "Fireball"]
    assert spell["_id"] == body["newItemId"] and spell["system"]["level"] == 3
    status, body = await api("GET", "/get", uuid=potion)
    assert body["data"]["system"]["quantity"] == 1  # the pack's own document is unchanged
