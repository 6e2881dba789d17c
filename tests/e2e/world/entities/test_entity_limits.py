"""Issue 20 items 9 and 10 end to end (real relay, real WebSocket to the embedded world): a key
with `entity:write` can't switch the script permission setting through PUT /update (which let a
player key run execute-js) nor delete it, and /remove and /give refuse negative, fractional and
oversized quantities with 400 while nothing moves."""

from __future__ import annotations

from typing import Any

from vttrelay.world.actions.entities import SETTING_REFUSED
from vttrelay.world.model import documents
from vttrelay.world.rules.entities import QUANTITY_ERROR

PIP, BRANN = "Actor.pipMonk000000001", "Actor.brannFighter0001"


def stored(world: Any) -> tuple[Any, Any, Any]:
    with world.world.store.transaction() as tx:
        role = documents.setting_doc(tx, documents.SETTING_EXECUTE_JS_ROLE)
        pip, brann = tx.get("Actor", PIP[6:]), tx.get("Actor", BRANN[6:])
    return role, pip, brann


async def test_settings_and_quantities_over_rest(relay: Any, world: Any, api: Any) -> None:
    role, pip, brann = stored(world)
    uuid = f"Setting.{role['_id']}"
    status, body = await api("PUT", "/update", {"data": {"value": 1}}, uuid=uuid)
    assert (status, body["error"]) == (400, SETTING_REFUSED)
    status, body = await api("DELETE", "/delete", uuid=uuid)
    assert (status, body["error"]) == (400, SETTING_REFUSED)
    for quantity in (-1_000_000, 0.5, 10**9):
        status, body = await api(
            "POST", "/remove", {"actorUuid": PIP, "itemName": "Torch", "quantity": quantity}
        )
        assert (status, body["error"]) == (400, QUANTITY_ERROR)
        status, body = await api(
            "POST",
            "/give",
            {"fromUuid": PIP, "toUuid": BRANN, "itemName": "Torch", "quantity": quantity},
        )
        assert (status, body["error"]) == (400, QUANTITY_ERROR)
    assert stored(world) == (role, pip, brann)
