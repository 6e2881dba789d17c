"""Ability modifiers, proficiency, saves, skills and the d20 formulas of world-behaviour §3.5."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.rules import abilities as ab
from vttrelay.world.rules.dice import Dice, ScriptedRandom


@pytest.mark.parametrize(("score", "mod"), [(1, -5), (8, -1), (9, -1), (10, 0), (11, 0), (16, 3)])
def test_ability_modifier(score: int, mod: int) -> None:
    assert ab.ability_modifier(score) == mod


def test_proficiency_by_level_and_cr(brann: dict[str, Any], goblin: dict[str, Any]) -> None:
    assert ab.character_level(brann) == 3
    assert ab.proficiency_bonus(brann) == 2
    brann["items"][[i["type"] for i in brann["items"]].index("class")]["system"]["levels"] = 5
    assert ab.proficiency_bonus(brann) == 3
    assert ab.proficiency_bonus(goblin) == 2
    goblin["system"]["details"]["cr"] = 9
    assert ab.proficiency_bonus(goblin) == 4


def test_skill_formula_with_proficiency(elara: dict[str, Any]) -> None:
    # Arcana: INT 16 (+3), proficient (+2)
    assert ab.skill_formula(elara, "arc") == "1d20 + 3 + 2"
    assert ab.skill_total(elara, "arc") == 5
    assert ab.skill_passive(elara, "arc") == 15
    # Athletics: STR 8 (-1), not proficient
    assert ab.skill_formula(elara, "ath") == "1d20 - 1"


def test_bonus_comes_first_and_advantage_terms(elara: dict[str, Any]) -> None:
    assert ab.skill_formula(elara, "arc", bonus="1d4") == "1d20 + 1d4 + 3 + 2"
    assert ab.skill_formula(elara, "arc", bonus="+2", advantage=True) == "2d20kh + 2 + 3 + 2"
    assert ab.skill_formula(elara, "arc", disadvantage=True) == "2d20kl + 3 + 2"
    assert ab.skill_formula(elara, "arc", advantage=True, disadvantage=True) == "1d20 + 3 + 2"


def test_half_and_double_proficiency(elara: dict[str, Any]) -> None:
    elara["system"]["skills"]["his"]["value"] = 2
    assert ab.skill_formula(elara, "his") == "1d20 + 3 + 4"
    elara["system"]["skills"]["nat"]["value"] = 0.5
    assert ab.skill_formula(elara, "nat") == "1d20 + 3 + 1"


def test_save_formulas(elara: dict[str, Any], brann: dict[str, Any]) -> None:
    assert ab.save_formula(elara, "int") == "1d20 + 3 + 2"
    assert ab.save_formula(elara, "str") == "1d20 - 1"
    # dexterity saves carry the cover term, 0 normally
    assert ab.save_formula(elara, "dex") == "1d20 + 2 + 0"
    assert ab.save_formula(brann, "con") == "1d20 + 3 + 2"
    assert ab.save_bonus(brann, "con") == 5


def test_check_formula(brann: dict[str, Any]) -> None:
    assert ab.check_formula(brann, "str") == "1d20 + 3"
    brann["system"]["abilities"]["str"]["bonuses"]["check"] = "1"
    brann["system"]["bonuses"]["abilities"]["check"] = "@prof"
    assert ab.check_formula(brann, "str") == "1d20 + 3 + 1 + 2"


def test_formula_rolls_to_result_string(elara: dict[str, Any]) -> None:
    roll = Dice(ScriptedRandom([14])).roll(ab.skill_formula(elara, "arc"))
    assert (roll.formula, roll.result, roll.total) == ("1d20 + 3 + 2", "14 + 3 + 2", 19)


def test_resolve_formula(brann: dict[str, Any]) -> None:
    assert ab.resolve_formula("1d10 + @classes.fighter.levels", brann) == "1d10 + 3"
    assert ab.resolve_formula("@abilities.con.mod + @prof + @nothing", brann) == "3 + 2 + 0"
