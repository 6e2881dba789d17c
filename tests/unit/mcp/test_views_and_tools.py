"""The MCP server's pure parts: compact views of relay documents and the tool table."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from vttrelay.mcp import views
from vttrelay.mcp.tools import BY_NAME, TOOLS, usable
from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES

ITEM_NOISE = {"description": {"value": "<p>" + "x" * 2000 + "</p>"}, "activities": {}}


def _item(name: str, kind: str, **system: Any) -> dict[str, Any]:
    return {"_id": name[:16], "name": name, "type": kind, "system": {**ITEM_NOISE, **system}}


DETAILS: dict[str, Any] = {
    "uuid": "Actor.elara",
    "stats": {
        "name": "Elara Quill",
        "level": 3,
        "profBonus": 2,
        "ac": 12,
        "hp": {"value": 7, "max": 20, "temp": 3},
        "speed": 30,
        "exhaustion": 0,
        "initBonus": 2,
        "deathSaves": {"success": 0, "failure": 0},
        "currency": {"pp": 0, "gp": 25, "ep": 0, "sp": 8, "cp": 0},
    },
    "abilities": {
        a: {"value": 10, "mod": 0, "save": 2 if a == "int" else 0, "proficient": 0}
        for a in views.ABILITIES
    },
    "skills": {
        "arc": {"ability": "int", "total": 5, "mod": 3, "value": 1, "passive": 15},
        "ath": {"ability": "str", "total": -1, "mod": -1, "value": 0, "passive": 9},
        "prc": {"ability": "wis", "total": 1, "mod": 1, "value": 0, "passive": 11},
    },
    "details": {"race": "Human", "class": "Wizard", "biography": "<p>long text</p>"},
    "conditions": [{"id": "prone", "name": "Prone"}],
    "concentration": {"active": False},
    "resources": {"primary": {"value": 0, "max": 0, "label": ""}},
    "spellSlots": {"spell1": {"value": 3, "max": 4}, "spell2": {"value": 0, "max": 0}},
    "spells": [
        _item("Fire Bolt", "spell", level=0, preparation={"mode": "prepared", "prepared": True}),
        _item("Shield", "spell", level=1, preparation={"mode": "prepared", "prepared": True}),
        _item("Sleep", "spell", level=1, preparation={"mode": "prepared", "prepared": False}),
        _item("Light", "spell", level=1, preparation={"mode": "always", "prepared": False}),
    ],
    "items": [
        _item("Quarterstaff", "weapon", quantity=1, equipped=True),
        _item("Dagger", "weapon", quantity=1, equipped=False),
        _item("Robes", "equipment", quantity=1, equipped=True),
        _item("Wand of Magic Missiles", "consumable", quantity=1, uses={"max": "7", "spent": 2}),
        _item("Potion of Healing", "consumable", quantity=2, uses={"max": "1", "spent": 0}),
        _item("Torch", "loot", quantity=10),
        _item("Backpack", "container", quantity=1),
    ],
    "features": [
        _item("Arcane Recovery", "feat", uses={"max": "1", "spent": 1}),
        _item("Sage", "background"),
    ],
}


def test_actor_summary_keeps_what_an_agent_needs_in_a_few_hundred_tokens() -> None:
    summary = views.actor_summary(DETAILS)
    assert summary == {
        "uuid": "Actor.elara",
        "name": "Elara Quill",
        "is": "Human Wizard level 3",
        "hp": "7/20 (+3 temp)",
        "ac": 12,
        "speed": 30,
        "initiative": "+2",
        "proficiency": "+2",
        "currency": "25 gp, 8 sp",
        "abilities": {a: f"10 (+0, save {'+2' if a == 'int' else '+0'})" for a in views.ABILITIES},
        "proficientSkills": {"Arcana": "+5"},
        "passivePerception": 11,
        "conditions": ["Prone"],
        "spellSlots": {"1": "3/4"},
        "spells": {"cantrips": ["Fire Bolt"], "level 1": ["Shield", "Light"]},
        "weapons": ["Quarterstaff (equipped)", "Dagger"],
        "armor": ["Robes (equipped)"],
        "consumables": ["Wand of Magic Missiles [5/7 uses]", "Potion of Healing x2"],
        "other": ["Torch x10"],
        "features": ["Arcane Recovery [0/1]"],
    }
    assert len(json.dumps(summary)) < len(json.dumps(DETAILS)) / 5


def test_actor_summary_of_a_downed_actor_shows_death_saves_and_leaves_out_missing_parts() -> None:
    down = {"uuid": "Actor.x", "stats": {**DETAILS["stats"], "hp": {"value": 0, "max": 9}}}
    summary = views.actor_summary(down)
    assert summary["hp"] == "0/9" and summary["deathSaves"] == {"success": 0, "failure": 0}
    assert not {"abilities", "spells", "weapons", "conditions"} & set(summary)


def test_find_item_and_item_view() -> None:
    wand = views.find_item(DETAILS, "wand of magic missiles")
    assert wand is not None
    assert views.item_view(wand) == {
        "name": "Wand of Magic Missiles",
        "type": "consumable",
        "quantity": 1,
        "uses": "5/7",
    }
    assert views.find_item(DETAILS, "Shield", ("feat",)) is None
    assert views.item_view(views.find_item(DETAILS, "shield") or {})["level"] == 1


def test_chat_encounter_and_token_views() -> None:
    message = {
        "id": "m1",
        "content": "<p>Roll  <b>for</b>\ninitiative!</p>",
        "speaker": {"alias": "DM"},
        "flavor": "Stealth Skill Check",
        "rolls": [{"formula": "1d20 + 5", "total": 17}],
    }
    assert views.chat_view([message]) == [
        {
            "id": "m1",
            "speaker": "DM",
            "text": "Roll for initiative!",
            "flavor": "Stealth Skill Check",
            "roll": {"formula": "1d20 + 5", "total": 17},
        }
    ]
    assert views.plain_text("a" * 400, 10) == "a" * 9 + "…"
    fight = {"id": "e1", "round": 2, "turn": 1, "combatants": [
        {"name": "Pip", "initiative": 18}, {"name": "Goblin", "initiative": 12}]}  # fmt: skip
    assert views.encounter_view(fight) == {
        "id": "e1",
        "round": 2,
        "turn": 1,
        "current": "Goblin",
        "order": [{"name": "Pip", "initiative": 18}, {"name": "Goblin", "initiative": 12}],
    }
    token = {"_id": "t1", "name": "Pip", "x": 100, "y": 200, "actorId": "a", "hidden": True}
    assert views.token_view(token) == {
        "name": "Pip", "x": 100, "y": 200, "actorId": "a", "id": "t1", "hidden": True}  # fmt: skip


def test_the_tool_table() -> None:
    assert len(TOOLS) <= 30 and len(BY_NAME) == len(TOOLS)
    for tool in TOOLS:
        schema = tool.input_schema()
        Draft202012Validator.check_schema(schema)
        assert set(tool.required) <= set(schema["properties"]), tool.name
        assert ("dry_run" in schema["properties"]) == tool.changes, tool.name
        assert tool.description.endswith(".") and len(tool.description) > 40, tool.name
        assert tool.scopes and set(tool.scopes) <= set(ALL_SCOPES), tool.name
        assert tool.run is not None
    readers = {t.name for t in usable(DEFAULT_SCOPES)}
    assert "actor_summary" in readers and "send_chat" not in readers
    assert len(usable(None)) == len(TOOLS)
    assert usable(()) == []
