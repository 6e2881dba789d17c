"""Issue 20, every world action's cost linear in its input: an encounter started with the
selected tokens of a crowded scene checked each token against every combatant so far, and read
the scene again for each combatant's view (2,000 combatants took 12 s). Membership is a set now,
removal too, each scene is read once per loop, and one call names at most MAX_UUIDS uuids."""

from __future__ import annotations

import time
from typing import Any

from tests.support.world import call

from vttrelay.world.actions.combatants import MAX_UUIDS
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World

SCENE = "sceneTavern00001"


def crowd(world: World, n: int) -> list[str]:
    """`n` tokens without an actor on the active scene; their uuids."""
    with world.store.transaction() as tx:
        scene = tx.get("Scene", SCENE)
        assert scene is not None
        scene["tokens"] = [
            {"_id": f"t{i:015d}", "name": f"Mook {i}", "x": 500, "y": 400, "actorId": None}
            for i in range(n)
        ]
        tx.put("Scene", scene)
    return [documents.token_uuid(SCENE, f"t{i:015d}") for i in range(n)]


async def test_a_crowd_starts_an_encounter_in_linear_time(world: World) -> None:
    crowd(world, 8_000)
    assert (await call(world, "select", all=True, overwrite=True))["count"] == 8_000
    start = time.perf_counter()
    reply = await call(world, "start-encounter", startWithSelected=True)
    took = time.perf_counter() - start
    assert "error" not in reply, reply
    assert len(reply["encounter"]["combatants"]) == 8_000
    assert took < 3.0, took  # about 1 s here; before: past the world's 8 s time limit
    start = time.perf_counter()
    reply = await call(world, "add-to-encounter", selected=True)
    assert reply["added"] == [] and time.perf_counter() - start < 3.0


async def test_uuid_lists_are_bounded(world: World) -> None:
    uuids = crowd(world, 3)
    reply = await call(world, "start-encounter", tokenUuids=uuids)
    assert len(reply["encounter"]["combatants"]) == 3
    for action in ("add-to-encounter", "remove-from-encounter"):
        reply = await call(world, action, uuids=[uuids[0]] * (MAX_UUIDS + 1))
        assert reply["error"] == f"At most {MAX_UUIDS} uuids can be given in one call"
    reply = await call(world, "remove-from-encounter", uuids=[uuids[0], uuids[0], uuids[1]])
    assert reply["failed"] == [] and len(reply["removed"]) == 3
    with world.store.transaction() as tx:
        combat: Any = documents.current_combat(tx)
    assert [c["tokenId"] for c in combat["combatants"]] == ["t000000000000002"]
