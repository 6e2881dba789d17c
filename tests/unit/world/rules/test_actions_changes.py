"""dnd5e actions that change documents, in-process over the real SQLite demo world: details,
charges, experience, equipment, attunement, currency, spell preparation. Failed calls change
nothing."""

from __future__ import annotations

from typing import Any

from tests.support.world import call, get_actor, item_of

from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"
CORVIN = "Actor.corvinWarlock001"
PIP = "Actor.pipMonk000000001"


async def test_get_actor_details(world: World) -> None:
    reply = await call(
        world,
        "get-actor-details",
        actorUuid=ELARA,
        details=["resources", "items", "features", "spells"],
    )
    data = reply["data"]
    assert list(data) == ["uuid", "resources", "spells", "spellSlots", "items", "features"]
    assert data["spellSlots"] == {
        "spell1": {"value": 4, "max": 4},
        "spell2": {"value": 2, "max": 2},
    }
    assert "Magic Missile" in [s["name"] for s in data["spells"]]
    reply = await call(world, "get-actor-details", actorUuid=ELARA, details=["items"])
    assert list(reply["data"]) == ["uuid", "items"]
    reply = await call(world, "get-actor-details", actorUuid=ELARA, details=[])
    assert reply["error"] == "details array is required and cannot be empty"
    reply = await call(world, "get-actor-details", details=["items"])
    assert reply["error"] == "actorUuid is required"
    reply = await call(world, "get-actor-details", actorUuid="Actor.x", details=["items"])
    assert reply["error"] == "Actor not found with UUID: Actor.x"
    reply = await call(
        world,
        "get-actor-details",
        actorUuid="Actor.wolfNpc000000001",
        details=["stats"],
        userId="Aria",
    )
    assert reply["error"] == "User 'Aria' does not have permission to view actor 'Wolf'"
    # a token uuid resolves to its actor
    token = "Scene.sceneTavern00001.Token.tokCorvin0000001"
    reply = await call(world, "get-actor-details", actorUuid=token, details=["stats"], userId="Ben")
    assert reply["data"]["uuid"] == token and reply["data"]["stats"]["uuid"] == CORVIN


async def test_modify_item_charges(world: World) -> None:
    reply = await call(
        world, "modify-item-charges", actorUuid=ELARA, itemName="waterskin", amount=-1
    )
    skin = item_of(get_actor(world, "elaraWizard00001"), "Waterskin")
    assert reply["data"] == {
        "itemUuid": f"{ELARA}.Item.{skin['_id']}",
        "oldCharges": 4,
        "newCharges": 3,
    }
    assert skin["system"]["uses"]["spent"] == 1
    wand = item_of(get_actor(world, "elaraWizard00001"), "Wand of Magic Missiles")
    reply = await call(
        world,
        "modify-item-charges",
        actorUuid=ELARA,
        itemUuid=f"{ELARA}.Item.{wand['_id']}",
        amount=-20,
    )
    assert (reply["data"]["oldCharges"], reply["data"]["newCharges"]) == (7, 0)
    reply = await call(world, "modify-item-charges", actorUuid=ELARA, itemName="Dagger", amount=1)
    assert (reply["data"]["oldCharges"], reply["data"]["newCharges"]) == (0, 0)
    errors: list[tuple[dict[str, Any], str]] = [
        ({"itemName": "x", "amount": 1}, "actorUuid is required"),
        ({"actorUuid": ELARA, "amount": 1}, "itemUuid or itemName is required"),
        ({"actorUuid": ELARA, "itemName": "x", "amount": "1"}, "amount must be a number"),
        (
            {"actorUuid": "Actor.none", "itemName": "x", "amount": 1},
            "Actor not found with UUID: Actor.none",
        ),
        (
            {"actorUuid": ELARA, "itemName": "x", "amount": 1, "userId": "Ben"},
            "User 'Ben' does not have permission to modify item charges on 'Elara Quill'",
        ),
        (
            {"actorUuid": ELARA, "itemName": "Nothing", "amount": 1},
            "Item not found on actor Elara Quill",
        ),
    ]
    for params, error in errors:
        reply = await call(world, "modify-item-charges", **params)
        assert reply["error"] == error


async def test_modify_experience(world: World) -> None:
    reply = await call(world, "modify-experience", actorUuid=BRANN, amount=100)
    assert reply["data"] == {"actorUuid": BRANN, "oldXp": 900, "newXp": 1000}
    reply = await call(world, "modify-experience", actorUuid=BRANN, amount=-100, userId="Aria")
    assert reply["data"]["newXp"] == 900
    assert get_actor(world, "brannFighter0001")["system"]["details"]["xp"]["value"] == 900
    reply = await call(world, "modify-experience", actorUuid=BRANN, amount=-1000)
    assert "below 0" in reply["error"]
    reply = await call(world, "modify-experience", actorUuid="Actor.goblinNpc0000001", amount=10)
    assert reply["data"] == {"actorUuid": "Actor.goblinNpc0000001", "oldXp": 50, "newXp": 60}
    assert (await call(world, "modify-experience", amount=5))["error"] == (
        "Either actorUuid or selected must be provided"
    )
    assert (await call(world, "modify-experience", selected=True))["error"] == (
        "amount must be a number"
    )
    assert (await call(world, "modify-experience", selected=True, amount=5))["error"] == (
        "No token selected"
    )
    assert (await call(world, "modify-experience", actorUuid="Actor.q", amount=5))["error"] == (
        "Actor not found"
    )
    reply = await call(world, "modify-experience", actorUuid=BRANN, amount=5, userId="Ben")
    assert reply["error"] == (
        "User 'Ben' does not have permission to modify experience on 'Brann Stoneheart'"
    )
    await call(world, "select", uuids=["Scene.sceneTavern00001.Token.tokPip0000000001"])
    reply = await call(world, "modify-experience", selected=True, amount=50)
    assert reply["data"] == {"actorUuid": PIP, "oldXp": 900, "newXp": 950}


async def test_equip_and_attune(world: World) -> None:
    reply = await call(
        world, "equip-item", actorName="Pip Tealeaf", itemName="dart", equipped=False
    )
    dart = item_of(get_actor(world, "pipMonk000000001"), "Dart")
    assert reply["data"] == {
        "actorUuid": PIP,
        "itemUuid": f"{PIP}.Item.{dart['_id']}",
        "itemName": "Dart",
        "equipped": False,
    }
    assert dart["system"]["equipped"] is False
    reply = await call(
        world,
        "attune-item",
        actorUuid=PIP,
        itemUuid=f"{PIP}.Item.{dart['_id']}",
        attuned=True,
    )
    assert reply["data"]["attuned"] is True
    assert item_of(get_actor(world, "pipMonk000000001"), "Dart")["system"]["attuned"] is True
    checks: list[tuple[dict[str, Any], str]] = [
        ({"itemName": "Dart", "equipped": True}, "actorUuid or actorName is required"),
        ({"actorUuid": PIP, "equipped": True}, "itemUuid or itemName is required"),
        (
            {"actorUuid": PIP, "itemName": "Nope", "equipped": True},
            "Item not found on actor Pip Tealeaf: Nope",
        ),
        ({"actorUuid": PIP, "itemName": "Dart"}, "equipped must be a boolean"),
        (
            {"actorUuid": PIP, "itemName": "Dart", "equipped": True, "userId": "Aria"},
            "User 'Aria' does not have permission to modify items on 'Pip Tealeaf'",
        ),
    ]
    for params, error in checks:
        assert (await call(world, "equip-item", **params))["error"] == error
    # unequipping Brann's shield lowers his AC
    await call(world, "equip-item", actorUuid=BRANN, itemName="Shield", equipped=False)
    reply = await call(world, "get-actor-details", actorUuid=BRANN, details=["stats"])
    assert reply["data"]["stats"]["ac"] == 17


def _gp(world: World, actor_id: str) -> dict[str, Any]:
    return get_actor(world, actor_id)["system"]["currency"]


async def test_transfer_currency(world: World) -> None:
    reply = await call(
        world,
        "transfer-currency",
        sourceActorUuid=ELARA,
        targetActorName="Brann Stoneheart",
        currency={"gp": 5, "cp": 10, "sp": 0, "bogus": 3},
    )
    assert reply["data"] == {
        "sourceActorUuid": ELARA,
        "targetActorUuid": BRANN,
        "transferred": {"gp": 5, "cp": 10, "sp": 0, "bogus": 3},
        "sourceBalance": {"pp": 0, "gp": 20, "ep": 0, "sp": 8, "cp": 0},
        "targetBalance": {"pp": 0, "gp": 15, "ep": 0, "sp": 15, "cp": 10},
    }
    before = (_gp(world, "elaraWizard00001"), _gp(world, "brannFighter0001"))
    reply = await call(
        world,
        "transfer-currency",
        sourceActorUuid=ELARA,
        targetActorUuid=BRANN,
        currency={"gp": 1, "pp": 1},
    )
    assert reply["error"] == "Insufficient pp: Elara Quill has 0, needs 1"
    assert (_gp(world, "elaraWizard00001"), _gp(world, "brannFighter0001")) == before
    checks: list[tuple[dict[str, Any], str]] = [
        (
            {"targetActorUuid": BRANN, "currency": {"gp": 1}},
            "sourceActorUuid or sourceActorName is required",
        ),
        (
            {"sourceActorUuid": ELARA, "currency": {"gp": 1}},
            "targetActorUuid or targetActorName is required",
        ),
        ({"sourceActorUuid": ELARA, "targetActorUuid": BRANN}, "currency object is required"),
        (
            {"sourceActorUuid": "Actor.no", "targetActorUuid": BRANN, "currency": {"gp": 1}},
            "Actor not found: Actor.no",
        ),
        (
            {
                "sourceActorUuid": ELARA,
                "targetActorUuid": CORVIN,
                "currency": {"gp": 1},
                "userId": "Ben",
            },
            "User 'Ben' does not have permission to transfer currency from 'Elara Quill'",
        ),
        (
            {
                "sourceActorUuid": ELARA,
                "targetActorUuid": CORVIN,
                "currency": {"gp": 1},
                "userId": "Aria",
            },
            "User 'Aria' does not have permission to transfer currency to 'Corvin Ash'",
        ),
    ]
    for params, error in checks:
        assert (await call(world, "transfer-currency", **params))["error"] == error
    # paying yourself changes nothing
    reply = await call(
        world,
        "transfer-currency",
        sourceActorUuid=ELARA,
        targetActorUuid=ELARA,
        currency={"gp": 3},
    )
    assert reply["data"]["sourceBalance"]["gp"] == 20 == _gp(world, "elaraWizard00001")["gp"]


async def test_modify_currency(world: World) -> None:
    reply = await call(world, "modify-currency", actorUuid=PIP, currency="gp", amount=100)
    assert reply["data"] == {"currency": "gp", "previous": 5, "current": 105, "delta": 100}
    reply = await call(world, "modify-currency", uuid=PIP, currency="sp", amount=-500)
    assert reply["data"] == {"currency": "sp", "previous": 20, "current": 0, "delta": -500}
    assert (await call(world, "modify-currency", actorUuid=PIP, currency="gp"))["error"] == (
        "Missing required params: uuid, currency, amount"
    )
    assert (await call(world, "modify-currency", actorUuid="Actor.z", currency="gp", amount=1))[
        "error"
    ] == "Actor not found: Actor.z"
    reply = await call(world, "modify-currency", actorUuid=PIP, currency="dollars", amount=1)
    assert reply["error"] == "Invalid currency 'dollars'. Valid currencies: pp, gp, ep, sp, cp"


async def test_prepare_spell(world: World) -> None:
    reply = await call(world, "prepare-spell", actorUuid=ELARA, spellName="sleep", prepared=True)
    sleep = item_of(get_actor(world, "elaraWizard00001"), "Sleep")
    assert reply["data"] == {
        "spellName": "Sleep",
        "prepared": True,
        "uuid": f"{ELARA}.Item.{sleep['_id']}",
    }
    assert sleep["system"]["preparation"]["prepared"] is True
    assert (await call(world, "prepare-spell", actorUuid=ELARA, spellName="Sleep"))["error"] == (
        "Missing required params: uuid, spellName, prepared"
    )
    reply = await call(world, "prepare-spell", actorUuid=ELARA, spellName="Wish", prepared=True)
    assert reply["error"] == "Spell not found: Wish"
    reply = await call(
        world, "prepare-spell", actorUuid=CORVIN, spellName="Command", prepared=False
    )
    assert reply["error"] == "Actor 'Corvin Ash' does not prepare spells"
