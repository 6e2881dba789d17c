"""Issue 20 item 1: the canvas batch actions cost time linear in their input, a call and a scene
have bounds on how many documents they create and hold (clear errors, nothing stored), a scene
already past the bound (written before it existed) can be cut down in one call, and no other
route (PUT /scene, /update) grows a scene's collections past the bound either."""

from __future__ import annotations

from typing import Any

from tests.support.world import call

from vttrelay.world.rules import bounds
from vttrelay.world.rules.canvas import MAX_BATCH
from vttrelay.world.runtime.world import World

SCENE = "sceneTavern00001"


def walls(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"c": [i, 0, i, 100]} for i in range(start, start + n)]


def scene_walls(world: World) -> list[dict[str, Any]]:
    with world.store.transaction() as tx:
        scene = tx.get("Scene", SCENE)
    assert scene is not None
    return list(scene.get("walls") or [])


def overfull_scene(world: World, n: int) -> list[str]:
    """Give the scene `n` walls directly in the store (as a world from before the bounds could
    hold them); their ids."""
    with world.store.transaction() as tx:
        scene = tx.get("Scene", SCENE)
        assert scene is not None
        scene["walls"] = [{"_id": f"w{i:015d}", "c": [i, 0, i, 100]} for i in range(n)]
        tx.put("Scene", scene)
    return [w["_id"] for w in scene["walls"]]


async def create(world: World, data: Any, doc_type: str = "walls", **extra: Any) -> Any:
    class_name = {"walls": "Wall", "lights": "AmbientLight", "tokens": "Token"}[doc_type]
    return await call(
        world,
        "create-canvas-document",
        documentType=doc_type,
        className=class_name,
        data=data,
        sceneId=SCENE,
        **extra,
    )


async def delete(world: World, **params: Any) -> Any:
    return await call(
        world,
        "delete-canvas-document",
        documentType="walls",
        className="Wall",
        sceneId=SCENE,
        **params,
    )


async def test_a_full_batch_is_created_with_distinct_ids(world: World) -> None:
    reply = await create(world, walls(MAX_BATCH))
    assert "error" not in reply, reply
    ids = {w["_id"] for w in reply["data"]}
    assert len(ids) == MAX_BATCH
    assert len(scene_walls(world)) == MAX_BATCH


async def test_a_batch_past_the_bound_is_refused_and_nothing_is_stored(world: World) -> None:
    reply = await create(world, walls(2 * MAX_BATCH))
    assert reply == {
        "type": "create-canvas-document-result",
        "requestId": "create-canvas-document_1",
        "error": f"At most {MAX_BATCH} documents can be created in one call",
    }
    assert scene_walls(world) == []


async def test_a_full_scene_takes_no_more_documents(world: World) -> None:
    assert "error" not in await create(world, walls(bounds.MAX_EMBEDDED))
    reply = await create(world, walls(1))
    assert reply["error"] == (
        f"Scene {SCENE} holds {bounds.MAX_EMBEDDED} walls: it can hold at most "
        f"{bounds.MAX_EMBEDDED}, so 1 more can't be created"
    )
    assert len(scene_walls(world)) == bounds.MAX_EMBEDDED
    # other collections of the same scene are bounded on their own
    assert "error" not in await create(world, {"x": 600, "y": 600}, "lights")


async def test_a_duplicate_id_in_a_batch_is_refused_whole(world: World) -> None:
    batch = [*walls(3), {"_id": "sameWallId000001", "c": [1, 2, 3, 4]}]
    batch.append({"_id": "sameWallId000001", "c": [5, 6, 7, 8]})
    reply = await create(world, batch)
    assert reply["error"] == f"Wall sameWallId000001 already exists in Scene {SCENE}"
    assert scene_walls(world) == []


async def test_an_overfull_scene_is_repaired_in_two_calls(world: World) -> None:
    ids = overfull_scene(world, 2 * MAX_BATCH)
    # it takes no new wall...
    assert "can't be created" in (await create(world, walls(1)))["error"]
    # ...but can shrink, even while still past the bound
    reply = await delete(world, documentIds=ids[:MAX_BATCH])
    assert reply == {
        "type": "delete-canvas-document-result",
        "requestId": "delete-canvas-document_1",
        "sceneId": SCENE,
        "documentType": "walls",
        "success": True,
    }
    assert [w["_id"] for w in scene_walls(world)] == ids[MAX_BATCH:]
    assert "error" not in await delete(world, documentIds=ids[MAX_BATCH : 2 * MAX_BATCH - 5])
    assert [w["_id"] for w in scene_walls(world)] == ids[-5:]
    assert "error" not in await create(world, walls(1))  # and takes walls again


async def test_a_shrinking_update_of_an_overfull_scene_is_allowed(world: World) -> None:
    ids = overfull_scene(world, bounds.MAX_EMBEDDED + 10)
    reply = await call(
        world,
        "update-canvas-document",
        documentType="walls",
        className="Wall",
        sceneId=SCENE,
        documentId=ids[0],
        data={"door": 1},
    )
    assert "error" not in reply, reply
    reply = await call(world, "update-scene", sceneId=SCENE, data={"walls": [{"c": [1, 1, 2, 2]}]})
    assert reply["error"] == (
        f"Scene validation errors:\n  walls: at most {bounds.MAX_EMBEDDED} documents (this "
        f"change would make {bounds.MAX_EMBEDDED + 11})"
    )
    assert len(scene_walls(world)) == bounds.MAX_EMBEDDED + 10


async def test_deleting_several_is_all_or_nothing(world: World) -> None:
    made = (await create(world, walls(3)))["data"]
    reply = await delete(world, documentIds=[made[0]["_id"], "noSuchWall000001"])
    assert reply == {
        "type": "delete-canvas-document-result",
        "requestId": "delete-canvas-document_1",
        "success": False,
        "error": "Document not found: noSuchWall000001",
    }
    assert len(scene_walls(world)) == 3
    for bad in ([], [1, 2], "abc"):
        reply = await delete(world, documentIds=bad)
        assert reply["error"] == "documentIds must be a non-empty array of document ids"
    reply = await delete(world, documentIds=["x"] * (MAX_BATCH + 1))
    assert reply["error"] == f"At most {MAX_BATCH} documents can be deleted in one call"
    assert len(scene_walls(world)) == 3
    assert "error" not in await delete(world, documentIds=[made[1]["_id"], made[1]["_id"]])
    assert [w["_id"] for w in scene_walls(world)] == [made[0]["_id"], made[2]["_id"]]
    assert "error" not in await delete(world, documentId=made[0]["_id"])
    assert [w["_id"] for w in scene_walls(world)] == [made[2]["_id"]]


async def test_other_routes_do_not_grow_a_scene_past_the_bound(world: World) -> None:
    reply = await call(
        world,
        "update",
        uuid=f"Scene.{SCENE}",
        data={"walls": walls(bounds.MAX_EMBEDDED + 1)},
    )
    assert reply["error"].startswith("Scene validation errors:\n  walls: at most 10000")
    reply = await call(
        world, "create-scene", data={"name": "Big", "lights": [{"x": 1, "y": 1}] * 10_001}
    )
    assert reply["error"].startswith("Scene validation errors:\n  lights: at most 10000")
    assert scene_walls(world) == []


async def test_drawn_radii_and_numbers_are_bounded_on_every_route(world: World) -> None:
    reply = await create(world, {"x": 600, "y": 600, "config": {"dim": 10**9}}, "lights")
    assert reply["error"] == (
        "AmbientLight validation errors:\n  config.dim: must be a number from 0 to 100000"
    )
    reply = await create(world, {"c": [0, 0, 1e12, 5]})
    assert reply["error"] == (
        "Wall validation errors:\n  c: each coordinate must be between -10000000 and 10000000"
    )
    light = (await create(world, {"x": 600, "y": 600}, "lights"))["data"][0]
    reply = await call(
        world,
        "update-scene",
        sceneId=SCENE,
        data={"lights": [{"_id": light["_id"], "config": {"bright": -1}}]},
    )
    assert reply["error"] == (
        "AmbientLight validation errors:\n  config.bright: must be a number from 0 to 100000"
    )
    reply = await call(
        world,
        "update",
        uuid=f"Scene.{SCENE}.AmbientLight.{light['_id']}",
        data={"config.dim": 1e300},
    )
    assert "config.dim: must be a number from 0 to 100000" in reply["error"]
    with world.store.transaction() as tx:
        scene = tx.get("Scene", SCENE)
    assert scene is not None and scene["lights"][0]["config"]["dim"] == 0
