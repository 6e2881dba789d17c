"""Effect durations end to end: effects lasting rounds or turns, added during a combat, are
deleted when next-turn / next-round carry the combat past their end, on world actors and on an
unlinked token's own actor, with the matching deleteActiveEffect and actor-stream events."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

TAVERN = "Scene.sceneTavern00001.Token."
ELARA = "Actor.elaraWizard00001"
ELARA_TOKEN = TAVERN + "tokElara00000001"
BRANN_TOKEN = TAVERN + "tokBrann00000001"
GOBLIN_TOKEN = TAVERN + "tokGoblin0000001"


async def _add(api: Any, uuid: str, name: str, **duration: int) -> str:
    status, body = await api(
        "POST", "/effects", {"uuid": uuid, "effectData": {"name": name, "duration": duration}}
    )
    assert status == 200, body
    effect_id: str = body["data"]["effect"]["id"]
    return effect_id


async def _names(api: Any, uuid: str) -> list[str]:
    status, body = await api("GET", "/effects", uuid=uuid)
    assert status == 200, body
    return [e["name"] for e in body["data"]["effects"]]


async def test_effects_expire_as_the_combat_advances(
    relay: Any, world: EmbeddedWorld, api: Any, sse: Any
) -> None:
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    hooks = await sse(
        relay, "/hooks/subscribe", key, clientId=CLIENT_ID, hooks="deleteActiveEffect"
    )
    actor = await sse(relay, "/actor/subscribe", key, clientId=CLIENT_ID, actorUuid=ELARA)
    for stream in (hooks, actor):
        assert (await stream.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("hooks") == 1)
    await eventually(lambda: world.world.subscriptions.get("actor-events") == 1)

    status, body = await api(
        "POST",
        "/start-encounter",
        {"tokenUuids": [ELARA_TOKEN, BRANN_TOKEN, GOBLIN_TOKEN], "rollAll": True},
    )
    assert status == 200, body
    assert (body["encounter"]["round"], body["encounter"]["turn"]) == (1, 0)
    bless = await _add(api, ELARA, "Bless", rounds=1)
    await _add(api, ELARA, "Mage Armor", rounds=10)
    await _add(api, ELARA, "Inspired")  # no duration: stays
    shield = await _add(api, GOBLIN_TOKEN, "Shield", turns=1)
    status, body = await api("GET", "/effects", uuid=ELARA)
    started = body["data"]["effects"][0]["duration"]
    assert (started["startRound"], started["startTurn"], started["rounds"]) == (1, 0, 1)

    await api("POST", "/next-turn")  # round 1, turn 1: the goblin's one-turn Shield ends
    assert await _names(api, GOBLIN_TOKEN) == []
    assert await _names(api, ELARA) == ["Bless", "Mage Armor", "Inspired"]
    await api("POST", "/next-turn")  # round 1, turn 2
    assert await _names(api, ELARA) == ["Bless", "Mage Armor", "Inspired"]
    status, body = await api("POST", "/next-turn")  # round 2, turn 0: a round has passed
    assert (body["currentRound"], body["currentTurn"]) == (2, 0)
    assert await _names(api, ELARA) == ["Mage Armor", "Inspired"]
    await api("POST", "/last-round")  # going back restores nothing
    assert await _names(api, ELARA) == ["Mage Armor", "Inspired"]
    await api("POST", "/next-round")
    await api("POST", "/next-round")
    assert await _names(api, ELARA) == ["Mage Armor", "Inspired"]

    token_shield, world_bless = await hooks.events(2)  # the token's own actor's effect too
    assert [token_shield.name, world_bless.name] == ["deleteActiveEffect"] * 2
    assert token_shield.data["args"][0]["_id"] == shield
    assert world_bless.data["args"][0]["_id"] == bless
    while (event := await actor.event()).name != "actor-effect-remove":
        pass
    assert event.data["effectId"] == bless
    # the world goblin never had the token's Shield, and nothing else was removed
    assert await _names(api, "Actor.goblinNpc0000001") == []
