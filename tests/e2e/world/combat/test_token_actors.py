"""Unlinked tokens end to end: each goblin token of the demo "Goblin Ambush" scene has its own
synthetic actor (the world goblin plus the token's delta). Reads through a token or a token
actor uuid see it; kills, HP changes, updates and conditions through them change only that
token, never the world actor or the other goblin; the combat tracker's defeated check reads it;
its changes reach the hooks and the actor stream under the token actor uuid.
"""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

AMBUSH = "sceneAmbush00001"
GOBLIN = "Actor.goblinNpc0000001"
GOBLIN_1 = f"Scene.{AMBUSH}.Token.ambGoblin0000001"
GOBLIN_2 = f"Scene.{AMBUSH}.Token.ambGoblin0000002"
ACTOR_1 = f"{GOBLIN_1}.Actor.goblinNpc0000001"
ACTOR_2 = f"{GOBLIN_2}.Actor.goblinNpc0000001"


async def _hp(api: Any, uuid: str) -> int:
    status, body = await api("GET", "/get", uuid=uuid)
    assert status == 200, body
    value: int = body["data"]["system"]["attributes"]["hp"]["value"]
    return value


async def _statuses(api: Any, uuid: str) -> list[str]:
    status, body = await api("GET", "/effects", uuid=uuid)
    assert status == 200, body
    return [s for e in body["data"]["effects"] for s in e["statuses"]]


async def test_each_unlinked_token_has_its_own_actor(api: Any, world: EmbeddedWorld) -> None:
    status, body = await api("POST", "/switch-scene", {"sceneId": AMBUSH})
    assert status == 200, body
    status, body = await api(
        "POST", "/start-encounter", {"tokenUuids": [GOBLIN_1, GOBLIN_2], "rollAll": True}
    )
    assert status == 200, body
    combatants = body["encounter"]["combatants"]
    assert sorted(c["actorUuid"] for c in combatants) == [ACTOR_1, ACTOR_2]

    # /kill on one goblin token: that goblin alone is at 0 HP, dead and defeated
    status, body = await api("POST", "/kill", uuid=GOBLIN_1)
    assert status == 200, body
    assert (await _hp(api, ACTOR_1), await _hp(api, ACTOR_2), await _hp(api, GOBLIN)) == (0, 7, 7)
    assert await _statuses(api, GOBLIN_1) == ["dead"]
    assert await _statuses(api, GOBLIN_2) == [] and await _statuses(api, GOBLIN) == []
    _, body = await api("GET", "/encounters")
    [encounter] = body["encounters"]
    defeated = {c["tokenUuid"]: c["defeated"] for c in encounter["combatants"]}
    assert defeated == {GOBLIN_1: True, GOBLIN_2: False}
    # the kill is kept in the token's delta, not in the world actor
    _, body = await api("GET", "/get", uuid=GOBLIN_1)
    assert body["data"]["delta"]["system"] == {"attributes": {"hp": {"value": 0}}}
    assert [e["statuses"] for e in body["data"]["delta"]["effects"]] == [["dead"]]

    # HP changes and updates through the token actor uuid (and through the selection)
    status, body = await api(
        "POST", "/decrease", {"attribute": "system.attributes.hp.value", "amount": 3}, uuid=ACTOR_2
    )
    assert status == 200 and body["results"] == [
        {"uuid": ACTOR_2, "attribute": "system.attributes.hp.value", "oldValue": 7, "newValue": 4}
    ]
    await api("POST", "/select", {"uuids": [GOBLIN_2], "overwrite": True})
    status, body = await api(
        "POST",
        "/increase",
        {"attribute": "system.attributes.hp.value", "amount": 1, "selected": True},
    )
    assert status == 200 and body["results"][0]["uuid"] == ACTOR_2
    status, body = await api("PUT", "/update", {"data": {"name": "Goblin Boss"}}, uuid=ACTOR_2)
    assert status == 200, body
    assert body["entity"][0]["name"] == "Goblin Boss"
    _, world_goblin = await api("GET", "/get", uuid=GOBLIN)
    assert world_goblin["data"]["name"] == "Goblin"
    assert world_goblin["data"]["system"]["attributes"]["hp"]["value"] == 7

    # the dnd5e routes read and change the token's actor too
    status, body = await api("POST", "/effects", {"uuid": GOBLIN_2, "statusId": "prone"})
    assert status == 200 and body["data"]["uuid"] == ACTOR_2
    status, body = await api(
        "GET", "/dnd5e/get-actor-details", actorUuid=ACTOR_2, details=["stats", "conditions"]
    )
    assert status == 200, body
    data = body["data"]
    assert data["uuid"] == ACTOR_2 and data["stats"]["hp"]["value"] == 5
    assert data["conditions"] == [{"id": "prone", "name": "Prone"}]
    status, body = await api(
        "GET", "/dnd5e/get-actor-details", actorUuid=GOBLIN, details=["stats", "conditions"]
    )
    assert body["data"]["stats"]["hp"]["value"] == 7 and body["data"]["conditions"] == []
    status, body = await api(
        "POST", "/dnd5e/ability-save", {"actorUuid": ACTOR_2, "ability": "dex"}
    )
    assert status == 200 and body["data"]["actorUuid"] == ACTOR_2

    # killing the world actor marks each of its tokens' own actors dead
    status, body = await api("POST", "/kill", uuid=GOBLIN)
    assert status == 200, body
    assert body["results"][0]["message"].endswith("applied to 2 tokens")
    assert await _statuses(api, GOBLIN_2) == ["prone", "dead"]
    assert await _statuses(api, GOBLIN_1) == []  # a toggle: the dead goblin loses it
    assert await _hp(api, GOBLIN) == 0 and await _hp(api, ACTOR_2) == 5  # its own HP wins

    # a token's actor is not a world document to delete
    status, body = await api("DELETE", "/delete", uuid=ACTOR_2)
    assert status == 400 and "delete the token instead" in body["error"]
    assert await _hp(api, ACTOR_2) == 5


async def test_a_token_actors_changes_reach_the_actor_stream_and_hooks(
    relay: Any, world: EmbeddedWorld, api: Any, sse: Any
) -> None:
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    hooks = await sse(
        relay,
        "/hooks/subscribe",
        key,
        clientId=CLIENT_ID,
        hooks="createActiveEffect,deleteActiveEffect,updateActor",
    )
    stream = await sse(relay, "/actor/subscribe", key, clientId=CLIENT_ID, actorUuid=ACTOR_1)
    for each in (hooks, stream):
        assert (await each.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("hooks") == 1)
    await eventually(lambda: world.world.subscriptions.get("actor-events") == 1)

    status, body = await api("POST", "/effects", {"uuid": GOBLIN_1, "statusId": "prone"})
    assert status == 200, body
    effect_id = body["data"]["effect"]["id"]
    await api(
        "POST", "/decrease", {"attribute": "system.attributes.hp.value", "amount": 2}, uuid=ACTOR_1
    )
    await api("DELETE", "/effects", {"uuid": GOBLIN_1, "effectId": effect_id})
    created, updated, deleted = await hooks.events(3)
    assert created.name == "createActiveEffect" and created.data["args"][0]["_id"] == effect_id
    assert updated.name == "updateActor"
    assert updated.data["args"][1] == {
        "system": {"attributes": {"hp": {"value": 5}}},
        "_id": "goblinNpc0000001",
    }
    assert deleted.name == "deleteActiveEffect" and deleted.data["args"][0]["_id"] == effect_id
    add, update, remove = await stream.events(3)
    assert [e.name for e in (add, update, remove)] == [
        "actor-effect-add",
        "actor-update",
        "actor-effect-remove",
    ]
    assert all(e.data["actorUuid"] == ACTOR_1 for e in (add, update, remove))
