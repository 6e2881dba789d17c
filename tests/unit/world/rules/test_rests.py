"""Short and long rests: RestResult keys and order, hit dice, autoHD fraction, slots, uses."""

from __future__ import annotations

from typing import Any

from tests.support.world import item_of

from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.rules.rests import long_rest, short_rest

SHORT_KEYS = [
    "type",
    "deltas",
    "updateData",
    "updateItems",
    "newDay",
    "rolls",
    "clone",
    "dhd",
    "dhp",
    "longRest",
]
LONG_KEYS = [
    "type",
    "deltas",
    "updateData",
    "updateItems",
    "newDay",
    "rolls",
    "clone",
    "dhp",
    "dhd",
    "longRest",
]
CLONE_KEYS = [
    "effects",
    "img",
    "items",
    "name",
    "prototypeToken",
    "system",
    "type",
    "folder",
    "sort",
    "ownership",
    "flags",
    "_stats",
    "_id",
]


def test_short_rest_at_full_health(brann: dict[str, Any]) -> None:
    out = short_rest(brann, Dice(ScriptedRandom([])))
    r = out.result
    assert list(r) == SHORT_KEYS
    assert r["type"] == "short" and r["longRest"] is False and r["newDay"] is False
    assert r["deltas"] == {"hitPoints": 0, "hitDice": 0} and (r["dhd"], r["dhp"]) == (0, 0)
    assert r["updateData"] == {"system.spells.pact.value": 0, "_id": "brannFighter0001"}
    assert r["updateItems"] == [] and r["rolls"] == []
    assert list(r["clone"]) == CLONE_KEYS and r["clone"]["_id"] is None
    assert list(r["clone"]["system"]) == sorted(r["clone"]["system"])
    assert out.content == "Brann Stoneheart takes a short rest."
    assert out.flavor == "Short Rest (1 hour)"


def test_short_rest_recovers_sr_uses_and_resources(
    brann: dict[str, Any], pip: dict[str, Any]
) -> None:
    item_of(brann, "Second Wind")["system"]["uses"]["spent"] = 1
    item_of(brann, "Action Surge")["system"]["uses"]["spent"] = 1
    item_of(brann, "Potion of Healing")["system"]["uses"]["spent"] = 0
    out = short_rest(brann, Dice())
    ids = {item_of(brann, "Second Wind")["_id"], item_of(brann, "Action Surge")["_id"]}
    assert {u["_id"] for u in out.result["updateItems"]} == ids
    assert all(u["system"] == {"uses": {"spent": 0}} for u in out.result["updateItems"])
    assert item_of(out.actor, "Second Wind")["system"]["uses"]["spent"] == 0
    assert item_of(brann, "Second Wind")["system"]["uses"]["spent"] == 1  # input untouched

    pip["system"]["resources"]["primary"]["value"] = 0
    out = short_rest(pip, Dice())
    assert out.result["updateData"] == {
        "system.resources.primary.value": 3,
        "system.spells.pact.value": 0,
        "_id": "pipMonk000000001",
    }
    assert out.actor["system"]["resources"]["primary"]["value"] == 3


def test_short_rest_restores_pact_slots_not_leveled(
    corvin: dict[str, Any], elara: dict[str, Any]
) -> None:
    corvin["system"]["spells"]["pact"]["value"] = 0
    out = short_rest(corvin, Dice())
    assert out.result["updateData"]["system.spells.pact.value"] == 2
    assert out.actor["system"]["spells"]["pact"]["value"] == 2
    elara["system"]["spells"]["spell1"]["value"] = 0
    out = short_rest(elara, Dice())
    assert out.actor["system"]["spells"]["spell1"]["value"] == 0


def test_auto_hd_spends_while_below_fraction(brann: dict[str, Any]) -> None:
    brann["system"]["attributes"]["hp"]["value"] = 10  # of 34; CON +3, d10 hit dice
    # threshold 0.5: spend while hp < 17. First die 2 -> 15 (< 17), second die 6 -> 24: stop.
    out = short_rest(brann, Dice(ScriptedRandom([2, 6])), auto_hd=True, threshold=0.5)
    assert out.result["deltas"] == {"hitPoints": 14, "hitDice": -2}
    assert (out.result["dhd"], out.result["dhp"]) == (-2, 14)
    assert out.actor["system"]["attributes"]["hp"]["value"] == 24
    assert item_of(out.actor, "Fighter")["system"]["hd"]["spent"] == 2
    assert [r.formula for r in out.hit_die_rolls] == ["1d10 + 3", "1d10 + 3"]
    assert "hitPoints" not in str(out.result["updateData"])
    assert out.content == (
        "Brann Stoneheart takes a short rest spending 2 Hit Dice to recover 14 Hit Points."
    )


def test_auto_hd_stops_when_dice_run_out_and_never_overheals(brann: dict[str, Any]) -> None:
    brann["system"]["attributes"]["hp"]["value"] = 1
    out = short_rest(brann, Dice(ScriptedRandom([1, 1, 1])), auto_hd=True, threshold=1.0)
    assert out.result["deltas"] == {"hitPoints": 12, "hitDice": -3}
    brann["system"]["attributes"]["hp"]["value"] = 30
    out = short_rest(brann, Dice(ScriptedRandom([10])), auto_hd=True, threshold=1.0)
    assert out.actor["system"]["attributes"]["hp"]["value"] == 34
    assert out.result["deltas"] == {"hitPoints": 4, "hitDice": -1}


def test_long_rest_restores_everything(elara: dict[str, Any]) -> None:
    elara["system"]["attributes"]["hp"]["value"] = 0
    elara["system"]["spells"]["spell1"]["value"] = 1
    elara["system"]["spells"]["spell2"]["value"] = 0
    item_of(elara, "Wizard")["system"]["hd"]["spent"] = 3
    item_of(elara, "Arcane Recovery")["system"]["uses"]["spent"] = 1
    item_of(elara, "Wand of Magic Missiles")["system"]["uses"]["spent"] = 7
    out = long_rest(elara, Dice(ScriptedRandom([4])))
    r = out.result
    assert list(r) == LONG_KEYS
    assert r["type"] == "long" and r["longRest"] is True and r["newDay"] is True
    assert r["deltas"] == {"hitPoints": 20, "hitDice": 3} and (r["dhp"], r["dhd"]) == (20, 3)
    keys = list(r["updateData"])
    assert keys[0] == "system.attributes.hp.value" and keys[-1] == "_id"
    assert keys[1:-1] == ["system.spells.pact.value"] + [
        f"system.spells.spell{n}.value" for n in range(1, 10)
    ]
    assert r["updateData"]["system.spells.spell1.value"] == 4
    assert r["updateData"]["system.spells.spell2.value"] == 2
    wizard, recovery, wand = r["updateItems"]
    assert wizard == {"_id": item_of(elara, "Wizard")["_id"], "system.hd.spent": 0}
    assert recovery["system"] == {"uses": {"spent": 0}}
    # the wand regains 1d6 + 1 at dawn: a 4 -> 5 charges back, 2 still spent
    assert wand["system"] == {"uses": {"spent": 2}}
    assert r["rolls"][0]["formula"] == "1d6 + 1" and r["rolls"][0]["total"] == 5
    assert out.actor["system"]["attributes"]["hp"]["value"] == 20
    assert out.content == "Elara Quill takes a long rest and recovers 20 hit points and 3 hit dice."
    assert out.flavor == "Long Rest (8 hours, new day)"


def test_long_rest_without_new_day_skips_dawn_recovery(elara: dict[str, Any]) -> None:
    item_of(elara, "Wand of Magic Missiles")["system"]["uses"]["spent"] = 7
    out = long_rest(elara, Dice(), new_day=False)
    assert out.result["newDay"] is False and out.result["rolls"] == []
    assert item_of(out.actor, "Wand of Magic Missiles")["system"]["uses"]["spent"] == 7


def test_long_rest_legacy_rules_recover_half_hit_dice(brann: dict[str, Any]) -> None:
    item_of(brann, "Fighter")["system"]["hd"]["spent"] = 3
    out = long_rest(brann, Dice(), rules="legacy")
    assert out.result["deltas"]["hitDice"] == 1
    assert item_of(out.actor, "Fighter")["system"]["hd"]["spent"] == 2


def test_long_rest_refills_only_lr_resources(pip: dict[str, Any]) -> None:
    pip["system"]["resources"]["primary"]["value"] = 0
    pip["system"]["resources"]["secondary"] = {
        "value": 0,
        "max": 2,
        "sr": True,
        "lr": False,
        "label": "x",
    }
    out = long_rest(pip, Dice())
    assert out.result["updateData"]["system.resources.primary.value"] == 3
    assert "system.resources.secondary.value" not in out.result["updateData"]


def test_temp_hp_is_not_reset(brann: dict[str, Any]) -> None:
    brann["system"]["attributes"]["hp"]["temp"] = 5
    out = long_rest(brann, Dice())
    assert out.actor["system"]["attributes"]["hp"]["temp"] == 5


def test_npc_spends_its_own_hit_dice(goblin: dict[str, Any]) -> None:
    goblin["system"]["attributes"]["hp"]["value"] = 1  # of 7, hit dice 2d6, CON +0
    out = short_rest(goblin, Dice(ScriptedRandom([2, 1])), auto_hd=True)
    assert out.result["deltas"] == {"hitPoints": 3, "hitDice": -2}
    assert [r.formula for r in out.hit_die_rolls] == ["1d6 + 0", "1d6 + 0"]
    assert out.actor["system"]["attributes"]["hd"]["spent"] == 2


def test_long_rest_lowers_exhaustion_by_one(brann: dict[str, Any]) -> None:
    brann["system"]["attributes"]["exhaustion"] = 2
    brann["system"]["attributes"]["hp"]["value"] = 20
    for rules in ("modern", "legacy"):
        out = long_rest(brann, Dice(), rules=rules)
        update = out.result["updateData"]
        assert list(update)[:2] == ["system.attributes.hp.value", "system.attributes.exhaustion"]
        assert update["system.attributes.exhaustion"] == 1
        assert out.actor["system"]["attributes"]["exhaustion"] == 1
        assert out.content == (
            "Brann Stoneheart takes a long rest and recovers 14 hit points and a level of "
            "exhaustion."
        )
    once = long_rest(brann, Dice()).actor
    twice = long_rest(once, Dice())
    assert twice.actor["system"]["attributes"]["exhaustion"] == 0
    # at 0 nothing is written
    thrice = long_rest(twice.actor, Dice())
    assert "system.attributes.exhaustion" not in thrice.result["updateData"]
    assert thrice.actor["system"]["attributes"]["exhaustion"] == 0
    # a short rest leaves exhaustion alone
    brann["system"]["attributes"]["exhaustion"] = 2
    assert short_rest(brann, Dice()).actor["system"]["attributes"]["exhaustion"] == 2


def test_rests_record_the_latest_rest(elara: dict[str, Any]) -> None:
    short = short_rest(elara, Dice())
    assert short.actor["flags"]["vttrelay"]["lastRest"] == "short"
    assert "vttrelay" not in short.result["clone"]["flags"]  # the clone is the actor before
    assert long_rest(short.actor, Dice()).actor["flags"]["vttrelay"]["lastRest"] == "long"
