"""The demo actors are valid data: ids, ownership, item shapes per type (world-behaviour §3.1),
and the contract's level-3 facts (xp, slots, pact magic, ki, charges)."""

from __future__ import annotations

import re
from typing import Any

from vttrelay.world.rules import spells
from vttrelay.world.rules.abilities import character_level
from vttrelay.world.rules.items import uses_max

ID = re.compile(r"[A-Za-z0-9]{16}")
ITEM_KEYS = {
    "_id",
    "_stats",
    "effects",
    "flags",
    "folder",
    "img",
    "name",
    "ownership",
    "sort",
    "system",
    "type",
}
LOOT = {
    "container",
    "description",
    "identified",
    "identifier",
    "price",
    "properties",
    "quantity",
    "rarity",
    "source",
    "type",
    "unidentified",
    "weight",
}
CONSUMABLE = LOOT | {
    "activities",
    "attuned",
    "attunement",
    "damage",
    "equipped",
    "magicalBonus",
    "uses",
}
SYSTEM_KEYS = {
    "loot": LOOT,
    "consumable": CONSUMABLE,
    "weapon": CONSUMABLE
    | {"ammunition", "armor", "cover", "crewed", "hp", "mastery", "proficient", "range"},
    "equipment": {
        "activities",
        "armor",
        "attuned",
        "attunement",
        "container",
        "cover",
        "crewed",
        "description",
        "equipped",
        "hp",
        "identified",
        "identifier",
        "price",
        "proficient",
        "properties",
        "quantity",
        "rarity",
        "source",
        "speed",
        "strength",
        "type",
        "unidentified",
        "uses",
        "weight",
    },
    "spell": {
        "activation",
        "activities",
        "description",
        "duration",
        "identifier",
        "level",
        "materials",
        "preparation",
        "properties",
        "range",
        "school",
        "source",
        "target",
        "uses",
    },
    "feat": {
        "activities",
        "advancement",
        "crewed",
        "description",
        "enchant",
        "identifier",
        "prerequisites",
        "properties",
        "requirements",
        "source",
        "type",
        "uses",
    },
    "class": {
        "advancement",
        "description",
        "hd",
        "identifier",
        "levels",
        "primaryAbility",
        "source",
        "spellcasting",
        "startingEquipment",
        "wealth",
    },
    "background": {"advancement", "description", "identifier", "source", "startingEquipment"},
}
OWNERS = {
    "elaraWizard00001": "playerAria000001",
    "corvinWarlock001": "playerBen0000001",
    "brannFighter0001": "playerAria000001",
    "pipMonk000000001": "playerBen0000001",
}
PLAYERS = {"playerAria000001", "playerBen0000001"}


def test_ids_ownership_and_item_shapes(actors: dict[str, dict[str, Any]]) -> None:
    assert set(actors) == {*OWNERS, "goblinNpc0000001", "banditNpc0000001", "wolfNpc000000001"}
    for actor_id, actor in actors.items():
        ids = [i["_id"] for i in actor["items"]]
        assert all(ID.fullmatch(i) for i in ids) and len(ids) == len(set(ids)), actor_id
        owner = OWNERS.get(actor_id)
        if owner:
            other = (PLAYERS - {owner}).pop()
            assert actor["ownership"] == {"default": 0, owner: 3, other: 1}
            assert actor["type"] == "character"
        else:
            assert actor["ownership"] == {"default": 0} and actor["type"] == "npc"
        for item in actor["items"]:
            assert set(item) == ITEM_KEYS, (actor_id, item["name"])
            expected = SYSTEM_KEYS.get(item["type"])
            if expected:
                missing = expected - set(item["system"])
                assert not missing, (actor_id, item["name"], missing)
            uses = item["system"].get("uses")
            if isinstance(uses, dict):
                assert isinstance(uses["max"], str) and "spent" in uses and "recovery" in uses


def test_level_three_facts(actors: dict[str, dict[str, Any]]) -> None:
    for actor_id in OWNERS:
        actor = actors[actor_id]
        assert character_level(actor) == 3
        assert actor["system"]["details"]["xp"]["value"] == 900
        assert {i["type"] for i in actor["items"]} >= {"class", "subclass", "background", "race"}
    elara, corvin = actors["elaraWizard00001"], actors["corvinWarlock001"]
    assert spells.slots_view(elara) == {
        "spell1": {"value": 4, "max": 4},
        "spell2": {"value": 2, "max": 2},
    }
    assert spells.slots_view(corvin) == {"pact": {"value": 2, "max": 2, "level": 2}}
    names = {i["name"] for i in elara["items"]}
    assert {
        "Magic Missile",
        "Shield",
        "Burning Hands",
        "Misty Step",
        "Scorching Ray",
        "Arcane Recovery",
        "Fire Bolt",
        "Wand of Magic Missiles",
    } <= names
    assert {"Eldritch Blast", "Hex", "Armor of Agathys", "Dark One's Blessing"} <= {
        i["name"] for i in corvin["items"]
    }
    pip = actors["pipMonk000000001"]
    assert pip["system"]["resources"]["primary"] == {
        "value": 3,
        "max": 3,
        "sr": True,
        "lr": True,
        "label": "Ki Points",
    }
    brann = actors["brannFighter0001"]
    for feature in ("Second Wind", "Action Surge"):
        item = next(i for i in brann["items"] if i["name"] == feature)
        assert uses_max(item["system"]["uses"], brann) == 1
        assert item["system"]["uses"]["recovery"][0]["period"] == "sr"
    wand = next(i for i in elara["items"] if i["name"] == "Wand of Magic Missiles")
    assert wand["system"]["uses"]["max"] == "7"
    assert wand["system"]["uses"]["recovery"] == [
        {"period": "dawn", "type": "formula", "formula": "1d6 + 1"}
    ]
    skin = next(i for i in pip["items"] if i["name"] == "Waterskin")
    assert skin["system"]["uses"]["max"] == "4"
