"""The demo actors are valid data: ids, ownership, item shapes per type (world-behaviour §3.1),
and the contract's level-3 facts (xp, slots, pact magic, ki, charges), checked against the SRD
5.1 (hit points, hit dice, saves, skills, proficiencies, languages, cantrips and spells known or
prepared, features and their uses). The SRD compendium packs likewise: shapes, and SRD 5.1
facts of their items, spells (every demo caster's spell among them) and monster stat blocks."""

from __future__ import annotations

import re
from typing import Any

from tests.support.world import item_of

from vttrelay.world.rules import spells
from vttrelay.world.rules.abilities import ABILITIES, character_level
from vttrelay.world.rules.items import uses_max
from vttrelay.world.store import packs
from vttrelay.world.store.seed import ITEM_KEYS

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


# The SRD 5.1 compendium packs (content/packs/*.json) ------------------------------------------

PACK_IDS = {"dnd5e.items": "Item", "dnd5e.spells": "Item", "dnd5e.monsters": "Actor"}
ITEM_FACTS = {  # name: (damage dice, damage type, versatile die, price, unit, weight)
    "Dagger": ("1d4", "piercing", None, 2, "gp", 1),
    "Quarterstaff": ("1d6", "bludgeoning", 8, 2, "sp", 4),
    "Longsword": ("1d8", "slashing", 10, 15, "gp", 3),
    "Greataxe": ("1d12", "slashing", None, 30, "gp", 7),
    "Light Crossbow": ("1d8", "piercing", None, 25, "gp", 5),
    "Longbow": ("1d8", "piercing", None, 50, "gp", 2),
}
ARMOR_FACTS = {  # name: (AC, Dex cap, Strength, stealth disadvantage, price gp)
    "Leather Armor": (11, None, None, False, 10),
    "Scale Mail": (14, 2, None, True, 50),
    "Chain Mail": (16, 0, 13, True, 75),
    "Plate Armor": (18, 0, 15, True, 1500),
    "Shield": (2, None, None, False, 10),
}
SPELL_FACTS = {  # name: (level, school, range, duration units, concentration, components)
    "Fire Bolt": (0, "evo", "120", "inst", False, "VS"),
    "Ray of Frost": (0, "evo", "60", "inst", False, "VS"),
    "Mage Hand": (0, "con", "30", "minute", False, "VS"),
    "Magic Missile": (1, "evo", "120", "inst", False, "VS"),
    "Cure Wounds": (1, "evo", "", "inst", False, "VS"),
    "Bless": (1, "enc", "30", "minute", True, "VSM"),
    "Detect Magic": (1, "div", "", "minute", True, "VS"),
    "Hold Person": (2, "enc", "60", "minute", True, "VSM"),
    "Invisibility": (2, "ill", "", "hour", True, "VSM"),
    "Fireball": (3, "evo", "150", "inst", False, "VSM"),
}
MONSTER_FACTS = {  # name: (AC, HP, HP dice, CR, STR DEX CON INT WIS CHA)
    "Goblin": (15, 7, "2d6", 0.25, (8, 14, 10, 10, 8, 8)),
    "Wolf": (13, 11, "2d8 + 2", 0.25, (12, 15, 12, 3, 12, 6)),
    "Skeleton": (13, 13, "2d8 + 4", 0.25, (10, 14, 15, 6, 8, 5)),
    "Zombie": (8, 22, "3d8 + 9", 0.25, (13, 6, 16, 3, 6, 5)),
    "Orc": (13, 15, "2d8 + 6", 0.5, (16, 12, 16, 7, 11, 10)),
    "Ogre": (11, 59, "7d10 + 21", 2, (19, 8, 16, 5, 7, 7)),
}
COMPONENTS = {"V": "vocal", "S": "somatic", "M": "material"}


def _average(formula: str) -> int:
    """The average of `NdF + B` (or `NdF - B`), rounded down, as a stat block states it."""
    match = re.fullmatch(r"(\d+)d(\d+)(?: ([+-]) (\d+))?", formula)
    assert match, formula
    number, faces, sign, bonus = match.groups()
    flat = int(bonus or 0) * (-1 if sign == "-" else 1)
    return int(int(number) * (int(faces) + 1) / 2 + flat)


def _mod(score: int) -> int:
    return (score - 10) // 2


def test_packs_load_with_valid_ids_and_document_shapes() -> None:
    loaded = packs.packs()
    assert {p: pack.document_name for p, pack in loaded.items()} == PACK_IDS
    for pack in loaded.values():
        ids = [d["_id"] for d in pack.documents]
        assert all(ID.fullmatch(i) for i in ids) and len(ids) == len(set(ids)), pack.id
        names = [d["name"] for d in pack.documents]
        assert len(names) == len(set(names)), pack.id
        for doc in pack.documents:
            source = doc["system"].get("source") or doc["system"]["details"]["source"]
            assert source["license"] == "CC-BY-4.0", doc["name"]
            items = doc["items"] if pack.document_name == "Actor" else [doc]
            for item in items:
                assert set(item) == set(ITEM_KEYS), (pack.id, item["name"])
                missing = SYSTEM_KEYS.get(item["type"], set()) - set(item["system"])
                assert not missing, (pack.id, item["name"], missing)
        index = pack.index()
        assert [e["uuid"] for e in index] == [pack.doc_uuid(i) for i in ids]
    assert len(loaded["dnd5e.items"].documents) >= 20
    assert len(loaded["dnd5e.spells"].documents) >= 20
    assert len(loaded["dnd5e.monsters"].documents) >= 10


def test_pack_items_are_srd_facts() -> None:
    items = {d["name"]: d for d in packs.packs()["dnd5e.items"].documents}
    potion = items["Potion of Healing"]["system"]
    [heal] = potion["activities"].values()
    assert heal["type"] == "heal" and heal["healing"]["number"] == 2
    assert (heal["healing"]["denomination"], heal["healing"]["bonus"]) == (4, "2")
    assert potion["price"] == {"value": 50, "denomination": "gp"} and potion["rarity"] == "common"
    for name, (dice, kind, versatile, price, unit, weight) in ITEM_FACTS.items():
        system = items[name]["system"]
        base = system["damage"]["base"]
        assert f"{base['number']}d{base['denomination']}" == dice, name
        assert base["types"] == [kind], name
        assert system["damage"]["versatile"]["denomination"] == versatile, name
        assert system["price"] == {"value": price, "denomination": unit}, name
        assert system["weight"]["value"] == weight, name
    for name, (ac, dex, strength, stealth, price) in ARMOR_FACTS.items():
        system = items[name]["system"]
        assert (system["armor"]["value"], system["armor"]["dex"]) == (ac, dex), name
        assert system["strength"] == strength, name
        assert ("stealthDisadvantage" in system["properties"]) == stealth, name
        assert system["price"]["value"] == price, name


def test_pack_spells_are_srd_facts_and_hold_the_demo_casters_spells(
    actors: dict[str, dict[str, Any]],
) -> None:
    pack = {d["name"]: d for d in packs.packs()["dnd5e.spells"].documents}
    for actor in actors.values():
        for spell in (i for i in actor["items"] if i["type"] == "spell"):
            ours = pack[spell["name"]]["system"]
            assert ours["level"] == spell["system"]["level"], spell["name"]
            assert ours["school"] == spell["system"]["school"], spell["name"]
    for name, (level, school, range_, duration, concentration, comps) in SPELL_FACTS.items():
        system = pack[name]["system"]
        assert (system["level"], system["school"]) == (level, school), name
        assert system["range"]["value"] == range_ and system["duration"]["units"] == duration, name
        assert ("concentration" in system["properties"]) == concentration, name
        assert spells.is_concentration(pack[name]) == concentration, name
        components = {p for p in system["properties"] if p in COMPONENTS.values()}
        assert components == {COMPONENTS[c] for c in comps}, name
        assert ("material" in components) == bool(system["materials"]["value"]), name
    [fireball] = pack["Fireball"]["system"]["activities"].values()
    assert fireball["save"]["ability"] == ["dex"] and fireball["damage"]["onSave"] == "half"
    assert fireball["damage"]["parts"][0]["number"] == 8
    assert pack["Fireball"]["system"]["target"]["template"]["size"] == "20"


def test_pack_monsters_are_srd_stat_blocks() -> None:
    monsters = {d["name"]: d for d in packs.packs()["dnd5e.monsters"].documents}
    for name, (ac, hp, dice, cr, scores) in MONSTER_FACTS.items():
        system = monsters[name]["system"]
        assert system["attributes"]["ac"]["flat"] == ac, name
        assert system["attributes"]["hp"]["max"] == hp == system["attributes"]["hp"]["value"]
        assert system["attributes"]["hp"]["formula"] == dice, name
        assert system["details"]["cr"] == cr, name
        abilities = tuple(system["abilities"][a]["value"] for a in ABILITIES)
        assert abilities == scores, name
    for monster in monsters.values():
        system = monster["system"]
        assert monster["type"] == "npc", monster["name"]
        hp = system["attributes"]["hp"]
        assert _average(hp["formula"]) == hp["max"], monster["name"]
        score = {a: system["abilities"][a]["value"] for a in ("str", "dex")}
        for item in (i for i in monster["items"] if i["type"] == "weapon"):
            # the stat block's "+N to hit" and "+ N" damage: proficiency (+2 up to CR 4) plus
            # Strength, Dexterity for ranged weapons, the better of the two for finesse
            ranged = item["system"]["activities"]
            [attack] = ranged.values()
            props = item["system"]["properties"]
            if "fin" in props:
                mod = max(_mod(score["str"]), _mod(score["dex"]))
            elif attack["attack"]["type"]["value"] == "ranged":
                mod = _mod(score["dex"])
            else:
                mod = _mod(score["str"])
            text = item["system"]["description"]["value"]
            assert f"+{mod + 2} to hit" in text, (monster["name"], item["name"])
            assert f" + {mod} " in text, (monster["name"], item["name"])
