"""dnd5e roll actions in-process over the real SQLite demo world: exact replies, formulas,
chat messages, error order and texts, permission gates."""

from __future__ import annotations

from tests.support.world import call, chat, edited_actor, get_actor

from vttrelay.world.rules.dice import ScriptedRandom
from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
PIP = "Actor.pipMonk000000001"


async def test_skill_check_reply_and_chat(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [14]
    reply = await call(world, "skill-check", actorUuid=ELARA, skill="arc")
    assert reply == {
        "type": "skill-check-result",
        "requestId": "skill-check_1",
        "data": {
            "actorUuid": ELARA,
            "skill": "arc",
            "total": 19,
            "formula": "1d20 + 3 + 2",
            "result": "14 + 3 + 2",
        },
    }
    [message] = chat(world)
    assert message["flavor"] == "Arcana Skill Check" and message["content"] == "19"
    assert message["rolls"][0]["dice"] == [
        {"faces": 20, "results": [{"result": 14, "active": True}]}
    ]
    assert message["flags"]["vttrelay"]["chatType"] == 4
    assert message["speaker"]["actor"] == "elaraWizard00001"


async def test_skill_check_options_and_no_chat(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [3, 17, 2]
    reply = await call(
        world,
        "skill-check",
        actorUuid=ELARA,
        skill="ath",
        advantage=True,
        bonus="1d4",
        createChatMessage=False,
    )
    assert reply["data"]["formula"] == "2d20kh + 1d4 - 1"
    assert reply["data"]["result"] == "17 + 2 - 1" and reply["data"]["total"] == 18
    assert chat(world) == []


async def test_skill_check_errors_in_order(world: World) -> None:
    reply = await call(world, "skill-check", skill="nope")
    assert reply["error"] == "actorUuid is required"
    reply = await call(world, "skill-check", actorUuid="Actor.missing0000000001")
    assert reply["error"] == "skill is required"
    reply = await call(world, "skill-check", actorUuid="Actor.missing0000000001", skill="xyz")
    assert reply["error"] == (
        "Invalid skill 'xyz'. Valid skills: acr, ani, arc, ath, dec, his, ins, itm, inv, med, "
        "nat, prc, prf, per, rel, slt, ste, sur"
    )
    reply = await call(world, "skill-check", actorUuid="Actor.missing0000000001", skill="arc")
    assert reply == {
        "type": "skill-check-result",
        "requestId": "skill-check_1",
        "error": "Actor not found with UUID: Actor.missing0000000001",
    }
    reply = await call(world, "skill-check", actorUuid=ELARA, skill="arc", userId="nobody")
    assert reply["error"] == "User not found: nobody" and reply["data"] is None


async def test_view_gate_for_rolls(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [10, 10]
    # Ben has LIMITED on Elara: view gates pass
    reply = await call(world, "ability-check", actorUuid=ELARA, ability="str", userId="Ben")
    assert reply["data"]["formula"] == "1d20 - 1"
    reply = await call(
        world, "skill-check", actorUuid="Actor.goblinNpc0000001", skill="ste", userId="Ben"
    )
    assert reply["error"] == "User 'Ben' does not have permission to view actor 'Goblin'"


async def test_saves_and_checks(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [2, 15]
    reply = await call(world, "ability-save", actorUuid=ELARA, ability="dex")
    assert reply["data"] == {
        "actorUuid": ELARA,
        "ability": "dex",
        "total": 4,
        "formula": "1d20 + 2 + 0",
        "result": "2 + 2 + 0",
    }
    reply = await call(world, "ability-check", actorUuid=ELARA, ability="int")
    assert (reply["data"]["formula"], reply["data"]["total"]) == ("1d20 + 3", 18)
    reply = await call(world, "ability-save", actorUuid=ELARA, ability="luck")
    assert reply["error"] == (
        "Invalid ability 'luck'. Valid abilities: str, dex, con, int, wis, cha"
    )
    reply = await call(world, "ability-check", actorUuid=ELARA)
    assert reply["error"] == "ability is required"


async def _drop_pip(world: World) -> None:
    with edited_actor(world, "pipMonk000000001") as pip:
        pip["system"]["attributes"]["hp"]["value"] = 0


async def test_death_saves_nat1_nat20_and_stable(world: World, faces: ScriptedRandom) -> None:
    reply = await call(world, "death-save", actorUuid=PIP)
    assert reply["data"] == {"actorUuid": PIP, "deathSaves": {"success": 0, "failure": 0}}
    await _drop_pip(world)
    faces.faces += [1]
    reply = await call(world, "death-save", actorUuid=PIP)
    assert reply["data"] == {
        "actorUuid": PIP,
        "total": 1,
        "formula": "1d20",
        "result": "1",
        "deathSaves": {"success": 0, "failure": 2},
    }
    faces.faces += [20]
    reply = await call(world, "death-save", actorUuid=PIP)
    assert reply["data"]["deathSaves"] == {"success": 0, "failure": 0}
    pip = get_actor(world, "pipMonk000000001")
    assert pip["system"]["attributes"]["hp"]["value"] == 1
    contents = [m["content"] for m in chat(world)]
    assert (
        "Pip Tealeaf critically succeeded on a death saving throw and has regained 1 Hit Point!"
        in contents
    )

    await _drop_pip(world)
    faces.faces += [12, 10, 19]
    for expected in (1, 2):
        reply = await call(world, "death-save", actorUuid=PIP, createChatMessage=False)
        assert reply["data"]["deathSaves"]["success"] == expected
    reply = await call(world, "death-save", actorUuid=PIP, createChatMessage=False)
    assert reply["data"]["deathSaves"] == {"success": 0, "failure": 0}
    assert chat(world)[-1]["content"] == (
        "Pip Tealeaf has survived with 3 death save successes and is now stable!"
    )


async def test_death_save_three_failures_and_owner_gate(
    world: World, faces: ScriptedRandom
) -> None:
    await _drop_pip(world)
    reply = await call(world, "death-save", actorUuid=PIP, userId="Aria")
    assert reply["error"] == (
        "User 'Aria' does not have permission to roll death saves for 'Pip Tealeaf'"
    )
    faces.faces += [5, 1]
    await call(world, "death-save", actorUuid=PIP, userId="Ben")
    reply = await call(world, "death-save", actorUuid=PIP, userId="Ben")
    assert reply["data"]["deathSaves"] == {"success": 0, "failure": 3}
    assert chat(world)[-1]["content"] == "Pip Tealeaf has died with 3 death save failures!"
    reply = await call(world, "death-save", actorUuid=PIP)
    assert "total" not in reply["data"]


async def test_concentration_cycle(world: World, faces: ScriptedRandom) -> None:
    reply = await call(world, "get-concentration", actorName="elara quill")
    assert reply["data"] == {
        "actorUuid": ELARA,
        "isConcentrating": False,
        "effect": None,
        "spell": None,
    }
    reply = await call(world, "concentration-save", actorUuid=ELARA, damage=30)
    assert reply["error"] == "Actor 'Elara Quill' is not concentrating"
    reply = await call(world, "break-concentration", actorUuid=ELARA)
    assert reply["error"] == "Actor 'Elara Quill' is not concentrating"

    reply = await call(world, "use-spell", actorUuid=ELARA, abilityName="Hold Person")
    assert "error" not in reply, reply
    reply = await call(world, "get-concentration", actorUuid=ELARA)
    data = reply["data"]
    assert data["isConcentrating"] is True and data["spell"] == "Hold Person"
    assert list(data["effect"]) == ["id", "uuid", "name", "icon", "statuses", "origin"]
    assert data["effect"]["statuses"] == ["concentrating"]
    effect_id = data["effect"]["id"]

    reply = await call(world, "concentration-save", actorUuid=ELARA)
    assert reply["error"] == "damage must be a number"
    faces.faces += [8]
    reply = await call(world, "concentration-save", actorUuid=ELARA, damage=24)
    assert reply["data"] == {
        "actorUuid": ELARA,
        "dc": 12,
        "total": 10,
        "formula": "1d20 + 2",
        "result": "8 + 2",
        "maintained": False,
    }
    reply = await call(world, "get-concentration", actorUuid=ELARA)
    assert reply["data"]["isConcentrating"] is False

    await call(world, "use-spell", actorUuid=ELARA, abilityName="Hold Person")
    faces.faces += [15]
    reply = await call(world, "concentration-save", actorName="Elara Quill", damage=5)
    assert (reply["data"]["dc"], reply["data"]["maintained"]) == (10, True)
    reply = await call(world, "break-concentration", actorUuid=ELARA, userId="Ben")
    assert reply["error"] == (
        "User 'Ben' does not have permission to break concentration on 'Elara Quill'"
    )
    reply = await call(world, "break-concentration", actorUuid=ELARA, userId="Aria")
    assert reply["data"]["broken"] is True and reply["data"]["removedEffectId"] != effect_id
    reply = await call(world, "get-concentration")
    assert reply["error"] == "actorUuid or actorName is required"
    reply = await call(world, "get-concentration", actorName="Nobody")
    assert reply["error"] == "Actor not found: Nobody"


async def test_bad_bonus_is_a_clear_error_and_changes_nothing(world: World) -> None:
    reply = await call(world, "skill-check", actorUuid=ELARA, skill="arc", bonus="1d20 +* x")
    assert reply["error"] == "Invalid bonus formula '1d20 +* x'"
    reply = await call(world, "skill-check", actorUuid=ELARA, skill="arc", bonus="@prof")
    assert reply["data"]["formula"] == "1d20 + 2 + 3 + 2"
    # parses, but rolls too many dice: still a clear error
    reply = await call(world, "ability-save", actorUuid=ELARA, ability="con", bonus="5000d6")
    assert reply["error"].startswith("Invalid dice formula")
    assert [m["flavor"] for m in chat(world)] == ["Arcana Skill Check"]  # the @prof roll only
