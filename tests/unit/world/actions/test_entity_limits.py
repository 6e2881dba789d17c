"""Issue 20 items 9 and 10, in process over the real SQLite demo world: /update, /delete and
/increase refuse Setting documents as /create and scripts do (a key with `entity:write` switched
the script permission and let a player run execute-js); /remove and /give take only whole
quantities from 1 to MAX_QUANTITY (a negative /remove added items: 10 torches became
1,000,000,015), never leave an actor holding more, and a refused call moves nothing."""

from __future__ import annotations

from typing import Any

from tests.support.world import call, get_actor

from vttrelay.world.actions.entities import SETTING_REFUSED
from vttrelay.world.model import documents
from vttrelay.world.rules.entities import MAX_QUANTITY, QUANTITY_ERROR
from vttrelay.world.runtime.world import World

PIP, BRANN = "Actor.pipMonk000000001", "Actor.brannFighter0001"


def setting(world: World, key: str) -> dict[str, Any]:
    with world.store.transaction() as tx:
        doc = documents.setting_doc(tx, key)
    assert doc is not None
    return doc


def torches(world: World, actor_id: str) -> Any:
    items = get_actor(world, actor_id)["items"]
    found = [i for i in items if i["name"] == "Torch"]
    return found[0]["system"]["quantity"] if found else None


async def test_settings_are_not_changed_or_deleted_through_the_entity_routes(
    world: World,
) -> None:
    role = setting(world, documents.SETTING_EXECUTE_JS_ROLE)
    uuid = f"Setting.{role['_id']}"
    reply = await call(world, "update", uuid=uuid, data={"value": 1})
    assert reply == {
        "type": "update-result",
        "requestId": "update_1",
        "uuid": uuid,
        "error": SETTING_REFUSED,
        "message": "Failed to update entity",
    }
    reply = await call(world, "delete", uuid=uuid)
    assert reply["error"] == SETTING_REFUSED
    for action in ("increase", "decrease"):
        reply = await call(world, action, uuid=uuid, attribute="value", amount=3)
        assert (reply["success"], reply["error"]) == (False, SETTING_REFUSED)
    assert setting(world, documents.SETTING_EXECUTE_JS_ROLE) == role
    reply = await call(world, "create", entityType="Setting", data={"key": "x", "value": 1})
    assert reply["error"] == "Invalid entity type: Setting"  # as before


async def test_remove_takes_whole_positive_bounded_quantities(world: World) -> None:
    before = torches(world, "pipMonk000000001")
    for bad in (-1_000_000, 0, 1.5, MAX_QUANTITY + 1, "3", True):
        reply = await call(world, "remove", actorUuid=PIP, itemName="Torch", quantity=bad)
        assert (reply["success"], reply["error"]) == (False, QUANTITY_ERROR), bad
    assert torches(world, "pipMonk000000001") == before
    reply = await call(world, "remove", actorUuid=PIP, itemName="Torch", quantity=2.0)
    assert (reply["success"], reply["quantity"]) == (True, before - 2)


async def test_give_takes_whole_positive_bounded_quantities_and_moves_all_or_nothing(
    world: World,
) -> None:
    held, his = torches(world, "pipMonk000000001"), torches(world, "brannFighter0001")
    for bad in (-5, 0, 0.5, MAX_QUANTITY + 1):
        reply = await call(
            world, "give", fromUuid=PIP, toUuid=BRANN, itemName="Torch", quantity=bad
        )
        assert (reply["success"], reply["error"]) == (False, QUANTITY_ERROR), bad
    reply = await call(
        world, "give", fromUuid=PIP, toUuid=BRANN, itemName="Torch", quantity=held + 1
    )
    assert reply["success"] is False and "has only" in reply["error"]
    assert torches(world, "pipMonk000000001") == held
    assert torches(world, "brannFighter0001") == his
    reply = await call(world, "give", fromUuid=PIP, toUuid=BRANN, itemName="Torch", quantity=2)
    assert reply["success"] is True
    assert (torches(world, "pipMonk000000001"), torches(world, "brannFighter0001")) == (
        held - 2,
        his + 2,
    )


async def test_copies_never_make_a_stack_past_the_bound(world: World) -> None:
    give = {"toUuid": BRANN, "itemName": "Torch"}
    his = torches(world, "brannFighter0001")
    reply = await call(world, "give", **give, quantity=MAX_QUANTITY - his)
    assert reply["success"] is True and torches(world, "brannFighter0001") == MAX_QUANTITY
    reply = await call(world, "give", **give, quantity=1)
    assert reply["success"] is False
    assert (
        reply["error"]
        == f"Brann Stoneheart would hold {MAX_QUANTITY + 1} of Torch: at most {MAX_QUANTITY}"
    )
    assert torches(world, "brannFighter0001") == MAX_QUANTITY


async def test_increase_keeps_numbers_exact(world: World) -> None:
    reply = await call(
        world, "increase", uuid=PIP, attribute="system.attributes.hp.value", amount=2**53 - 1
    )
    assert reply["success"] is False
    assert "numbers stay between -9007199254740991 and 9007199254740991" in reply["error"]
