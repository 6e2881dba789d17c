"""The demo actors are valid data: ids, ownership, item shapes per type (world-behaviour §3.1),
and the contract's level-3 facts (xp, slots, pact magic, ki, charges), checked against the SRD
5.1 (hit points, hit dice, saves, skills, proficiencies, languages, cantrips and spells known or
prepared, features and their uses)."""

from __future__ import annotations

import re
from typing import Any

from vttrelay.world.rules import spells
from vttrelay.world.rules.abilities import character_level
from vttrelay.world.rules.items import uses_max
from vttrelay.world.seed import ITEM_KEYS

from .conftest import item_of

ID = re.compile(r"[A-Za-z0-9]{16}")
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
            assert set(item) == set(ITEM_KEYS), (actor_id, item["name"])
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
    assert {"Eldritch Blast", "Command", "Expeditious Retreat", "Dark One's Blessing"} <= {
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
        item = item_of(brann, feature)
        assert uses_max(item["system"]["uses"], brann) == 1
        assert item["system"]["uses"]["recovery"][0]["period"] == "sr"
    wand = item_of(elara, "Wand of Magic Missiles")
    assert wand["system"]["uses"]["max"] == "7"
    assert wand["system"]["uses"]["recovery"] == [
        {"period": "dawn", "type": "formula", "formula": "1d6 + 1"}
    ]
    skin = item_of(pip, "Waterskin")
    assert skin["system"]["uses"]["max"] == "4"


# SRD 5.1 facts of each level-3 character: class hit die, hit points (first level max, then
# the fixed average, plus CON and racial bonuses), proficient saves, skills (background +
# class), weapon and armor proficiencies, tools, number of languages, cantrips known, leveled
# spells known (warlock) or prepared (wizard: INT mod + level), and limited-use features.
SRD_FACTS: dict[str, dict[str, Any]] = {
    "elaraWizard00001": {
        "hd": "d6",
        "hp": 6 + 2 * 4 + 3 * 2,
        "saves": {"int", "wis"},
        "skills": {"arc", "his", "ins", "inv"},
        "weapons": {"dagger", "dart", "sling", "quarterstaff", "lightcrossbow"},
        "armor": set(),
        "tools": set(),
        "languages": 4,  # Common + one (human) + two (sage)
        "cantrips": 3,
        "leveled": 6,  # prepared: INT +3, wizard 3
        "uses": {"Arcane Recovery": ("1", "lr")},
    },
    "corvinWarlock001": {
        "hd": "d8",
        "hp": 8 + 2 * 5 + 3 * 2,
        "saves": {"wis", "cha"},
        "skills": {"arc", "itm", "dec", "slt"},
        "weapons": {"sim"},
        "armor": {"lgt"},
        "tools": {"disg", "forg"},
        "languages": 2,
        # 2 warlock + thaumaturgy (tiefling) + 3 from the Book of Shadows
        "cantrips": 6,
        "leveled": 4,
        "uses": {"Infernal Legacy": ("1", "lr")},
    },
    "brannFighter0001": {
        "hd": "d10",
        "hp": 10 + 2 * 6 + 3 * 3 + 3,  # + dwarven toughness
        "saves": {"str", "con"},
        "skills": {"ath", "itm", "prc", "sur"},
        "weapons": {"sim", "mar"},
        "armor": {"lgt", "med", "hvy", "shl"},
        "tools": {"dice", "smith"},
        "languages": 2,
        "cantrips": 0,
        "leveled": 0,
        "uses": {"Second Wind": ("1", "sr"), "Action Surge": ("1", "sr")},
    },
    "pipMonk000000001": {
        "hd": "d8",
        "hp": 8 + 2 * 5 + 3 * 2,
        "saves": {"str", "dex"},
        "skills": {"acr", "ste", "ins", "rel"},
        "weapons": {"sim", "shortsword"},
        "armor": set(),
        "tools": {"flute"},
        "languages": 4,  # Common, Halfling + two (acolyte)
        "cantrips": 0,
        "leveled": 0,
        "uses": {},
    },
}
SRD_FEATURES = {
    "elaraWizard00001": {"Spellcasting", "Arcane Recovery", "Evocation Savant", "Sculpt Spells"},
    "corvinWarlock001": {
        "Pact Magic",
        "Dark One's Blessing",
        "Eldritch Invocation: Agonizing Blast",
        "Eldritch Invocation: Devil's Sight",
        "Pact Boon: Pact of the Tome",
        "Hellish Resistance",
        "Infernal Legacy",
    },
    "brannFighter0001": {
        "Fighting Style: Defense",
        "Second Wind",
        "Action Surge",
        "Improved Critical",
        "Dwarven Resilience",
        "Dwarven Toughness",
        "Stonecunning",
    },
    "pipMonk000000001": {
        "Unarmored Defense",
        "Martial Arts",
        "Ki",
        "Flurry of Blows",
        "Patient Defense",
        "Step of the Wind",
        "Unarmored Movement",
        "Deflect Missiles",
        "Open Hand Technique",
        "Lucky",
        "Brave",
        "Halfling Nimbleness",
        "Naturally Stealthy",
    },
}


def test_srd_facts_of_the_level_three_characters(actors: dict[str, dict[str, Any]]) -> None:
    for actor_id, facts in SRD_FACTS.items():
        actor = actors[actor_id]
        system = actor["system"]
        cls = next(i for i in actor["items"] if i["type"] == "class")
        assert (cls["system"]["levels"], cls["system"]["hd"]["denomination"]) == (
            3,
            facts["hd"],
        ), actor_id
        hp = system["attributes"]["hp"]
        assert hp["max"] == hp["value"] == facts["hp"], actor_id
        saves = {k for k, v in system["abilities"].items() if v["proficient"]}
        assert saves == facts["saves"], actor_id
        skills = {k for k, v in system["skills"].items() if v["value"]}
        assert skills == facts["skills"], actor_id
        traits = system["traits"]
        assert set(traits["weaponProf"]["value"]) == facts["weapons"], actor_id
        assert set(traits["armorProf"]["value"]) == facts["armor"], actor_id
        assert set(system["tools"]) == facts["tools"], actor_id
        assert len(traits["languages"]["value"]) == facts["languages"], actor_id
        spells_ = [i for i in actor["items"] if i["type"] == "spell"]
        cantrips = [s for s in spells_ if s["system"]["level"] == 0]
        assert len(cantrips) == facts["cantrips"], actor_id
        leveled = [
            s
            for s in spells_
            if s["system"]["level"] > 0
            and (
                s["system"]["preparation"]["mode"] != "prepared"
                or s["system"]["preparation"]["prepared"]
            )
        ]
        assert len(leveled) == facts["leveled"], actor_id
        for spell in spells_:
            system_ = spell["system"]
            has_material = "material" in system_["properties"]
            assert has_material == bool(system_["materials"]["value"]), spell["name"]
        feats = {i["name"] for i in actor["items"] if i["type"] == "feat"}
        assert feats == SRD_FEATURES[actor_id], actor_id
        limited = {
            i["name"]: (i["system"]["uses"]["max"], i["system"]["uses"]["recovery"][0]["period"])
            for i in actor["items"]
            if i["type"] == "feat" and i["system"].get("uses", {}).get("max")
        }
        assert limited == facts["uses"], actor_id
