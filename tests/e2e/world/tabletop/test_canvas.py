"""Canvas routes end to end (endpoints-beyond-seed §10) on the demo scene "The Yawning Portal"
(2000 x 1400 px, 100 px = 5 ft, padding 0.25: the map spans (500, 400) to (2500, 1800)): every
document type created, updated and deleted with its hooks, token moves snapped to the grid and
kept on the scene, distances with dnd5e's diagonal rule, each error changing nothing, and the
userId gates (a player moves only the tokens it owns)."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, Api, api_for, eventually

from vttrelay.world.model import documents

SCENE = "sceneTavern00001"
ELARA_TOKEN, GOBLIN_TOKEN = "tokElara00000001", "tokGoblin0000001"
ELARA = "Actor.elaraWizard00001"  # Aria's character
VALID = ["tokens", "tiles", "drawings", "lights", "sounds", "notes", "templates", "walls"]
VALID.append("regions")
# The create bodies of the reference's canvas suite, one per document type.
CREATE: dict[str, dict[str, Any]] = {
    "tiles": {"x": 500, "y": 400, "width": 200, "height": 200, "texture": {"src": ""}},
    "drawings": {"x": 600, "y": 600, "shape": {"type": "r", "width": 100, "height": 100}},
    "lights": {"x": 800, "y": 800, "config": {"dim": 20, "bright": 10}},
    "sounds": {"x": 700, "y": 700, "radius": 10, "path": ""},
    "notes": {"x": 750, "y": 750, "text": "Test Note"},
    "templates": {"x": 850, "y": 850, "t": "circle", "distance": 15},
    "walls": {"c": [600, 600, 800, 600]},
    "regions": {
        "name": "Test Region",
        "shapes": [{"type": "ellipse", "x": 700, "y": 700, "radiusX": 100, "radiusY": 100}],
    },
}
CLASS = {
    "tiles": "Tile",
    "drawings": "Drawing",
    "lights": "AmbientLight",
    "sounds": "AmbientSound",
    "notes": "Note",
    "templates": "MeasuredTemplate",
    "walls": "Wall",
    "regions": "Region",
}


def scene_doc(world: Any) -> dict[str, Any]:
    with world.world.store.transaction() as tx:
        scene: dict[str, Any] = tx.get("Scene", SCENE)
    return scene


def token(world: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in scene_doc(world)["tokens"] if t["_id"] == token_id)


async def test_read_a_scene_collection(relay: Any, world: Any, api: Api) -> None:
    status, body = await api("GET", "/canvas/tokens")
    assert status == 200, body
    assert list(body) == ["type", "requestId", "sceneId", "documentType", "data"]
    assert body["type"] == "get-canvas-documents-result"
    assert (body["sceneId"], body["documentType"]) == (SCENE, "tokens")
    assert [t["name"] for t in body["data"]][:2] == ["Elara Quill", "Corvin Ash"]
    assert len(body["data"]) == 7
    status, body = await api("GET", "/canvas/tokens", sceneId=SCENE, documentId=GOBLIN_TOKEN)
    assert status == 200 and [t["name"] for t in body["data"]] == ["Goblin"]
    assert (await api("GET", "/canvas/walls"))[1]["data"] == []

    status, body = await api("GET", "/canvas/tokens", documentId="nope")
    assert status == 400
    assert list(body) == ["type", "requestId", "error", "data"] and body["data"] is None
    assert body["error"] == "Document not found: nope"
    status, body = await api("GET", "/canvas/tokens", sceneId="nope")
    assert status == 400 and body["error"] == "Scene not found: nope"
    status, body = await api("GET", "/canvas/invalid")
    assert status == 400
    assert body == {
        "error": "Invalid documentType. Must be one of: " + ", ".join(VALID),
        "validTypes": VALID,
    }
    # the demo scene's ownership gives players nothing: they may not read its documents
    status, body = await api("GET", "/canvas/tokens", userId="Aria")
    assert status == 400
    assert body["error"] == "User 'Aria' does not have permission to view this scene's documents"


async def test_create_update_delete_every_document_type_with_hooks(
    relay: Any, world: Any, api: Api, hooks: Any
) -> None:
    names = [f"{verb}{cls}" for cls in CLASS.values() for verb in ("create", "update", "delete")]
    stream = await hooks(*names)
    for doc_type, data in CREATE.items():
        status, body = await api("POST", f"/canvas/{doc_type}", {"data": data})
        assert status == 200, (doc_type, body)
        assert list(body) == ["type", "requestId", "sceneId", "documentType", "data"]
        assert body["type"] == "create-canvas-document-result"
        created = body["data"][0]
        assert body["sceneId"] == SCENE and body["documentType"] == doc_type
        for key, value in data.items():
            if isinstance(value, dict):
                assert created[key] == {**created[key], **value}, doc_type  # merged defaults
            else:
                assert created[key] == value, doc_type
        doc_id = created["_id"]
        event = await stream.event()
        assert event.name == f"create{CLASS[doc_type]}", doc_type
        assert event.data["args"][0]["_id"] == doc_id

        status, body = await api(
            "PUT",
            f"/canvas/{doc_type}",
            {"documentId": doc_id, "data": {"hidden": True, "flags.test.note": 1}},
        )
        assert status == 200, (doc_type, body)
        assert body["type"] == "update-canvas-document-result"
        assert body["data"][0]["hidden"] is True and body["data"][0]["flags"] == {
            "test": {"note": 1}
        }
        event = await stream.event()
        assert event.name == f"update{CLASS[doc_type]}"
        assert event.data["args"][1] == {
            "hidden": True,
            "flags": {"test": {"note": 1}},
            "_id": doc_id,
        }

        status, body = await api("DELETE", f"/canvas/{doc_type}", documentId=doc_id)
        assert status == 200, (doc_type, body)
        assert body == {
            "type": "delete-canvas-document-result",
            "requestId": body["requestId"],
            "sceneId": SCENE,
            "documentType": doc_type,
            "success": True,
        }
        assert (await stream.event()).name == f"delete{CLASS[doc_type]}"
    scene = scene_doc(world)
    assert all(not scene.get(key) for key in ("tiles", "walls", "lights", "regions"))


async def test_create_several_documents_at_once(relay: Any, world: Any, api: Api) -> None:
    walls: list[dict[str, Any]] = [
        {"c": [600, 600, 800, 600]},
        {"c": [800, 600, 800, 800], "door": 1},
    ]
    status, body = await api("POST", "/canvas/walls", {"data": walls})
    assert status == 200, body
    assert [w["c"] for w in body["data"]] == [walls[0]["c"], walls[1]["c"]]
    assert [w["door"] for w in body["data"]] == [0, 1]
    assert [w["_id"] for w in scene_doc(world)["walls"]] == [w["_id"] for w in body["data"]]


async def test_a_token_dropped_from_an_actor(relay: Any, world: Any, api: Api, hooks: Any) -> None:
    stream = await hooks("createToken", "updateToken", "deleteToken")
    status, body = await api(
        "POST", "/canvas/tokens", {"data": {"x": 1500, "y": 1000, "actorId": "wolfNpc000000001"}}
    )
    assert status == 200, body
    wolf = body["data"][0]
    assert (wolf["name"], wolf["actorId"], wolf["actorLink"], wolf["disposition"]) == (
        "Wolf",
        "wolfNpc000000001",
        False,
        -1,
    )
    assert (wolf["x"], wolf["y"], wolf["width"], wolf["hidden"]) == (1500, 1000, 1, False)
    created = await stream.event()
    assert created.name == "createToken" and created.data["args"][0] == wolf
    status, body = await api(
        "PUT", "/canvas/tokens", {"documentId": wolf["_id"], "data": {"x": 1600, "y": 1100}}
    )
    assert status == 200 and (body["data"][0]["x"], body["data"][0]["y"]) == (1600, 1100)
    updated = await stream.event()
    assert updated.data["args"][1] == {"x": 1600, "y": 1100, "_id": wolf["_id"]}
    assert (await api("DELETE", "/canvas/tokens", documentId=wolf["_id"]))[0] == 200
    assert (await stream.event()).name == "deleteToken"
    assert len(scene_doc(world)["tokens"]) == 7


async def test_canvas_errors_change_nothing(relay: Any, world: Any, api: Api) -> None:
    before = scene_doc(world)

    async def refused(method: str, path: str, body: Any, text: str, **query: Any) -> Any:
        status, reply = await api(method, path, body, **query)
        assert status == 400 and reply["error"] == text, (method, path, reply)
        return reply

    await refused("POST", "/canvas/walls", None, "'data' is required")
    await refused(
        "POST", "/canvas/walls", {"data": "wall"}, "data must be an object or an array of objects"
    )
    await refused(  # a batch is created whole or not at all
        "POST",
        "/canvas/walls",
        {"data": [{"c": [0, 0, 1, 1]}, {"c": [1, 1]}]},
        "Wall validation errors:\n  c: must be an array of 4 numbers",
    )
    await refused(
        "POST",
        "/canvas/walls",
        {"data": {"light": 10}},
        "Wall validation errors:\n  c: may not be undefined",
    )
    await refused(
        "POST",
        "/canvas/walls",
        {"data": {"c": [0, 0, "x", 1]}},
        "Wall validation errors:\n  c: must be an array of 4 numbers",
    )
    await refused(
        "POST",
        "/canvas/templates",
        {"data": {"t": "star", "x": "left"}},
        "MeasuredTemplate validation errors:\n  x: must be a finite number\n"
        "  t: 'star' is not a valid choice",
    )
    await refused(
        "POST", "/canvas/tokens", {"data": {"actorId": "nobody"}}, "Actor not found: nobody"
    )
    await refused(
        "POST", "/canvas/walls", {"data": {"c": [0, 0, 1, 1]}, "sceneId": "x"}, "Scene not found: x"
    )
    await refused("PUT", "/canvas/tokens", {"data": {"x": 1}}, "'documentId' is required")
    await refused("PUT", "/canvas/tokens", {"documentId": "t1"}, "'data' is required")
    reply = await refused(
        "PUT",
        "/canvas/tokens",
        {"documentId": "nope", "data": {"x": 1}},
        "Document not found: nope",
    )
    assert list(reply) == ["type", "requestId", "error"]
    await refused(
        "PUT",
        "/canvas/tokens",
        {"documentId": GOBLIN_TOKEN, "data": {"x": None, "width": -2}},
        "Token validation errors:\n  width, height: may not be negative",
    )
    await refused("DELETE", "/canvas/tokens", None, "'documentId' is required")
    reply = await refused(
        "DELETE", "/canvas/tokens", None, "Document not found: nope", documentId="nope"
    )
    assert list(reply) == ["type", "requestId", "success", "error"] and reply["success"] is False
    # a player owns no scene: every write is refused with the module's text
    for method, body, query, operation in [
        ("POST", {"data": {"c": [0, 0, 1, 1]}}, {}, "create embedded documents on"),
        (
            "PUT",
            {"documentId": ELARA_TOKEN, "data": {"x": 600}},
            {},
            "update embedded documents on",
        ),
        ("DELETE", None, {"documentId": ELARA_TOKEN}, "delete embedded documents from"),
    ]:
        await refused(
            method,
            "/canvas/tokens",
            body,
            f"User 'Aria' does not have permission to {operation} 'The Yawning Portal'",
            userId="Aria",
            **query,
        )
    assert scene_doc(world) == before


async def test_move_token_puts_the_token_where_asked_as_the_module_does(
    relay: Any, world: Any, api: Api, hooks: Any, sse: Any
) -> None:
    stream = await hooks("updateToken")
    scene_events = await sse(
        relay,
        "/scene/subscribe",
        relay.key(("events:subscribe",)),
        clientId=CLIENT_ID,
        sceneId=SCENE,
    )
    assert (await scene_events.event()).name == "connected"
    await eventually(lambda: world.world.subscribed("scene-events"))
    # no snap to the grid: x and y are echoed and stored as given
    status, body = await api("POST", "/move-token", {"uuid": ELARA, "x": 633, "y": 871.5})
    assert status == 200, body
    assert body == {
        "type": "move-token-result",
        "requestId": body["requestId"],
        "data": {
            "tokenUuid": f"Scene.{SCENE}.Token.{ELARA_TOKEN}",
            "name": "Elara Quill",
            "x": 633,
            "y": 871.5,
            "sceneId": SCENE,
        },
    }
    moved = await stream.event()
    assert moved.data["args"][1] == {"x": 633, "y": 871.5, "_id": ELARA_TOKEN}
    token_update = await scene_events.event()
    assert token_update.name == "scene-token-update"
    assert token_update.data == {
        "sceneId": SCENE,
        "eventType": "token-update",
        "tokenId": ELARA_TOKEN,
        "changes": {"x": 633, "y": 871.5, "_id": ELARA_TOKEN},
    }
    # by name, through waypoints; query parameters work as well as the body
    status, body = await api(
        "POST",
        "/move-token",
        {"waypoints": [{"x": 1300, "y": 700}, {"x": 1410, "y": 790}], "animate": False},
        name="goblin",
        x="1549",
        y="1050",
    )
    assert status == 200, body
    assert (body["data"]["x"], body["data"]["y"]) == (1549, 1050)
    assert (token(world, GOBLIN_TOKEN)["x"], token(world, GOBLIN_TOKEN)["y"]) == (1549, 1050)
    # a token uuid, to a position off the scene (into its padding, past the canvas): the module
    # applies no bound to the scene either
    for x, y in ((2460, 900), (449, 900), (900, -5000), (-10_000_000, 10_000_000)):
        status, body = await api(
            "POST", "/move-token", {"uuid": f"Scene.{SCENE}.Token.{GOBLIN_TOKEN}", "x": x, "y": y}
        )
        assert status == 200 and (body["data"]["x"], body["data"]["y"]) == (x, y), body
        assert (token(world, GOBLIN_TOKEN)["x"], token(world, GOBLIN_TOKEN)["y"]) == (x, y)


async def test_move_token_errors_leave_the_token_in_place(relay: Any, world: Any, api: Api) -> None:
    before = scene_doc(world)

    async def refused(body: dict[str, Any], text: str) -> None:
        status, reply = await api("POST", "/move-token", body)
        assert status == 400 and reply["error"] == text, reply

    await refused({"uuid": ELARA, "y": 500}, "'x' is required")
    await refused({"uuid": ELARA, "x": "far", "y": 500}, "'x' must be a valid number")
    await refused({"x": 600, "y": 500}, "uuid or name is required")
    await refused({"uuid": "Actor.nope", "x": 600, "y": 500}, "Token not found: Actor.nope")
    await refused({"name": "Dragon", "x": 600, "y": 500}, "Token not found: Dragon")
    await refused(
        {"name": "Goblin", "x": 600, "y": 500, "sceneId": "nope"}, "Scene not found: nope"
    )
    # every number is bounded as a scene's numbers are (rules.canvas.MAX_NUMBER)
    await refused(
        {"name": "Goblin", "x": 10_000_001, "y": 900},
        "x: must be a finite number between -10000000 and 10000000 (got 10000001)",
    )
    await refused(
        {"name": "Goblin", "x": 900, "y": -2e9},
        "y: must be a finite number between -10000000 and 10000000 (got -2000000000)",
    )
    await refused(
        {
            "name": "Goblin",
            "x": 900,
            "y": 900,
            "waypoints": [{"x": 700, "y": 700}, {"x": 3000, "y": 1e8}],
        },
        "y: must be a finite number between -10000000 and 10000000 (got 100000000.0)",
    )
    await refused(
        {"name": "Goblin", "x": 900, "y": 900, "waypoints": [{"x": 700, "y": 700}, {"x": 800}]},
        "Each waypoint must have x and y coordinates",
    )
    assert scene_doc(world) == before  # not even the first waypoint was applied


async def test_a_player_moves_only_the_tokens_it_owns(relay: Any, world: Any, api: Api) -> None:
    status, body = await api(
        "POST", "/move-token", {"uuid": ELARA, "x": 1000, "y": 1000, "userId": "Aria"}
    )
    assert status == 200 and body["data"]["x"] == 1000, body
    before = scene_doc(world)
    for who, target, name in [
        ("Aria", {"name": "Goblin"}, "Goblin"),
        ("Aria", {"uuid": "Actor.corvinWarlock001"}, "Corvin Ash"),  # Ben's: Aria only observes
        ("Ben", {"uuid": ELARA}, "Elara Quill"),
    ]:
        status, body = await api(
            "POST", "/move-token", {**target, "x": 900, "y": 900, "userId": who}
        )
        assert status == 400
        assert body["error"] == f"User '{who}' does not have permission to move '{name}'"
    status, body = await api(
        "POST", "/move-token", {"name": "Goblin", "x": 900, "y": 900}, userId="nobody"
    )
    assert status == 400 and body["error"] == "User not found: nobody"
    assert scene_doc(world) == before
    # a GM moves any token
    status, body = await api(
        "POST", "/move-token", {"name": "Goblin", "x": 900, "y": 900, "userId": "Gamemaster"}
    )
    assert status == 200


async def test_measure_distance(relay: Any, world: Any, api: Api) -> None:
    # the reference's capture: 5 diagonal squares count 5 (25 ft)
    status, body = await api(
        "GET", "/measure-distance", originX=0, originY=0, targetX=500, targetY=500
    )
    assert status == 200, body
    assert body == {
        "type": "measure-distance-result",
        "requestId": body["requestId"],
        "data": {
            "distance": 25,
            "units": "ft",
            "origin": {"x": 0, "y": 0},
            "target": {"x": 500, "y": 500},
            "sceneId": SCENE,
        },
    }
    # Elara (500, 800) to the goblin (1200, 500): 7 squares across, 3 of them diagonal
    status, body = await api(
        "GET",
        "/measure-distance",
        originName="elara quill",
        targetUuid=f"Scene.{SCENE}.Token.{GOBLIN_TOKEN}",
    )
    assert status == 200 and body["data"]["distance"] == 35, body
    assert body["data"]["origin"] == {"x": 500, "y": 800}
    status, body = await api(
        "GET", "/measure-distance", originUuid=ELARA, targetX=500, targetY=1300
    )
    assert body["data"]["distance"] == 25
    # the world's diagonal rule: 5/10/5 makes the 3 diagonals cost 4 squares
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, "core.gridDiagonals", 4)
    status, body = await api(
        "GET", "/measure-distance", originName="Elara Quill", targetName="Goblin", userId="Ben"
    )
    assert status == 200 and body["data"]["distance"] == 40

    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"targetX": 1, "targetY": 1},
            "Origin must be specified as originX/originY or originUuid/originName",
        ),
        (
            {"originX": 1, "targetY": 1},
            "Origin must be specified as originX/originY or originUuid/originName",
        ),
        (
            {"originX": 1, "originY": 1},
            "Target must be specified as targetX/targetY or targetUuid/targetName",
        ),
        ({"originName": "Dragon", "targetX": 1, "targetY": 1}, "Origin token not found: Dragon"),
        (
            {"originX": 1, "originY": 1, "targetUuid": "Actor.nope"},
            "Target token not found: Actor.nope",
        ),
        (
            {"originX": 1, "originY": 1, "targetX": 1, "targetY": 1, "sceneId": "x"},
            "Scene not found: x",
        ),
    ]
    for query, text in cases:
        status, body = await api("GET", "/measure-distance", **query)
        assert status == 400 and body["error"] == text, body
    status, body = await api("GET", "/measure-distance", originX="a", originY=1)
    assert (status, body) == (400, {"error": "'originX' must be a valid number"})


async def test_canvas_scopes(relay: Any, world: Any) -> None:
    from vttrelay.relay.routes import DEFAULT_SCOPES

    read_only = api_for(relay, DEFAULT_SCOPES)
    assert (await read_only("GET", "/canvas/tokens", clientId=CLIENT_ID))[0] == 200
    status, body = await read_only("POST", "/move-token", {"name": "Goblin", "x": 900, "y": 900})
    assert (status, body) == (403, {"error": "API key lacks required scope: canvas:write"})


async def test_the_ambush_scene_walls_block_nothing(relay: Any, world: Any, api: Api) -> None:
    """On the inactive "Goblin Ambush" scene (3000 x 2000 px: the map spans (800, 500) to
    (3800, 2500)), by `sceneId`: its walls and light, and a move straight through a wall."""
    ambush = "sceneAmbush00001"
    status, body = await api("GET", "/canvas/walls", sceneId=ambush)
    assert status == 200 and len(body["data"]) == 5 and body["sceneId"] == ambush
    assert [w["door"] for w in body["data"]].count(1) == 1  # the gate
    status, body = await api("GET", "/canvas/lights", sceneId=ambush)
    assert [light["config"]["animation"]["type"] for light in body["data"]] == ["torch"]
    # Brann walks from outside the camp into it, across the west wall at x = 2200
    status, body = await api(
        "POST",
        "/move-token",
        {"name": "Brann Stoneheart", "sceneId": ambush, "x": 2310, "y": 1040},
    )
    assert status == 200, body
    assert body["data"] == {
        "tokenUuid": f"Scene.{ambush}.Token.ambBrann00000001",
        "name": "Brann Stoneheart",
        "x": 2310,
        "y": 1040,
        "sceneId": ambush,
    }
    status, body = await api(
        "GET",
        "/measure-distance",
        sceneId=ambush,
        originName="Brann Stoneheart",
        targetName="Bandit",
    )
    assert status == 200 and body["data"]["distance"] == 15 and body["data"]["units"] == "ft"
    # the active scene's tokens did not move
    assert (token(world, ELARA_TOKEN)["x"], token(world, ELARA_TOKEN)["y"]) == (500, 800)
