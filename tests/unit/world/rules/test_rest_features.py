"""Rest-bound features through the actions on the real SQLite world: Arcane Recovery only after
a short rest and once per long rest; a long rest lowers exhaustion by one (both in the stored
actor and in the reply's updateData)."""

from __future__ import annotations

from tests.support.world import call, edited_actor, get_actor, item_of

from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"


async def _cast(world: World, spell: str) -> None:
    reply = await call(world, "use-spell", actorUuid=ELARA, abilityName=spell)
    assert "error" not in reply, reply


async def test_arcane_recovery_after_a_short_rest_once_per_long_rest(world: World) -> None:
    await _cast(world, "Misty Step")
    await _cast(world, "Magic Missile")
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="Arcane Recovery")
    assert reply["error"] == "Arcane Recovery can only be used after a short rest"

    assert "error" not in await call(world, "short-rest", actorUuid=ELARA, userId="Aria")
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="arcane recovery")
    assert reply["data"]["ability"] == "Arcane Recovery"
    spells = get_actor(world, "elaraWizard00001")["system"]["spells"]
    assert (spells["spell1"]["value"], spells["spell2"]["value"]) == (3, 2)
    feature = item_of(get_actor(world, "elaraWizard00001"), "Arcane Recovery")
    assert feature["system"]["uses"]["spent"] == 1

    await call(world, "short-rest", actorUuid=ELARA)
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="Arcane Recovery")
    assert reply["error"] == "Arcane Recovery has no uses remaining (0 of 1)"

    await call(world, "long-rest", actorUuid=ELARA)
    await _cast(world, "Shield")
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="Arcane Recovery")
    assert reply["error"] == "Arcane Recovery can only be used after a short rest"
    await call(world, "short-rest", actorUuid=ELARA)
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="Arcane Recovery")
    assert "error" not in reply, reply
    assert get_actor(world, "elaraWizard00001")["system"]["spells"]["spell1"]["value"] == 4


async def test_long_rest_lowers_exhaustion(world: World) -> None:
    with edited_actor(world, "brannFighter0001") as brann:
        brann["system"]["attributes"]["exhaustion"] = 3
    reply = await call(world, "long-rest", actorUuid=BRANN)
    assert reply["data"]["result"]["updateData"]["system.attributes.exhaustion"] == 2
    assert reply["data"]["result"]["clone"]["system"]["attributes"]["exhaustion"] == 3
    details = await call(world, "get-actor-details", actorUuid=BRANN, details=["stats"])
    assert details["data"]["stats"]["exhaustion"] == 2
    await call(world, "short-rest", actorUuid=BRANN)
    assert get_actor(world, "brannFighter0001")["system"]["attributes"]["exhaustion"] == 2
