"""Utility actions in-process: select/selected, players, world-info."""

from __future__ import annotations

from typing import Any

from tests.support.world import call

from vttrelay.world.runtime.world import World

SCENE = "Scene.sceneTavern00001"
USER_KEYS = ["id", "name", "role", "isGM", "active", "color", "avatar"]


async def test_select_by_uuid_name_data_all_and_selected(world: World) -> None:
    reply = await call(world, "select", uuids=[f"{SCENE}.Token.tokElara00000001"])
    assert reply == {
        "type": "select-result",
        "requestId": "select_1",
        "success": True,
        "count": 1,
        "message": "1 entities selected",
        "selected": [f"{SCENE}.Token.tokElara00000001"],
    }
    reply = await call(world, "select", name="goblin")
    assert reply["selected"] == [f"{SCENE}.Token.tokGoblin0000001"]
    got = await call(world, "selected")
    assert got == {
        "type": "selected-result",
        "requestId": "selected_1",
        "success": True,
        "selected": [
            {
                "tokenUuid": f"{SCENE}.Token.tokElara00000001",
                "actorUuid": "Actor.elaraWizard00001",
            },
            {
                "tokenUuid": f"{SCENE}.Token.tokGoblin0000001",
                "actorUuid": f"{SCENE}.Token.tokGoblin0000001.Actor.goblinNpc0000001",
            },
        ],
    }
    # data criteria: token keys and actor. keys, strict equality; overwrite replaces
    reply = await call(world, "select", data={"actorLink": False, "name": "Wolf"}, overwrite=True)
    assert reply["selected"] == [f"{SCENE}.Token.tokWolf000000001"]
    reply = await call(world, "select", data={"actor.name": "Brann Stoneheart"}, overwrite=True)
    assert reply["selected"] == [f"{SCENE}.Token.tokBrann00000001"]
    assert [s["tokenUuid"] for s in (await call(world, "selected"))["selected"]] == [
        f"{SCENE}.Token.tokBrann00000001"
    ]
    everything = await call(world, "select", all=True, overwrite=True)
    assert everything["count"] == 7 and everything["message"] == "7 entities selected"


async def test_select_matches_only_what_is_named(world: World) -> None:
    params: dict[str, Any]
    for params in (
        {"data": {}},
        {"name": "Nobody"},
        {"uuids": ["Scene.x.Token.y"]},
        {"data": {"actorLink": 1}},
    ):
        reply = await call(world, "select", **params)
        assert reply == {
            "type": "select-result",
            "requestId": "select_1",
            "success": False,
            "error": "No matching entities found",
        }, params
    assert (await call(world, "selected"))["selected"] == []


async def test_select_and_selected_are_gm_only(world: World) -> None:
    reply = await call(world, "select", all=True, userId="Aria")
    assert reply["error"] == "User 'Aria' must be a GM to select tokens"
    assert reply["success"] is False
    reply = await call(world, "selected", userId="Ben")
    assert reply["error"] == "User 'Ben' must be a GM to get selected tokens"
    assert (await call(world, "select", all=True, userId="Gamemaster"))["count"] == 7


async def test_no_active_scene(world: World) -> None:
    with world.store.transaction() as tx:
        scene = tx.get("Scene", "sceneTavern00001")
        assert scene is not None
        scene["active"] = False
        tx.put("Scene", scene)
    assert (await call(world, "select", all=True))["error"] == "No active scene found"
    assert (await call(world, "selected"))["error"] == "No active scene found"
    assert (await call(world, "world-info"))["data"]["activeScene"] is None


async def test_players(world: World) -> None:
    world.online.add("gmUser0000000001")
    reply = await call(world, "players")
    assert list(reply) == ["type", "requestId", "users"]
    users = reply["users"]
    assert all(list(u) == USER_KEYS for u in users)
    assert users[0] == {
        "id": "gmUser0000000001",
        "name": "Gamemaster",
        "role": 4,
        "isGM": True,
        "active": True,
        "color": "#161068",
        "avatar": "icons/svg/mystery-man.svg",
    }
    assert [(u["name"], u["isGM"], u["active"]) for u in users[1:]] == [
        ("Aria", False, False),
        ("Ben", False, False),
    ]
    assert (await call(world, "players", userId="Aria")) == {
        "type": "players-result",
        "requestId": "players_1",
        "users": [],
    }
    assert len((await call(world, "players", userId="Gamemaster"))["users"]) == 3
    assert (await call(world, "players", userId="x"))["error"] == "User not found: x"


async def test_world_info(world: World) -> None:
    reply = await call(world, "world-info", userId="Ben")
    assert list(reply) == ["type", "requestId", "data"]
    data = reply["data"]
    assert list(data) == [
        "world",
        "system",
        "foundryVersion",
        "modules",
        "users",
        "activeScene",
    ]
    assert data["world"] == {"id": "vttrelay-demo", "title": "vttrelay Demo World"}
    assert data["system"] == {
        "id": "dnd5e",
        "title": "Dungeons & Dragons Fifth Edition",
        "version": "5.0.4",
    }
    assert data["foundryVersion"] == "14.363"
    assert all(list(m) == ["id", "title", "version", "active"] for m in data["modules"])
    assert all(list(u) == USER_KEYS for u in data["users"]) and len(data["users"]) == 3
    assert data["activeScene"] == {"id": "sceneTavern00001", "name": "The Yawning Portal"}
