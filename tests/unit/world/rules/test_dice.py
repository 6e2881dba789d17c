"""Dice: formulas, per-die results, keep/drop, criticals and fumbles, injectable randomness."""

from __future__ import annotations

import random

import pytest

from vttrelay.world.errors import DiceError
from vttrelay.world.rules.dice import Dice, ScriptedRandom


def test_same_seed_same_rolls_and_independent_sources() -> None:
    a, b = Dice(random.Random(7)), Dice(random.Random(7))
    first = [a.roll("1d20 + 3").total for _ in range(20)]
    # a differently seeded roller in between must not disturb b's sequence
    other = Dice(random.Random(99))
    second = []
    for _ in range(20):
        other.roll("4d6")
        second.append(b.roll("1d20 + 3").total)
    assert first == second
    assert all(4 <= t <= 23 for t in first)


def test_global_random_is_untouched() -> None:
    random.seed(5)
    expected = [random.random() for _ in range(3)]
    random.seed(5)
    Dice(random.Random(1)).roll("10d20")
    assert [random.random() for _ in range(3)] == expected


def test_formula_result_total_with_scripted_faces() -> None:
    roll = Dice(ScriptedRandom([14])).roll("1d20 + 2 + 3")
    assert (roll.formula, roll.result, roll.total) == ("1d20 + 2 + 3", "14 + 2 + 3", 19)
    assert roll.dice == [{"faces": 20, "results": [{"result": 14, "active": True}]}]
    assert not roll.is_critical and not roll.is_fumble


def test_negative_modifier() -> None:
    roll = Dice(ScriptedRandom([16])).roll("1d20 - 1")
    assert (roll.result, roll.total) == ("16 - 1", 15)


def test_advantage_keeps_highest_and_marks_dropped_die_inactive() -> None:
    roll = Dice(ScriptedRandom([5, 20])).roll("2d20kh + 4")
    assert roll.formula == "2d20kh + 4"
    assert roll.total == 24 and roll.result == "20 + 4"
    assert roll.dice == [
        {
            "faces": 20,
            "results": [{"result": 5, "active": False}, {"result": 20, "active": True}],
        }
    ]
    assert roll.is_critical and not roll.is_fumble


def test_disadvantage_keeps_lowest_and_nat_1_is_fumble() -> None:
    roll = Dice(ScriptedRandom([1, 18])).roll("2d20kl")
    assert roll.total == 1 and roll.is_fumble and not roll.is_critical
    assert [r["active"] for r in roll.dice[0]["results"]] == [True, False]


def test_critical_threshold_for_improved_critical() -> None:
    assert Dice(ScriptedRandom([19])).roll("1d20 + 5", critical=19).is_critical
    assert not Dice(ScriptedRandom([19])).roll("1d20 + 5").is_critical


def test_non_d20_rolls_are_never_critical() -> None:
    roll = Dice(ScriptedRandom([6, 6])).roll("2d6 + 1")
    assert roll.total == 13 and not roll.is_critical and not roll.is_fumble
    assert roll.result == "12 + 1"


def test_flat_number_is_deterministic() -> None:
    roll = Dice().roll("4")
    assert roll.total == 4 and roll.is_deterministic and roll.dice == []
    assert not Dice().roll("1d4").is_deterministic


def test_to_chat_keys() -> None:
    chat = Dice(ScriptedRandom([3])).roll("1d6 + 1").to_chat()
    assert list(chat) == ["formula", "total", "isCritical", "isFumble", "dice"]
    assert chat["total"] == 4


@pytest.mark.parametrize("formula", ["", "1d", "abc", "1d20 +"])
def test_bad_formula_raises_dice_error(formula: str) -> None:
    with pytest.raises(DiceError):
        Dice().roll(formula)
