"""Scene routes end to end: a real relay, the demo world over a real WebSocket, each route's
success and errors, the `userId` views and gates, and the scene events of a switch."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image
from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

TAVERN = "sceneTavern00001"
AMBUSH = "sceneAmbush00001"  # LIMITED for players; the tavern is NONE for them


async def test_get_scene_selectors_and_views(api: Any, world: EmbeddedWorld) -> None:
    status, body = await api("GET", "/scene")
    assert (status, body) == (
        400,
        {"error": "At least one of 'sceneId', 'name', 'active', 'viewed', or 'all' is required"},
    )
    status, body = await api("GET", "/scene", all=True)
    assert status == 200 and [s["_id"] for s in body["data"]] == [TAVERN, AMBUSH]
    assert list(body) == ["type", "requestId", "data"] and body["type"] == "get-scene-result"
    for query, wanted in (
        ({"sceneId": AMBUSH}, AMBUSH),
        ({"name": "The Yawning Portal"}, TAVERN),
        ({"active": True}, TAVERN),
        ({"viewed": True}, TAVERN),
    ):
        status, body = await api("GET", "/scene", **query)
        assert status == 200 and body["data"]["_id"] == wanted, query
    ambush = (await api("GET", "/scene", sceneId=AMBUSH))[1]["data"]
    assert len(ambush["walls"]) == 5 and len(ambush["lights"]) == 1
    assert [t["name"] for t in ambush["tokens"]].count("Goblin") == 2
    assert ambush["playlist"] == "plAmbush00000001"
    for query in ({"name": "the yawning portal"}, {"sceneId": "nope"}, {"all": False}):
        status, body = await api("GET", "/scene", **query)
        assert (status, list(body), body["error"], body["data"]) == (
            400,
            ["type", "requestId", "error", "data"],
            "Scene not found",
            None,
        ), query

    # a player sees a LIMITED scene reduced, and no scene it may not see
    status, body = await api("GET", "/scene", sceneId=AMBUSH, userId="Aria")
    assert (status, body["data"]) == (
        200,
        {"uuid": f"Scene.{AMBUSH}", "name": "Goblin Ambush", "type": "Scene", "img": None},
    )
    status, body = await api("GET", "/scene", active=True, userId="Aria")
    assert (status, body["error"], body["data"]) == (
        400,
        "User 'Aria' does not have permission to view this scene",
        None,
    )
    status, body = await api("GET", "/scene", all=True, userId="Aria")
    assert [s["uuid"] for s in body["data"]] == [f"Scene.{AMBUSH}"]
    status, body = await api("GET", "/scene", all=True, userId="nobody")
    assert (status, body["error"], body["data"]) == (400, "User not found: nobody", None)


async def test_create_update_and_delete_scene(api: Any, world: EmbeddedWorld) -> None:
    status, body = await api("POST", "/scene", {})
    assert (status, body) == (400, {"error": "'data' is required"})
    status, body = await api("POST", "/scene", {"data": [1]})
    assert (status, body) == (400, {"error": "'data' must be an object"})
    status, body = await api("POST", "/scene", {"data": {"width": 10}})
    assert (status, body["error"]) == (
        400,
        "Scene validation errors:\n  name: may not be undefined",
    )
    status, body = await api("POST", "/scene", {"data": {"name": "Cellar"}, "userId": "Ben"})
    assert (status, body["error"]) == (400, "User 'Ben' does not have permission to create scenes")
    assert len((await api("GET", "/scene", all=True))[1]["data"]) == 2  # nothing was created

    status, body = await api(
        "POST",
        "/scene",
        {
            "data": {
                "name": "test-scene",
                "width": 1000,
                "height": 1000,
                "grid": {"size": 50},
                "walls": [{"c": [0, 0, 500, 0]}],
            }
        },
    )
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"]
    scene = body["data"]
    assert scene["grid"] == {
        "type": 1,
        "size": 50,
        "style": "solidLines",
        "thickness": 1,
        "color": "#000000",
        "alpha": 0.2,
        "distance": 5,
        "units": "ft",
    }
    assert (scene["name"], scene["width"], scene["active"], scene["tokens"]) == (
        "test-scene",
        1000,
        False,
        [],
    )
    assert scene["walls"][0]["c"] == [0, 0, 500, 0] and scene["walls"][0]["move"] == 20
    assert scene["ownership"] == {"default": 0, "gmUser0000000001": 3}
    scene_id = scene["_id"]
    # POST /create makes the same scene: one way to make a new document
    status, made = await api("POST", "/create", {"entityType": "Scene", "data": {"name": "Twin"}})
    assert status == 200, made
    twin = made["entity"]
    assert twin["grid"]["style"] == "solidLines" and twin["environment"] == scene["environment"]
    assert sorted(twin) == sorted(scene)

    status, body = await api("PUT", "/scene", {"sceneId": scene_id})
    assert (status, body) == (400, {"error": "'data' is required"})
    status, body = await api("PUT", "/scene", {"data": {"name": "x"}})
    assert (status, body) == (
        400,
        {"error": "At least one of 'sceneId', 'name', or 'active' is required"},
    )
    status, body = await api(
        "PUT",
        "/scene",
        {"sceneId": scene_id, "data": {"name": "test-scene-updated", "grid.distance": 10}},
    )
    assert status == 200, body
    assert body["data"]["name"] == "test-scene-updated" and body["data"]["grid"]["distance"] == 10
    assert body["data"]["grid"]["size"] == 50
    status, body = await api("PUT", "/scene", {"name": "test-scene", "data": {"width": 5}})
    assert (status, body["error"]) == (400, "Scene not found")  # the old name is gone
    status, body = await api(
        "PUT", "/scene", {"active": True, "data": {"name": "Mine"}, "userId": "Aria"}
    )
    assert (status, body["error"]) == (
        400,
        "User 'Aria' does not have permission to update 'The Yawning Portal'",
    )
    status, body = await api("PUT", "/scene", {"sceneId": scene_id, "data": {"name": ""}})
    assert status == 400 and "name: may not be undefined" in body["error"]
    assert (await api("GET", "/scene", sceneId=scene_id))[1]["data"]["name"] == (
        "test-scene-updated"
    )

    status, body = await api("DELETE", "/scene")
    assert (status, body) == (400, {"error": "At least one of 'sceneId' or 'name' is required"})
    status, body = await api("DELETE", "/scene", sceneId=scene_id, userId="Ben")
    assert (status, body["success"], body["error"]) == (
        400,
        False,
        "User 'Ben' does not have permission to delete 'test-scene-updated'",
    )
    status, body = await api("DELETE", "/scene", name="Twin")
    assert status == 200, body
    status, body = await api("DELETE", "/scene", name="test-scene-updated")
    assert (status, body) == (
        200,
        {"type": "delete-scene-result", "requestId": body["requestId"], "success": True},
    )
    status, body = await api("DELETE", "/scene", sceneId=scene_id)
    assert (status, list(body), body["error"]) == (
        400,
        ["type", "requestId", "success", "error"],
        "Scene not found",
    )


async def test_switch_scene_activates_it_and_sends_scene_events(
    relay: Any, api: Any, world: EmbeddedWorld, sse: Any
) -> None:
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    ambush_events = await sse(relay, "/scene/subscribe", key, clientId=CLIENT_ID, sceneId=AMBUSH)
    hooks = await sse(relay, "/hooks/subscribe", key, clientId=CLIENT_ID, hooks="updateScene")
    for stream in (ambush_events, hooks):
        assert (await stream.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("scene-events") == 1)
    await eventually(lambda: world.world.subscriptions.get("hooks") == 1)

    status, body = await api("POST", "/switch-scene")
    assert (status, body) == (400, {"error": "At least one of 'sceneId' or 'name' is required"})
    status, body = await api("POST", "/switch-scene", {"name": "Nowhere"})
    assert (status, body["success"], body["error"]) == (400, False, "Scene not found")
    status, body = await api("POST", "/switch-scene", {"sceneId": AMBUSH, "userId": "Aria"})
    assert (status, body["error"]) == (400, "User 'Aria' must be a GM to switch scenes")
    assert (await api("GET", "/scene", active=True))[1]["data"]["_id"] == TAVERN

    status, body = await api("POST", "/switch-scene", {"name": "Goblin Ambush"})
    assert status == 200, body
    assert list(body) == ["type", "requestId", "success", "data"]
    assert body["success"] is True and body["data"]["_id"] == AMBUSH and body["data"]["active"]
    status, scenes = await api("GET", "/scene", all=True)
    assert {s["_id"]: s["active"] for s in scenes["data"]} == {TAVERN: False, AMBUSH: True}
    status, info = await api("GET", "/world-info")
    assert info["data"]["activeScene"] == {"id": AMBUSH, "name": "Goblin Ambush"}

    activated = await ambush_events.event()  # named scene-<eventType>, as every scene event
    assert (activated.name, activated.data) == (
        "scene-scene-activate",
        {"sceneId": AMBUSH, "eventType": "scene-activate", "name": "Goblin Ambush"},
    )
    assert await ambush_events.nothing_more(0.2)  # the tavern's deactivation is filtered out
    updates = await hooks.events(2)
    changed = {e.data["args"][1]["_id"]: e.data["args"][1]["active"] for e in updates}
    assert changed == {TAVERN: False, AMBUSH: True}


async def test_scene_pictures(relay: Any, api: Any, world: EmbeddedWorld) -> None:
    key = relay.key(ALL_SCOPES, rate_per_minute=0)

    async def picture(**query: Any) -> Any:
        params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
        return await relay.call("GET", "/scene/image", key=key, params=params)

    answer = await picture()  # the viewed scene, the tavern: 2000 x 1400
    assert answer.status == 200, answer.body
    assert answer.headers["content-type"] == "image/png"
    assert (answer.headers["X-Image-Width"], answer.headers["X-Image-Height"]) == ("2000", "1400")
    image = Image.open(io.BytesIO(answer.body))
    assert (image.format, image.size) == ("PNG", (2000, 1400))
    # Elara's token (friendly, at 500,800 on the canvas: 0,400 in the picture; its image is not
    # in the world's file store) is a cyan disc in a dark ring, labelled "EQ" in dark letters
    assert image.getpixel((25, 430)) == (0x43, 0xDF, 0xDF)
    assert image.getpixel((50, 402)) == (0x1B, 0x1B, 0x1F)
    dark = sum(image.crop((25, 435, 75, 465)).convert("L").histogram()[:60])
    assert dark > 150, dark
    assert image.getpixel((100, 10)) == (0, 0, 0)  # a grid line every 100 px
    answer = await picture(width=500, format="jpeg", quality=0.8, showGrid=False)
    assert answer.status == 200 and answer.headers["content-type"] == "image/jpeg"
    assert (answer.headers["X-Image-Width"], answer.headers["X-Image-Height"]) == ("500", "350")
    assert Image.open(io.BytesIO(answer.body)).format == "JPEG"

    answer = await picture(sceneId=AMBUSH)
    assert answer.status == 400
    assert answer.json()["error"] == (
        "Scene 'Goblin Ambush' is not the currently viewed scene. Switch to it first."
    )
    status, _ = await api("POST", "/switch-scene", {"sceneId": AMBUSH})
    assert status == 200
    answer = await picture(sceneId=AMBUSH, height=200, hideOverlays=True)
    assert answer.status == 200 and answer.headers["X-Image-Height"] == "200"
    for query, error in (
        ({"format": "gif"}, "Invalid format 'gif': use png or jpeg"),
        ({"sceneId": "nope"}, "Scene not found"),
        ({"userId": "Aria", "sceneId": TAVERN}, "User 'Aria' does not have permission to view "
         "this scene"),
        ({"userId": "nobody"}, "User not found: nobody"),
    ):  # fmt: skip
        answer = await picture(**query)
        assert (answer.status, answer.json()["error"]) == (400, error), query
    answer = await picture(width="wide")
    assert (answer.status, answer.json()) == (400, {"error": "'width' must be a valid number"})

    # the raw background: the demo scenes have none; one that names a file answers its src
    status, body = await api("GET", "/scene/image/raw", sceneId=TAVERN)
    assert (status, body["error"]) == (400, "Scene 'The Yawning Portal' has no background image")
    status, body = await api(
        "PUT", "/scene", {"sceneId": TAVERN, "data": {"background": "maps/tavern.webp"}}
    )
    assert status == 200 and body["data"]["background"] == {"src": "maps/tavern.webp"}
    status, body = await api("GET", "/scene/image/raw", sceneId=TAVERN)
    assert (status, body["data"]) == (
        200,
        {"sceneId": TAVERN, "sceneName": "The Yawning Portal", "src": "maps/tavern.webp"},
    )
