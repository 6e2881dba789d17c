"""A use on several targets (issue 24, vttrelay's `targetUuids`): Burning Hands on both goblins
of the ambush in one call, through a real relay and the embedded world. The slot is spent once
and the damage rolled once; each goblin makes its own saving throw and takes its own damage.
Refusals (an attack at two targets, a target that is not there, too many) change nothing."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import api_for

from .test_dnd5e_endpoints import BRANN, ELARA, failed, ok

AMBUSH = "Scene.sceneAmbush00001"
GOBLINS = [f"{AMBUSH}.Token.ambGoblin000000{n}" for n in (1, 2)]
GOBLIN_HP = 7


async def hp_of(api: Any, uuid: str) -> str:
    status, body = await api("GET", "/dnd5e/get-actor-details", actorUuid=uuid, details=["stats"])
    hp = ok(status, body, "get-actor-details")["stats"]["hp"]
    return f"{hp['value']}/{hp['max']}"


async def slots(api: Any) -> int:
    status, body = await api("GET", "/dnd5e/get-actor-details", actorUuid=ELARA, details=["spells"])
    return int(ok(status, body, "get-actor-details")["spellSlots"]["spell1"]["value"])


async def test_burning_hands_on_two_goblins_in_one_use(world: Any, api: Any) -> None:
    assert await slots(api) == 4
    status, body = await api(
        "POST",
        "/dnd5e/use-spell",
        {
            "actorUuid": ELARA,
            "abilityName": "Burning Hands",
            "targetUuids": GOBLINS,
            "applyDamage": True,
        },
    )
    outcome = ok(status, body, "use-spell")["outcome"]
    assert outcome["save"] == {"ability": "dex", "dc": 13, "onSave": "half"}
    rolled = outcome["damage"]
    assert rolled["formula"] == "3d6" and 3 <= rolled["total"] <= 18
    assert [t["uuid"] for t in outcome["targets"]] == [
        f"{g}.Actor.goblinNpc0000001" for g in GOBLINS
    ]
    for target, token in zip(outcome["targets"], GOBLINS, strict=True):
        assert target["name"] == "Goblin"
        save = target["save"]
        assert set(save) == {"total", "success"} and save["success"] is (save["total"] >= 13)
        taken = rolled["total"] // 2 if save["success"] else rolled["total"]
        assert target["damage"] == {"taken": taken, "applied": True}
        left = max(0, GOBLIN_HP - taken)
        assert target["hp"] == f"{left}/{GOBLIN_HP}"
        assert await hp_of(api, token) == target["hp"]  # stored, each on its own token
    assert "target" not in outcome  # the one-target shape is for one target
    assert await slots(api) == 3  # one slot for both
    assert await hp_of(api, "Actor.goblinNpc0000001") == f"{GOBLIN_HP}/{GOBLIN_HP}"
    notes = outcome["notes"]
    assert notes[0] == "spent a 1st-level slot" and sum("the save" in n for n in notes) == 2
    # one chat card carries the damage roll and both saves
    status, chat = await api("GET", "/chat", limit=1)
    assert status == 200 and len(chat["data"]["messages"][0]["rolls"]) == 3


async def test_a_use_on_several_targets_refused_changes_nothing(world: Any, api: Any) -> None:
    before = (await slots(api), [await hp_of(api, g) for g in GOBLINS])
    status, body = await api(
        "POST",
        "/dnd5e/use-item",
        {"actorUuid": BRANN, "abilityName": "Longsword", "targetUuids": GOBLINS},
    )
    failed(status, body, "An attack takes one target: make one use per target")
    status, body = await api(
        "POST",
        "/dnd5e/use-spell",
        {
            "actorUuid": ELARA,
            "abilityName": "Burning Hands",
            "targetUuids": [GOBLINS[0], f"{AMBUSH}.Token.nobodyHere000001"],
            "applyDamage": True,
        },
    )
    failed(status, body, f"Target not found: {AMBUSH}.Token.nobodyHere000001")
    status, body = await api(
        "POST",
        "/dnd5e/use-spell",
        {"actorUuid": ELARA, "abilityName": "Burning Hands", "targetUuids": GOBLINS * 26},
    )
    failed(status, body, "At most 50 targets can be given in one use")
    assert (await slots(api), [await hp_of(api, g) for g in GOBLINS]) == before


async def test_healing_on_several_targets_heals_each_the_amount_rolled(
    relay: Any, world: Any, api: Any
) -> None:
    """One healing roll, each target regains it (as Mass Cure Wounds does; the demo's only
    healing item, a potion, stands in for such a spell)."""
    gm = api_for(relay, ("entity:write",), rate_per_minute=0)
    for goblin in GOBLINS:  # wounded first: 7 -> 2
        status, body = await gm(
            "POST",
            "/decrease",
            {"attribute": "system.attributes.hp.value", "amount": 5},
            uuid=f"{goblin}.Actor.goblinNpc0000001",
        )
        assert status == 200, body
    status, body = await api(
        "POST",
        "/dnd5e/use-item",
        {"actorUuid": ELARA, "abilityName": "Potion of Healing", "targetUuids": GOBLINS},
    )
    outcome = ok(status, body, "use-item")["outcome"]
    healed = [t["healing"] for t in outcome["targets"]]
    assert healed[0] == healed[1] and 2 <= healed[0] <= 5  # 2d4 + 2, capped at the max HP
    for target, token in zip(outcome["targets"], GOBLINS, strict=True):
        assert target["hp"] == f"{2 + target['healing']}/{GOBLIN_HP}"
        assert await hp_of(api, token) == target["hp"]
