"""The AI game master's journey: the demo world's goblin ambush played with the tools alone,
as an agent plays it, through the `mcp` SDK's client over stdio (`vttrelay mcp`) and over the
relay's `/mcp`. Every step is one tool call, and the assertions read only the answers: they are
all the agent has to know what happened."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import ClientSession
from tests.support.mcp import TRANSPORTS, Demo, call, open_session, refused

HEROES = ("Elara Quill", "Corvin Ash", "Brann Stoneheart", "Pip Tealeaf")
# Initiative set by the game master (the players called out their rolls): the order of play.
ORDER = {
    "Brann Stoneheart": 20,
    "Goblin 1": 19,
    "Elara Quill": 18,
    "Goblin 2": 17,
    "Corvin Ash": 16,
    "Bandit": 15,
    "Pip Tealeaf": 14,
}
AC = {"Goblin 1": 15, "Goblin 2": 15, "Bandit": 12, "Brann Stoneheart": 19}
CRITICAL_FROM = {"Brann Stoneheart": 19}  # a Champion's Improved Critical; others crit on 20
MAX_HP = {"Goblin 1": 7, "Goblin 2": 7, "Bandit": 11, "Brann Stoneheart": 34, "Pip Tealeaf": 24}


def hp_of(text: str) -> tuple[int, int]:
    now, most = text.split("/")
    return int(now), int(most)


def check_attack(answer: dict[str, Any], actor: str, weapon: str, target: str) -> int:
    """The answer of an attack says who attacked whom with what, the roll against the target's
    AC, hit or miss, the damage taken and the target's HP after; returns the damage taken."""
    attack, summary = answer["attack"], answer["summary"]
    assert summary.startswith(f"{actor} attacks {target} with {weapon}, rolling "), summary
    assert attack["ac"] == AC[target]
    natural = attack["natural"]
    assert attack["critical"] == (natural >= CRITICAL_FROM.get(actor, 20))
    assert attack["fumble"] == (natural == 1)
    hit = attack["critical"] or (not attack["fumble"] and attack["total"] >= AC[target])
    assert attack["hit"] is hit
    verdict = "critical hit" if attack["critical"] else "hit" if hit else "miss"
    assert f"rolling {attack['total']} (d20: {natural}) against AC {AC[target]}: {verdict}" in (
        summary
    )
    now, most = hp_of(answer["target"]["hp"])
    assert answer["target"]["name"] == target and most == MAX_HP[target]
    assert f"{target} is at {now}/{most} HP" in summary
    if not hit:
        assert "damage" not in answer and "no damage" in summary
        return 0
    damage = answer["damage"]
    assert damage["applied"] is True and damage["taken"] == damage["total"] > 0
    assert f"{damage['total']} damage ({damage['formula']}), {target} takes {damage['taken']}" in (
        summary
    )
    return int(damage["taken"])


async def next_turn(session: ClientSession, expected: str, skipped: list[str] | None = None) -> Any:
    turn = await call(session, "encounter", action="next_turn")
    assert turn["current"] == expected, turn
    assert turn.get("skipped", []) == (skipped or [])
    return turn


async def play_the_ambush(session: ClientSession) -> None:
    # The scene: the ambush, with handles for the two goblins.
    scene = await call(session, "switch_scene", scene="Goblin Ambush")
    assert scene["activeScene"] == "Goblin Ambush"
    names = [t["name"] for t in scene["tokens"]]
    assert sorted(names) == sorted([*HEROES, "Goblin 1", "Goblin 2", "Bandit"])
    ambiguous = await refused(session, "actor_summary", actor="Goblin")
    assert ambiguous == (
        "2 tokens on the scene are named 'Goblin': Goblin 1, Goblin 2; name one of them"
    )
    goblin = await call(session, "actor_summary", actor="Goblin 2")
    assert (goblin["name"], goblin["hp"], goblin["ac"]) == ("Goblin", "7/7", 15)

    # The encounter: the heroes (the players' tokens), the goblins and the bandit; initiative
    # rolled for everyone, then set by the game master as the players called it.
    started = await call(
        session, "encounter", action="start", combatants=["Goblin 1", "Goblin 2", "Bandit"]
    )
    assert started["started"] is True and started["round"] == 1
    assert sorted(c["name"] for c in started["order"]) == sorted(ORDER)
    assert all(isinstance(c["initiative"], int | float) for c in started["order"])
    for name, value in ORDER.items():
        tracker = await call(
            session, "encounter", action="set_initiative", combatant=name, initiative=value
        )
        assert {c["name"]: c["initiative"] for c in tracker["order"]}[name] == value
    assert [c["name"] for c in tracker["order"]] == list(ORDER)
    top = await call(session, "encounter", action="next_round")
    assert (top["round"], top["turn"], top["current"]) == (2, 0, "Brann Stoneheart")

    # Round 2: each combatant acts in turn, one call per action.
    goblin1 = MAX_HP["Goblin 1"]
    taken = check_attack(
        await call(session, "attack", actor="Brann Stoneheart", weapon="Longsword",
                   target="Goblin 1"),
        "Brann Stoneheart", "Longsword", "Goblin 1",
    )  # fmt: skip
    goblin1 = max(0, goblin1 - taken)

    await next_turn(session, "Goblin 1")
    check_attack(
        await call(session, "attack", actor="Goblin 1", weapon="Scimitar",
                   target="Brann Stoneheart"),
        "Goblin 1", "Scimitar", "Brann Stoneheart",
    )  # fmt: skip

    await next_turn(session, "Elara Quill")
    # Burning Hands on both goblins, one call: one slot, one damage roll, a save each.
    spell = await call(
        session,
        "use",
        actor="Elara Quill",
        kind="spell",
        name="Burning Hands",
        targets=["Goblin 1", "Goblin 2"],
    )
    save, damage = spell["save"], spell["damage"]
    assert save == {"ability": "dex", "dc": 13, "onSave": "half"}
    summary = spell["summary"]
    assert summary.startswith(
        "Elara Quill uses Burning Hands on Goblin 1, Goblin 2. DEX save DC 13. "
        f"{damage['total']} damage ({damage['formula']}). "
    ), summary
    before = {"Goblin 1": goblin1, "Goblin 2": MAX_HP["Goblin 2"]}
    assert [t["name"] for t in spell["targets"]] == ["Goblin 1", "Goblin 2"]
    for target in spell["targets"]:
        name, saved = target["name"], target["save"]
        assert saved["success"] is (saved["total"] >= save["dc"])
        taken = damage["total"] // 2 if saved["success"] else damage["total"]
        assert target["damage"] == {"taken": taken, "applied": True}
        left = max(0, before[name] - taken)
        assert target["hp"] == f"{left}/7"
        verdict = "success" if saved["success"] else "failure"
        down = ", down" if left == 0 else ""
        assert (
            f"{name}: save {saved['total']}, {verdict}, takes {taken}, at {left}/7 HP{down}"
        ) in summary
        hp = (await call(session, "actor_summary", actor=name))["hp"]
        assert hp == f"{left}/7"
    assert spell["spent"] == ["spent a 1st-level slot"]
    slots = await call(session, "actor_summary", actor="Elara Quill")
    assert slots["spellSlots"]["1"] == "3/4"

    await next_turn(session, "Goblin 2")
    pip_attack = await call(
        session, "attack", actor="Goblin 2", weapon="Scimitar", target="Pip Tealeaf"
    )
    assert pip_attack["summary"].startswith("Goblin 2 attacks Pip Tealeaf with Scimitar")
    assert pip_attack["attack"]["ac"] == 15  # Unarmored Defense: 10 + DEX 3 + WIS 2

    await next_turn(session, "Corvin Ash")
    prone = await call(session, "set_condition", actor="Bandit", condition="prone")
    assert prone["summary"] == "Bandit is now prone", prone
    assert (await call(session, "actor_summary", actor="Bandit"))["conditions"] == ["Prone"]

    await next_turn(session, "Bandit")
    await call(session, "set_condition", actor="Bandit", condition="prone", active=False)
    bandit = await call(session, "attack", actor="Bandit", weapon="Scimitar", target="Pip Tealeaf")
    assert bandit["summary"].startswith("Bandit attacks Pip Tealeaf with Scimitar")

    await next_turn(session, "Pip Tealeaf")
    potion = await call(session, "use", actor="Pip Tealeaf", name="Potion of Healing")
    healed = re.fullmatch(
        r"Pip Tealeaf uses Potion of Healing\. Pip Tealeaf regains (\d+) HP \((\d+)/24\)\. "
        r"(.*)\.",
        potion["summary"],
    )
    assert healed, potion["summary"]
    assert potion["healing"] == int(healed.group(1))
    assert potion["spent"] == ["Potion of Healing is used up"]
    after = await call(session, "actor_summary", actor="Pip Tealeaf")
    assert after["hp"] == f"{healed.group(2)}/24"
    assert "Potion of Healing" not in " ".join(after["consumables"])

    # Goblin 1 falls: the game master marks it defeated; the tracker passes it over.
    defeated = await call(session, "encounter", action="defeat", combatant="Goblin 1")
    assert defeated["defeated"] == "Goblin 1"
    assert {c["name"]: c.get("defeated", False) for c in defeated["order"]}["Goblin 1"] is True
    gone = await call(session, "actor_summary", actor="Goblin 1")
    assert gone["hp"] == "0/7"

    round3 = await next_turn(session, "Brann Stoneheart")
    assert round3["round"] == 3
    await next_turn(session, "Elara Quill", skipped=["Goblin 1"])

    ended = await call(session, "encounter", action="end")
    assert ended["ended"] == started["id"] and ended["encounters"] == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_agent_runs_the_goblin_ambush(demo: Demo, transport: str) -> None:
    async with open_session(transport, demo.relay.url, demo.agent_key) as session:
        await play_the_ambush(session)


async def test_a_mistaken_call_says_what_to_do_instead(demo: Demo) -> None:
    """Bad arguments are refused by the tool's schema before anything runs; a thing the actor
    lacks is answered with what it has; the uuids the tools hand out are resource URIs too."""
    before = await demo.snapshot()
    async with open_session("http", demo.relay.url, demo.agent_key) as session:
        lots = await refused(session, "change_hp", actor="Pip Tealeaf", amount="lots")
        assert lots == "change_hp: bad arguments: amount: 'lots' is not of type 'integer'"
        extra = await refused(session, "attack", actor="Pip Tealeaf", weapon="Dart", wepon="x")
        assert "Additional properties are not allowed ('wepon' was unexpected)" in extra
        missing = await refused(session, "attack", actor="Pip Tealeaf")
        assert missing == "attack: bad arguments: arguments: 'weapon' is a required property"
        axe = await refused(
            session, "attack", actor="Brann Stoneheart", weapon="Greataxe", target="Pip Tealeaf"
        )
        assert axe.startswith("Brann Stoneheart has no item named 'Greataxe'; it has: ")
        assert "Longsword" in axe and "Handaxe" in axe
        spell = await refused(session, "use", actor="Elara Quill", kind="spell", name="Fireball")
        assert spell.startswith("Elara Quill has no spell named 'Fireball'; it has: ")
        assert "Burning Hands" in spell and "Longsword" not in spell

        found = await call(session, "find", name="Goblin", type="Actor")
        assert found == [
            {"name": "Goblin", "type": "Actor (npc)", "uuid": "Actor.goblinNpc0000001"}
        ]
        packs = await call(session, "find", name="Goblin", type="Actor", compendium=True)
        assert any(r["uuid"].startswith("Compendium.") for r in packs)

        for uri in ("vtt://actors/pipMonk000000001", "vtt://actors/Actor.pipMonk000000001"):
            read = await session.read_resource(uri)
            assert json.loads(read.contents[0].text)["name"] == "Pip Tealeaf"  # type: ignore[union-attr]
        scene = await session.read_resource("vtt://scenes/Scene.sceneAmbush00001")
        assert json.loads(scene.contents[0].text)["name"] == "Goblin Ambush"  # type: ignore[union-attr]

        listed = (await session.list_tools()).tools
        assert not [t.name for t in listed if "scope" in (t.description or "")]
        for tool in listed:
            assert all(p == p.lower() for p in tool.input_schema["properties"]), tool.name
    assert await demo.snapshot() == before
