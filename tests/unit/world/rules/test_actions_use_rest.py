"""use-* and rests in-process over the real SQLite demo world, and a rest interrupted by a
killed process (a subprocess that exits before the commit) leaving the actor as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.world import call, chat, edited_actor, get_actor, item_of

from vttrelay.world.actions.table import standard_table
from vttrelay.world.rules.dice import ScriptedRandom
from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"
CORVIN = "Actor.corvinWarlock001"
PIP = "Actor.pipMonk000000001"


async def test_use_item_examples_and_errors(world: World) -> None:
    reply = await call(world, "use-item", actorUuid=PIP, abilityName="torch")
    assert list(reply) == ["type", "requestId", "data"]
    assert reply["type"] == "use-item-result"
    assert list(reply["data"]) == ["uuid", "ability", "result", "outcome"]
    assert reply["data"]["uuid"] == PIP and reply["data"]["ability"] == "Torch"
    card = chat(world)[-1]
    assert card["_id"] == reply["data"]["result"] and "<h3>Torch</h3>" in card["content"]
    reply = await call(world, "use-feature", actorUuid=PIP, abilityName="Acolyte")
    assert reply["data"]["ability"] == "Acolyte"
    # type filters: a feature is not an item, a spell is not a feature
    reply = await call(world, "use-item", actorUuid=PIP, abilityName="Flurry of Blows")
    assert reply["error"] == "Ability not found on actor Pip Tealeaf"
    reply = await call(world, "use-feature", actorUuid=ELARA, abilityName="Shield")
    assert reply["error"] == "Ability not found on actor Elara Quill"
    checks = [
        ({"abilityName": "Torch"}, "actorUuid is required"),
        ({"actorUuid": PIP}, "abilityUuid or abilityName is required"),
        ({"actorUuid": "Actor.nope", "abilityName": "x"}, "Actor not found with UUID: Actor.nope"),
        (
            {"actorUuid": PIP, "abilityName": "Torch", "userId": "Aria"},
            "User 'Aria' does not have permission to use abilities on 'Pip Tealeaf'",
        ),
    ]
    for params, error in checks:
        assert (await call(world, "use-ability", **params))["error"] == error


async def test_use_spell_spends_slots_then_fails(world: World) -> None:
    for left in (3, 2, 1, 0):
        reply = await call(world, "use-spell", actorUuid=ELARA, abilityName="Magic Missile")
        assert "error" not in reply
        assert get_actor(world, "elaraWizard00001")["system"]["spells"]["spell1"]["value"] == left
    reply = await call(world, "use-spell", actorUuid=ELARA, abilityName="Magic Missile")
    assert reply["error"] == "No spell slots of level 1 remaining to cast Magic Missile"
    # cantrips need no slot
    reply = await call(world, "use-spell", actorUuid=ELARA, abilityName="Fire Bolt")
    assert "roll" in reply["data"]


async def test_pact_spells_and_short_rest(world: World) -> None:
    for _ in range(2):
        assert "error" not in await call(
            world, "use-spell", actorUuid=CORVIN, abilityName="Command"
        )
    reply = await call(world, "use-spell", actorUuid=CORVIN, abilityName="Expeditious Retreat")
    assert reply["error"] == "No pact slots remaining to cast Expeditious Retreat"
    reply = await call(world, "short-rest", actorUuid=CORVIN, userId="Ben")
    result = reply["data"]["result"]
    assert result["updateData"] == {"system.spells.pact.value": 2, "_id": "corvinWarlock001"}
    assert get_actor(world, "corvinWarlock001")["system"]["spells"]["pact"]["value"] == 2
    rest = chat(world)[-1]
    assert rest["type"] == "rest" and rest["content"] == "Corvin Ash takes a short rest."


async def test_attack_with_target(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [19, 4, 6]
    reply = await call(
        world, "use-item", actorUuid=BRANN, abilityName="Longsword", targetName="goblin"
    )
    assert reply["data"]["roll"] == {
        "total": 24,
        "formula": "1d20 + 3 + 2",
        "isCritical": True,
        "isFumble": False,
        "dice": [{"faces": 20, "results": [{"result": 19, "active": True}]}],
    }
    card = chat(world)[-1]
    assert "hits Goblin (AC 15)" in card["content"]
    assert [r["formula"] for r in card["rolls"]] == ["1d20 + 3 + 2", "2d8 + 3"]
    faces.faces += [1]
    reply = await call(world, "use-item", actorUuid=BRANN, abilityName="Longsword")
    assert reply["data"]["roll"]["isFumble"] is True


async def test_second_wind_heals_and_recovers_on_short_rest(
    world: World, faces: ScriptedRandom
) -> None:
    with edited_actor(world, "brannFighter0001") as brann:
        brann["system"]["attributes"]["hp"]["value"] = 10
    faces.faces += [5]
    assert "error" not in await call(
        world, "use-feature", actorUuid=BRANN, abilityName="Second Wind"
    )
    brann = get_actor(world, "brannFighter0001")
    assert brann["system"]["attributes"]["hp"]["value"] == 18
    reply = await call(world, "use-feature", actorUuid=BRANN, abilityName="Second Wind")
    assert reply["error"] == "Second Wind has no uses remaining (0 of 1)"
    faces.faces += [7]
    reply = await call(world, "short-rest", actorUuid=BRANN, autoHD=True, autoHDThreshold=0.6)
    result = reply["data"]["result"]
    assert result["deltas"] == {"hitPoints": 10, "hitDice": -1}
    assert [u["_id"] for u in result["updateItems"]] == [item_of(brann, "Second Wind")["_id"]]
    brann = get_actor(world, "brannFighter0001")
    assert brann["system"]["attributes"]["hp"]["value"] == 28
    assert item_of(brann, "Second Wind")["system"]["uses"]["spent"] == 0
    assert item_of(brann, "Fighter")["system"]["hd"]["spent"] == 1
    reply = await call(world, "short-rest", actorUuid=BRANN, autoHDThreshold=2)
    assert reply["error"] == "autoHDThreshold must be a number from 0 to 1 (a fraction of max HP)"


async def test_ki_and_consumables(world: World) -> None:
    for _ in range(3):
        assert "error" not in await call(
            world, "use-feature", actorUuid=PIP, abilityName="Flurry of Blows"
        )
    reply = await call(world, "use-feature", actorUuid=PIP, abilityName="Step of the Wind")
    assert reply["error"] == "Not enough Ki Points to use Step of the Wind: needs 1, has 0"
    reply = await call(world, "use-item", actorUuid=PIP, abilityName="Potion of Healing")
    assert "error" not in reply
    assert all(
        i["name"] != "Potion of Healing" for i in get_actor(world, "pipMonk000000001")["items"]
    )
    reply = await call(world, "use-item", actorUuid=PIP, abilityName="Potion of Healing")
    assert reply["error"] == "Ability not found on actor Pip Tealeaf"
    await call(world, "use-item", actorUuid=PIP, abilityName="Rations")
    rations = item_of(get_actor(world, "pipMonk000000001"), "Rations")
    assert rations["system"]["quantity"] == 4


async def test_long_rest_by_selection_and_gates(world: World) -> None:
    await call(world, "use-spell", actorUuid=ELARA, abilityName="Scorching Ray")
    assert (await call(world, "long-rest"))[
        "error"
    ] == "Either actorUuid or selected must be provided"
    assert (await call(world, "long-rest", selected=True))["error"] == "No token selected"
    await call(world, "select", uuids=["Scene.sceneTavern00001.Token.tokElara00000001"])
    reply = await call(world, "long-rest", selected=True, userId="Ben")
    assert (
        reply["error"]
        == "User 'Ben' does not have permission to perform a long rest on 'Elara Quill'"
    )
    reply = await call(world, "long-rest", selected=True, userId="Aria")
    result = reply["data"]["result"]
    assert reply["data"]["actorUuid"] == ELARA
    assert result["type"] == "long" and result["newDay"] is True
    assert result["updateData"]["system.spells.spell2.value"] == 2
    assert get_actor(world, "elaraWizard00001")["system"]["spells"]["spell2"]["value"] == 2
    reply = await call(world, "short-rest", actorUuid=ELARA, userId="Ben")
    assert (
        reply["error"]
        == "User 'Ben' does not have permission to perform a short rest on 'Elara Quill'"
    )


CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from vttrelay.world.actions.table import standard_table
    from vttrelay.world.runtime.world import World

    world = World.open(Path(sys.argv[1]), actions=standard_table())
    frame = {"type": "long-rest", "requestId": "long-rest_1", "actorUuid": "Actor.brannFighter0001"}
    print(asyncio.run(world.handle(frame)))
    """
)


def test_rest_interrupted_by_killed_process_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    world = World.open(data, actions=standard_table())
    with edited_actor(world, "brannFighter0001") as brann:
        brann["system"]["attributes"]["hp"]["value"] = 3
        item_of(brann, "Fighter")["system"]["hd"]["spent"] = 2
    before = get_actor(world, "brannFighter0001")
    world.close()
    env = {**os.environ, "VTTRELAY_CRASH_AFTER": "long-rest"}
    proc = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(data)],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == b""  # it died before answering
    world = World.open(data, actions=standard_table())
    try:
        assert get_actor(world, "brannFighter0001") == before
        assert chat(world) == []
        # the same rest without the crash does happen
        proc = subprocess.run(
            [sys.executable, "-c", CRASH_SCRIPT, str(data)],
            capture_output=True,
            timeout=60,
            check=False,
            env={k: v for k, v in os.environ.items() if k != "VTTRELAY_CRASH_AFTER"},
        )
        assert proc.returncode == 0, proc.stderr
        after = get_actor(world, "brannFighter0001")
        assert after["system"]["attributes"]["hp"]["value"] == 34
    finally:
        world.close()


async def test_ability_uuid_must_belong_to_the_actor(world: World) -> None:
    torch = item_of(get_actor(world, "pipMonk000000001"), "Torch")
    reply = await call(
        world, "use-ability", actorUuid=PIP, abilityUuid=f"{PIP}.Item.{torch['_id']}"
    )
    assert reply["data"]["ability"] == "Torch"
    reply = await call(
        world, "use-ability", actorUuid=ELARA, abilityUuid=f"{PIP}.Item.{torch['_id']}"
    )
    assert reply["error"] == "Ability not found on actor Elara Quill"


async def test_npc_long_rest_recovers_hit_dice(world: World) -> None:
    with edited_actor(world, "wolfNpc000000001") as wolf:
        wolf["system"]["attributes"]["hp"]["value"] = 2
        wolf["system"]["attributes"]["hd"]["spent"] = 2
    reply = await call(world, "long-rest", actorUuid="Actor.wolfNpc000000001")
    result = reply["data"]["result"]
    assert result["deltas"] == {"hitPoints": 9, "hitDice": 2}
    assert list(result["updateData"])[:2] == [
        "system.attributes.hp.value",
        "system.attributes.hd.spent",
    ]
    assert get_actor(world, "wolfNpc000000001")["system"]["attributes"]["hd"]["spent"] == 0
