"""The MCP server's pure parts added for the fight: token handles, what a use did in one
sentence, and which defeated combatants a turn passed over."""

from __future__ import annotations

from vttrelay.mcp import views
from vttrelay.mcp.tools.names import SceneTokens, handles

TOKENS = [
    {"_id": "e", "name": "Elara Quill", "actorId": "elara", "actorLink": True},
    {"_id": "g1", "name": "Goblin", "actorId": "goblin", "actorLink": False},
    {"_id": "g2", "name": "goblin", "actorId": "goblin", "actorLink": False},
    {"_id": "b", "name": "Bandit", "actorId": "bandit", "actorLink": False},
]


def test_tokens_sharing_a_name_get_numbered_handles_in_scene_order() -> None:
    assert handles(TOKENS) == {
        "e": "Elara Quill",
        "g1": "Goblin 1",
        "g2": "goblin 2",
        "b": "Bandit",
    }
    scene = SceneTokens("s", TOKENS, handles(TOKENS))
    assert scene.token_named("GOBLIN 2") is TOKENS[2]
    assert scene.token_named("Nobody") is None
    assert scene.actor_uuid_of(TOKENS[0]) == "Actor.elara"  # linked: the world actor
    assert scene.actor_uuid_of(TOKENS[1]) == "Scene.s.Token.g1"  # unlinked: the token itself
    try:
        scene.token_named("Goblin")
    except ValueError as exc:
        assert str(exc) == "2 tokens on the scene are named 'Goblin': Goblin 1, goblin 2; " + (
            "name one of them"
        )
    else:
        raise AssertionError("an ambiguous name must be refused")


def test_an_attack_that_hits_says_so_in_one_sentence() -> None:
    data = {
        "outcome": {
            "attack": {"total": 17, "natural": 12, "critical": False, "fumble": False,
                       "hit": True, "ac": 15},
            "damage": {"formula": "1d8 + 3", "total": 8, "taken": 8, "applied": True},
            "target": {"name": "Goblin", "uuid": "Scene.s.Token.g1", "hp": "0/7"},
            "notes": ["hits Goblin (AC 15)", "Goblin takes 7 damage"],
        }
    }  # fmt: skip
    seen = views.outcome_view("Brann Stoneheart", "Longsword", "Goblin 1", data)
    assert seen["summary"] == (
        "Brann Stoneheart attacks Goblin 1 with Longsword, rolling 17 (d20: 12) against AC 15: "
        "hit. 8 damage (1d8 + 3), Goblin 1 takes 8. Goblin 1 is at 0/7 HP, down."
    )
    assert seen["target"] == {"name": "Goblin 1", "hp": "0/7"} and "spent" not in seen


def test_a_save_spell_and_a_potion() -> None:
    spell = {
        "outcome": {
            "save": {"ability": "dex", "dc": 13, "onSave": "half", "total": 15, "success": True},
            "damage": {"formula": "3d6", "total": 9, "taken": 4, "applied": True},
            "target": {"name": "Goblin", "uuid": "x", "hp": "3/7"},
            "notes": ["spent a 1st-level slot", "DC 13 Dexterity saving throw"],
        }
    }
    seen = views.outcome_view("Elara Quill", "Burning Hands", "Goblin 2", spell)
    assert seen["summary"] == (
        "Elara Quill uses Burning Hands on Goblin 2. Goblin 2 makes a DEX save DC 13: 15, "
        "success. 9 damage (3d6), Goblin 2 takes 4. Goblin 2 is at 3/7 HP. "
        "spent a 1st-level slot."
    )
    potion = {"outcome": {"healing": 6, "hp": "20/24", "notes": ["Potion of Healing is used up"]}}
    seen = views.outcome_view("Pip Tealeaf", "Potion of Healing", None, potion)
    assert seen["summary"] == (
        "Pip Tealeaf uses Potion of Healing. Pip Tealeaf regains 6 HP (20/24). "
        "Potion of Healing is used up."
    )


def test_a_spell_on_several_targets_says_each_ones_save_damage_and_hp() -> None:
    spell = {
        "outcome": {
            "save": {"ability": "dex", "dc": 13, "onSave": "half"},
            "damage": {"formula": "3d6", "total": 9},
            "targets": [
                {"name": "Goblin", "uuid": "a", "save": {"total": 8, "success": False},
                 "damage": {"taken": 9, "applied": True}, "hp": "0/7"},
                {"name": "Goblin", "uuid": "b", "save": {"total": 15, "success": True},
                 "damage": {"taken": 4, "applied": True}, "hp": "3/7"},
            ],
            "notes": ["spent a 1st-level slot", "DC 13 Dexterity saving throw"],
        }
    }  # fmt: skip
    seen = views.outcome_on_targets("Elara Quill", "Burning Hands", ["Goblin 1", "Goblin 2"], spell)
    assert seen["summary"] == (
        "Elara Quill uses Burning Hands on Goblin 1, Goblin 2. DEX save DC 13. 9 damage (3d6). "
        "Goblin 1: save 8, failure, takes 9, at 0/7 HP, down. "
        "Goblin 2: save 15, success, takes 4, at 3/7 HP. spent a 1st-level slot."
    )
    assert seen["targets"] == [
        {"name": "Goblin 1", "save": {"total": 8, "success": False},
         "damage": {"taken": 9, "applied": True}, "hp": "0/7"},
        {"name": "Goblin 2", "save": {"total": 15, "success": True},
         "damage": {"taken": 4, "applied": True}, "hp": "3/7"},
    ]  # fmt: skip
    assert seen["spent"] == ["spent a 1st-level slot"]


def test_a_turn_reports_the_defeated_combatants_it_passed_over() -> None:
    order = [{"name": "A"}, {"name": "Goblin 1", "defeated": True}, {"name": "B"}]
    before = {"round": 2, "turn": 0, "order": order}
    assert views.skipped(before, {"round": 2, "turn": 2, "order": order}) == ["Goblin 1"]
    assert views.skipped(before, {"round": 2, "turn": 1, "order": order}) == []
    last = {"round": 2, "turn": 2, "order": order}
    assert views.skipped(last, {"round": 3, "turn": 0, "order": order}) == []
