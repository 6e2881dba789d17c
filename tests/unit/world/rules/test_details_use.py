"""get-actor-details sections and using items: slots, uses, ki, attacks, healing."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import item_of

from vttrelay.world.errors import UseError
from vttrelay.world.rules.concentration import new_concentration_effect
from vttrelay.world.rules.details import DETAIL_NAMES, actor_details
from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.rules.rests import long_rest, short_rest
from vttrelay.world.rules.use import apply_healing, use_item
from vttrelay.world.store.seed import ITEM_KEYS


def test_details_key_order_is_fixed(elara: dict[str, Any]) -> None:
    out = actor_details(elara, "Actor.elaraWizard00001", list(reversed(DETAIL_NAMES)) + ["bogus"])
    assert list(out) == [
        "uuid",
        "resources",
        "spells",
        "spellSlots",
        "items",
        "features",
        "stats",
        "abilities",
        "skills",
        "details",
        "conditions",
        "concentration",
    ]
    only_items = actor_details(elara, "x", ["items"])
    assert list(only_items) == ["uuid", "items"]


def test_details_sections(elara: dict[str, Any]) -> None:
    out = actor_details(elara, "Actor.elaraWizard00001", list(DETAIL_NAMES))
    assert list(out["resources"]["primary"]) == ["value", "max", "sr", "lr", "label"]
    assert all(set(i) == set(ITEM_KEYS) for i in out["spells"] + out["items"] + out["features"])
    assert {i["type"] for i in out["items"]} <= {
        "weapon",
        "equipment",
        "consumable",
        "tool",
        "loot",
    }
    assert "Backpack" not in [i["name"] for i in out["items"]]  # containers are excluded
    assert {i["type"] for i in out["features"]} == {"feat", "background", "class", "subclass"}
    assert list(out["stats"]) == [
        "name",
        "img",
        "uuid",
        "level",
        "profBonus",
        "ac",
        "hp",
        "speed",
        "exhaustion",
        "inspiration",
        "initBonus",
        "deathSaves",
        "encumbrance",
        "currency",
    ]
    assert out["stats"]["level"] == 3 and out["stats"]["ac"] == 12
    assert out["abilities"]["int"] == {"value": 16, "mod": 3, "save": 5, "proficient": 1}
    assert list(out["skills"]) == sorted(out["skills"]) and len(out["skills"]) == 18
    assert out["skills"]["arc"] == {
        "ability": "int",
        "total": 5,
        "mod": 3,
        "value": 1,
        "passive": 15,
    }
    assert list(out["details"]) == [
        "race",
        "background",
        "class",
        "alignment",
        "biography",
        "age",
        "height",
        "weight",
        "eyes",
        "skin",
        "hair",
        "faith",
        "gender",
        "trait",
        "ideal",
        "bond",
        "flaw",
        "notes",
        "journal",
        "goals",
    ]
    assert all(isinstance(v, str) for v in out["details"].values())
    assert list(out["abilities"]) == ["str", "dex", "con", "int", "wis", "cha"]
    assert all(list(a) == ["value", "mod", "save", "proficient"] for a in out["abilities"].values())
    assert list(out["stats"]["hp"]) == ["value", "max", "temp"]
    assert list(out["stats"]["deathSaves"]) == ["success", "failure"]
    assert list(out["stats"]["encumbrance"]) == ["value", "max"]
    assert list(out["stats"]["currency"]) == ["pp", "gp", "ep", "sp", "cp"]
    assert (out["details"]["race"], out["details"]["class"]) == ("Human", "Wizard")
    assert len(out["details"]) == 20
    assert out["conditions"] == [] and out["concentration"] == {"active": False}


def test_spell_spends_slot_and_fails_without(elara: dict[str, Any]) -> None:
    item_id = item_of(elara, "Misty Step")["_id"]
    actor = elara
    for left in (1, 0):
        out = use_item(actor, item_id, Dice())
        actor = out.actor
        assert actor["system"]["spells"]["spell2"]["value"] == left
    with pytest.raises(UseError, match="No spell slots of level 2 remaining"):
        use_item(actor, item_id, Dice())


def test_attack_cantrip_rolls_to_hit_with_dice(
    elara: dict[str, Any], actors: dict[str, Any]
) -> None:
    goblin = actors["goblinNpc0000001"]
    out = use_item(
        elara, item_of(elara, "Fire Bolt")["_id"], Dice(ScriptedRandom([20, 7, 3])), target=goblin
    )
    assert out.attack is not None
    assert out.attack.formula == "1d20 + 3 + 2" and out.attack.total == 25
    assert out.attack.is_critical
    assert out.attack.dice == [{"faces": 20, "results": [{"result": 20, "active": True}]}]
    assert out.rolls[1].formula == "2d10"  # critical: doubled damage dice
    assert any("hits Goblin (AC 15)" in n for n in out.notes)


def test_champion_crits_on_19(brann: dict[str, Any]) -> None:
    out = use_item(brann, item_of(brann, "Longsword")["_id"], Dice(ScriptedRandom([19, 5, 5])))
    assert out.attack is not None and out.attack.is_critical
    assert out.attack.formula == "1d20 + 3 + 2"
    assert out.rolls[1].formula == "2d8 + 3"


def test_limited_use_feature_spends_and_fails(brann: dict[str, Any]) -> None:
    brann["system"]["attributes"]["hp"]["value"] = 20
    sw = item_of(brann, "Second Wind")["_id"]
    out = use_item(brann, sw, Dice(ScriptedRandom([6])))
    assert out.healing == 9  # 1d10 + fighter level 3
    assert out.rolls[0].formula == "1d10 + 3"
    with pytest.raises(UseError, match="no uses remaining"):
        use_item(out.actor, sw, Dice())


def test_ki_feature_spends_resource(pip: dict[str, Any]) -> None:
    actor = pip
    for _ in range(3):
        actor = use_item(actor, item_of(pip, "Patient Defense")["_id"], Dice()).actor
    assert actor["system"]["resources"]["primary"]["value"] == 0
    with pytest.raises(UseError, match="Not enough Ki Points"):
        use_item(actor, item_of(pip, "Step of the Wind")["_id"], Dice())


def test_consumable_stack_and_destroy(brann: dict[str, Any]) -> None:
    potion_id = item_of(brann, "Potion of Healing")["_id"]
    out = use_item(brann, potion_id, Dice(ScriptedRandom([2, 3])))
    assert out.healing == 7 and out.rolls[0].formula == "2d4 + 2"
    assert item_of(out.actor, "Potion of Healing")["system"]["quantity"] == 1
    out = use_item(out.actor, potion_id, Dice())
    assert out.destroyed and out.item is None
    assert all(i["_id"] != potion_id for i in out.actor["items"])


def test_charged_item_spends_a_charge(elara: dict[str, Any]) -> None:
    wand_id = item_of(elara, "Wand of Magic Missiles")["_id"]
    out = use_item(elara, wand_id, Dice(ScriptedRandom([1, 2, 3])))
    assert item_of(out.actor, "Wand of Magic Missiles")["system"]["uses"]["spent"] == 1
    assert out.rolls[0].formula == "3d4 + 3" and out.rolls[0].total == 9


def test_waterskin_keeps_when_empty(brann: dict[str, Any]) -> None:
    skin_id = item_of(brann, "Waterskin")["_id"]
    actor = brann
    for _ in range(4):
        actor = use_item(actor, skin_id, Dice()).actor
    assert item_of(actor, "Waterskin")["system"]["uses"]["spent"] == 4
    with pytest.raises(UseError, match="no uses remaining"):
        use_item(actor, skin_id, Dice())


def test_concentration_spell_flag(corvin: dict[str, Any]) -> None:
    out = use_item(corvin, item_of(corvin, "Expeditious Retreat")["_id"], Dice())
    assert out.concentration and out.actor["system"]["spells"]["pact"]["value"] == 1


def test_apply_healing_caps_and_resets_death_saves(pip: dict[str, Any]) -> None:
    pip["system"]["attributes"]["hp"]["value"] = 0
    pip["system"]["attributes"]["death"].update(success=1, failure=2)
    assert apply_healing(pip, 100) == 24
    assert pip["system"]["attributes"]["death"]["failure"] == 0


def test_arcane_recovery_regains_slots_up_to_half_wizard_level(elara: dict[str, Any]) -> None:
    elara["system"]["spells"]["spell1"]["value"] = 1
    elara["system"]["spells"]["spell2"]["value"] = 0
    rested = short_rest(elara, Dice()).actor
    out = use_item(rested, item_of(elara, "Arcane Recovery")["_id"], Dice())
    # budget ceil(3 / 2) = 2: one 2nd-level slot, highest first
    assert out.actor["system"]["spells"]["spell2"]["value"] == 1
    assert out.actor["system"]["spells"]["spell1"]["value"] == 1
    assert "regained spell slots: 2nd" in out.notes
    assert item_of(out.actor, "Arcane Recovery")["system"]["uses"]["spent"] == 1
    # once per long rest: another short rest does not give it back
    again = short_rest(out.actor, Dice()).actor
    with pytest.raises(UseError, match=r"^Arcane Recovery has no uses remaining \(0 of 1\)$"):
        use_item(again, item_of(elara, "Arcane Recovery")["_id"], Dice())


def test_arcane_recovery_only_after_a_short_rest(elara: dict[str, Any]) -> None:
    feature = item_of(elara, "Arcane Recovery")["_id"]
    elara["system"]["spells"]["spell1"]["value"] = 0
    with pytest.raises(UseError, match="^Arcane Recovery can only be used after a short rest$"):
        use_item(elara, feature, Dice())
    # a long rest refills its use but it still waits for a short rest
    after_long = long_rest(elara, Dice()).actor
    after_long["system"]["spells"]["spell1"]["value"] = 0
    with pytest.raises(UseError, match="only be used after a short rest"):
        use_item(after_long, feature, Dice())
    rested = short_rest(after_long, Dice()).actor
    out = use_item(rested, feature, Dice())
    assert out.actor["system"]["spells"]["spell1"]["value"] == 2  # two 1st-level slots back
    assert "regained spell slots: 1st, 1st" in out.notes


def test_arcane_recovery_with_nothing_to_recover_spends_nothing(elara: dict[str, Any]) -> None:
    rested = short_rest(elara, Dice()).actor  # every slot is full
    with pytest.raises(
        UseError,
        match="^Arcane Recovery: Elara Quill has no expended spell slots to recover$",
    ):
        use_item(rested, item_of(elara, "Arcane Recovery")["_id"], Dice())
    assert item_of(rested, "Arcane Recovery")["system"]["uses"]["spent"] == 0


def test_command_is_a_wisdom_save_against_the_pact_dc(corvin: dict[str, Any]) -> None:
    out = use_item(corvin, item_of(corvin, "Command")["_id"], Dice())
    # 8 + proficiency 2 + Charisma 3
    assert out.activity_type == "save" and "DC 13 Wisdom saving throw" in out.notes
    assert out.rolls == [] and not out.concentration
    assert out.actor["system"]["spells"]["pact"]["value"] == 1


def test_a_miss_rolls_no_damage(brann: dict[str, Any], actors: dict[str, Any]) -> None:
    out = use_item(
        brann,
        item_of(brann, "Longsword")["_id"],
        Dice(ScriptedRandom([5])),
        target=actors["wolfNpc000000001"],
    )
    assert out.attack is not None and out.attack.total == 10
    assert [r.formula for r in out.rolls] == ["1d20 + 3 + 2"]
    assert "misses Wolf (AC 13)" in out.notes


def test_conditions_and_concentration_of_a_concentrating_caster(elara: dict[str, Any]) -> None:
    elara["effects"].append(
        new_concentration_effect(
            "eff0000000000001",
            spell_name="Hold Person",
            origin="Actor.elaraWizard00001.Item.x",
            img="",
            now_ms=1,
        )
    )
    out = actor_details(elara, "Actor.elaraWizard00001", ["conditions"])
    assert list(out) == ["uuid", "conditions", "concentration"]
    assert out["conditions"] == [{"id": "concentrating", "name": "Concentrating"}]
    assert out["concentration"] == {"active": True, "name": "Concentrating: Hold Person"}
