"""GET /effects/list, GET/POST/DELETE /effects through a real relay and the embedded world over
real sockets: reply shapes, errors in the module's order, the userId gates, the events a change
sends, and a concentration effect added here driving the dnd5e concentration endpoints."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, api_for, eventually

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

ELARA = "Actor.elaraWizard00001"
GOBLIN = "Actor.goblinNpc0000001"
GOBLIN_TOKEN = "Scene.sceneTavern00001.Token.tokGoblin0000001"


def failed(status: int, body: dict[str, Any], error: str) -> None:
    assert status == 400, body
    assert list(body) == ["type", "requestId", "error"], body
    assert body["error"] == error


async def test_status_list(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/effects/list", userId="nobody-xyz")  # userId not looked at
    assert status == 200 and list(body) == ["type", "requestId", "data"]
    assert body["type"] == "get-status-effects-result"
    effects = body["data"]["effects"]
    assert len(effects) == 43 and all(list(e) == ["id", "name", "icon"] for e in effects)
    assert [e["id"] for e in effects[:4]] == [
        "dead",
        "coverHalf",
        "coverThreeQuarters",
        "coverTotal",
    ]
    half = effects[1]
    assert half["name"] == "Half Cover"
    assert half["icon"] == "systems/dnd5e/icons/svg/statuses/cover-half.svg"


async def test_add_list_and_remove_effects(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/effects", uuid=ELARA)
    assert status == 200 and body["type"] == "get-effects-result"
    assert body["data"] == {"uuid": ELARA, "effects": []}

    custom = {
        "name": "Test Effect",
        "icon": "icons/svg/aura.svg",
        "changes": [{"key": "system.attributes.ac.bonus", "mode": 2, "value": "2"}],
        "duration": {"rounds": 10},
    }
    status, body = await api("POST", "/effects", {"uuid": ELARA, "effectData": custom})
    assert status == 200 and body["type"] == "add-effect-result", body
    effect = body["data"]["effect"]
    assert body["data"]["uuid"] == ELARA
    assert list(effect) == ["id", "uuid", "name", "icon", "statuses"]
    assert effect["uuid"] == f"{ELARA}.ActiveEffect.{effect['id']}"
    assert (effect["name"], effect["icon"], effect["statuses"]) == (
        "Test Effect",
        "icons/svg/aura.svg",
        [],
    )

    # a status by a token uuid lands on the token's actor (the goblin token is unlinked: its
    # own synthetic actor, not the world goblin)
    goblin_token_actor = f"{GOBLIN_TOKEN}.Actor.goblinNpc0000001"
    status, body = await api("POST", "/effects", {"uuid": GOBLIN_TOKEN, "statusId": "prone"})
    assert status == 200 and body["data"]["uuid"] == goblin_token_actor
    assert body["data"]["effect"]["statuses"] == ["prone"]
    assert body["data"]["effect"]["name"] == "Prone"
    status, body = await api("POST", "/effects", {"uuid": goblin_token_actor, "statusId": "prone"})
    failed(status, body, "Actor 'Goblin' already has status 'prone'")
    status, body = await api("GET", "/effects", uuid=GOBLIN)
    assert status == 200 and body["data"]["effects"] == []
    status, body = await api("POST", "/effects", {"uuid": ELARA, "statusId": "sad"})
    assert status == 400 and body["error"].startswith(
        "Unknown status effect: 'sad'. Available: dead, coverHalf, coverThreeQuarters, "
    )
    assert body["error"].endswith(", transformed, unconscious")

    status, body = await api("GET", "/effects", uuid=ELARA)
    [listed] = body["data"]["effects"]
    assert list(listed) == [
        "id",
        "uuid",
        "name",
        "icon",
        "disabled",
        "duration",
        "statuses",
        "changes",
        "origin",
    ]
    assert listed["id"] == effect["id"] and listed["disabled"] is False
    assert listed["duration"]["rounds"] == 10
    assert listed["changes"] == [
        {"key": "system.attributes.ac.bonus", "mode": 2, "value": "2", "priority": None}
    ]

    status, body = await api("DELETE", "/effects", {"uuid": ELARA, "effectId": effect["id"]})
    assert status == 200 and body["type"] == "remove-effect-result"
    assert body["data"] == {"uuid": ELARA, "removedEffectId": effect["id"]}
    status, body = await api("DELETE", "/effects", uuid=GOBLIN_TOKEN, statusId="prone")  # query
    assert status == 200 and body["data"]["uuid"] == f"{GOBLIN_TOKEN}.Actor.goblinNpc0000001"
    status, body = await api("GET", "/effects", uuid=GOBLIN_TOKEN)
    assert body["data"]["effects"] == []


async def test_effect_errors_in_order(world: EmbeddedWorld, api: Any, relay: Any) -> None:
    status, body = await api("GET", "/effects")
    assert (status, body) == (400, {"error": "'uuid' is required"})
    status, body = await api("POST", "/effects", uuid=ELARA, effectData="{}")
    assert (status, body) == (400, {"error": "'effectData' must be an object"})
    status, body = await api("POST", "/effects", {"uuid": ELARA})
    failed(status, body, "Either statusId or effectData is required")
    status, body = await api("DELETE", "/effects", {"uuid": ELARA})
    failed(status, body, "Either effectId or statusId is required")
    for method, extra in (("POST", {"statusId": "prone"}), ("DELETE", {"effectId": "x"})):
        status, body = await api(method, "/effects", {"uuid": "Actor.missing000000001", **extra})
        failed(status, body, "Document not found with UUID: Actor.missing000000001")
    status, body = await api("GET", "/effects", uuid="Actor.missing000000001")
    failed(status, body, "Document not found with UUID: Actor.missing000000001")
    status, body = await api("POST", "/effects", {"uuid": ELARA, "effectData": {"icon": "x"}})
    failed(status, body, "ActiveEffect validation errors: name: may not be undefined")
    status, body = await api("DELETE", "/effects", {"uuid": ELARA, "statusId": "prone"})
    failed(status, body, "Status 'prone' not found on actor 'Elara Quill'")
    status, body = await api("DELETE", "/effects", {"uuid": ELARA, "effectId": "nope"})
    failed(status, body, "Effect with ID 'nope' not found on actor 'Elara Quill'")
    status, body = await api("POST", "/effects", {"uuid": ELARA, "statusId": "x", "userId": "zz"})
    assert status == 400 and body["error"] == "User not found: zz" and body["data"] is None
    status, body = await api("GET", "/effects", uuid=ELARA)
    assert body["data"]["effects"] == []  # no failed call left anything behind

    read_only = api_for(relay, DEFAULT_SCOPES)
    status, body = await read_only("POST", "/effects", {"uuid": ELARA, "statusId": "prone"})
    assert (status, body) == (403, {"error": "API key lacks required scope: effects:write"})


async def test_user_gates(world: EmbeddedWorld, api: Any) -> None:
    # Ben has LIMITED on Elara: may view her effects, may not change them
    status, body = await api("GET", "/effects", uuid=ELARA, userId="Ben")
    assert status == 200 and body["data"]["uuid"] == ELARA
    status, body = await api(
        "POST", "/effects", {"uuid": ELARA, "statusId": "prone", "userId": "Ben"}
    )
    failed(status, body, "User 'Ben' does not have permission to add effects to 'Elara Quill'")
    # Aria owns Elara
    status, body = await api(
        "POST", "/effects", {"uuid": ELARA, "statusId": "prone", "userId": "Aria"}
    )
    assert status == 200, body
    status, body = await api(
        "DELETE", "/effects", {"uuid": ELARA, "statusId": "prone", "userId": "Ben"}
    )
    failed(status, body, "User 'Ben' does not have permission to remove effects from 'Elara Quill'")
    # nobody but the GM sees the goblin
    status, body = await api("GET", "/effects", uuid=GOBLIN, userId="Aria")
    failed(status, body, "User 'Aria' does not have permission to view 'Goblin'")
    status, body = await api("GET", "/effects", uuid=GOBLIN, userId="Gamemaster")
    assert status == 200


async def test_concentration_through_effects(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api(
        "POST",
        "/effects",
        {
            "uuid": ELARA,
            "effectData": {"name": "Concentrating: Bless", "statuses": ["concentrating"]},
        },
    )
    assert status == 200, body
    effect_id = body["data"]["effect"]["id"]
    status, body = await api("GET", "/dnd5e/concentration", actorUuid=ELARA)
    assert status == 200 and body["data"]["isConcentrating"] is True, body
    status, body = await api("POST", "/dnd5e/concentration-save", {"actorUuid": ELARA, "damage": 4})
    assert status == 200 and body["data"]["dc"] == 10, body
    _, listed = await api("GET", "/effects", uuid=ELARA)
    ids = [e["id"] for e in listed["data"]["effects"]]
    assert ids == ([effect_id] if body["data"]["maintained"] else [])
    if body["data"]["maintained"]:
        status, body = await api("POST", "/dnd5e/break-concentration", {"actorUuid": ELARA})
        assert status == 200 and body["data"]["removedEffectId"] == effect_id, body
    _, listed = await api("GET", "/effects", uuid=ELARA)
    assert listed["data"]["effects"] == []

    # the status condition works the same way
    status, body = await api("POST", "/effects", {"uuid": ELARA, "statusId": "concentrating"})
    assert status == 200
    status_id = body["data"]["effect"]["id"]
    status, body = await api("POST", "/dnd5e/break-concentration", {"actorUuid": ELARA})
    assert status == 200 and body["data"]["removedEffectId"] == status_id
    status, body = await api("GET", "/dnd5e/concentration", actorUuid=ELARA)
    assert body["data"]["isConcentrating"] is False


async def test_effect_changes_reach_the_hook_and_actor_streams(
    relay: Any, world: EmbeddedWorld, api: Any, sse: Any
) -> None:
    key = relay.key(("events:subscribe",))
    hooks = await sse(
        relay,
        "/hooks/subscribe",
        key,
        clientId=CLIENT_ID,
        hooks="createActiveEffect,deleteActiveEffect",
    )
    actor = await sse(relay, "/actor/subscribe", key, clientId=CLIENT_ID, actorUuid=ELARA)
    for stream in (hooks, actor):
        assert (await stream.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("actor-events") == 1)
    await eventually(lambda: world.world.subscriptions.get("hooks") == 1)

    _, added = await api("POST", "/effects", {"uuid": ELARA, "statusId": "blinded"})
    effect_id = added["data"]["effect"]["id"]
    await api("DELETE", "/effects", {"uuid": ELARA, "effectId": effect_id})
    created, deleted = await hooks.events(2)
    assert created.name == "createActiveEffect" and created.data["args"][0]["_id"] == effect_id
    assert created.data["args"][0]["statuses"] == ["blinded"]
    assert deleted.name == "deleteActiveEffect" and deleted.data["args"][0]["_id"] == effect_id
    add, remove = await actor.events(2)
    assert add.name == "actor-effect-add" and add.data["effect"]["_id"] == effect_id
    assert remove.name == "actor-effect-remove" and remove.data["effectId"] == effect_id


async def test_effect_changes_apply_to_details_and_rolls(world: EmbeddedWorld, api: Any) -> None:
    """A custom effect's changes shape what the dnd5e endpoints read: AC and save bonus."""
    _, before = await api("GET", "/dnd5e/get-actor-details", actorUuid=ELARA, details=["stats"])
    ac = before["data"]["stats"]["ac"]
    blessing = {
        "name": "Shield of Faith and Bless",
        "changes": [
            {"key": "system.attributes.ac.bonus", "mode": 2, "value": "2"},
            {"key": "system.bonuses.abilities.save", "mode": 2, "value": "1d4"},
        ],
        "duration": {"seconds": 600},
    }
    _, added = await api("POST", "/effects", {"uuid": ELARA, "effectData": blessing})
    _, after = await api("GET", "/dnd5e/get-actor-details", actorUuid=ELARA, details=["stats"])
    assert after["data"]["stats"]["ac"] == ac + 2
    _, save = await api("POST", "/dnd5e/ability-save", {"actorUuid": ELARA, "ability": "wis"})
    assert "1d4" in save["data"]["formula"], save
    _, stored = await api("GET", "/get", uuid=ELARA)
    assert stored["data"]["system"]["attributes"]["ac"]["bonus"] == ""  # the source is untouched
    await api("DELETE", "/effects", {"uuid": ELARA, "effectId": added["data"]["effect"]["id"]})
    _, again = await api("GET", "/dnd5e/get-actor-details", actorUuid=ELARA, details=["stats"])
    assert again["data"]["stats"]["ac"] == ac


async def test_effect_changes_apply_to_items_and_death_saves(
    world: EmbeddedWorld, api: Any
) -> None:
    """The same changes reach item use (the attack-type bonuses) and death saves; the stored
    actor never receives them."""
    brann = "Actor.brannFighter0001"
    blessing = {
        "name": "Blessed Blade",
        "changes": [
            {"key": "system.bonuses.mwak.attack", "mode": 2, "value": "2"},
            {"key": "system.bonuses.mwak.damage", "mode": 2, "value": "1"},
            {"key": "system.bonuses.abilities.save", "mode": 2, "value": "1d4"},
        ],
    }
    status, body = await api("POST", "/effects", {"uuid": brann, "effectData": blessing})
    assert status == 200, body
    status, body = await api(
        "POST", "/dnd5e/use-item", {"actorUuid": brann, "abilityName": "Longsword"}
    )
    assert status == 200, body
    assert body["data"]["roll"]["formula"] == "1d20 + 3 + 2 + 2"
    _, chat = await api("GET", "/chat", limit=1)
    rolls = chat["data"]["messages"][0]["rolls"]
    if len(rolls) > 1:  # the attack hit (no target: anything but a fumble): damage with +1
        assert rolls[1]["formula"].endswith(" + 1"), rolls
    await api("POST", "/kill", uuid=brann)
    status, body = await api("POST", "/dnd5e/death-save", {"actorUuid": brann})
    assert status == 200 and body["data"]["formula"] == "1d20 + 1d4", body
    _, stored = await api("GET", "/get", uuid=brann)
    assert stored["data"]["system"]["bonuses"]["mwak"] == {"attack": "", "damage": ""}
