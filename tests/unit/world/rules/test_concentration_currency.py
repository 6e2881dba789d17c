"""Concentration DC and effect lookup; currency transfers validated per denomination."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.errors import CurrencyError
from vttrelay.world.rules.concentration import (
    concentration_dc,
    concentration_effect,
    new_concentration_effect,
)
from vttrelay.world.rules.currency import balance, modify, plan_transfer, transfer_amounts


@pytest.mark.parametrize(
    ("damage", "dc"), [(0, 10), (15, 10), (21, 10), (22, 11), (23, 11), (50, 25)]
)
def test_concentration_dc(damage: int, dc: int) -> None:
    assert concentration_dc(damage) == dc


def test_concentration_effect_found_by_status(elara: dict[str, Any]) -> None:
    assert concentration_effect(elara) is None
    effect = new_concentration_effect(
        "effConc000000001", spell_name="Hold Person", origin="Actor.x.Item.y", img="", now_ms=1
    )
    elara["effects"].append({"_id": "other00000000001", "statuses": ["prone"]})
    elara["effects"].append(effect)
    assert concentration_effect(elara) is effect
    effect["statuses"] = ["concentration"]
    assert concentration_effect(elara) is effect


def test_transfer_amounts_ignore_non_positive_and_unknown() -> None:
    assert transfer_amounts({"gp": 5, "sp": 0, "cp": -3, "xx": 9, "ep": "2", "pp": True}) == {
        "gp": 5
    }
    with pytest.raises(CurrencyError, match="whole"):
        transfer_amounts({"gp": 1.5})


def test_plan_transfer_is_per_denomination_and_atomic(elara: dict[str, Any]) -> None:
    src = balance(elara)
    assert src == {"pp": 0, "gp": 25, "ep": 0, "sp": 8, "cp": 10}
    tgt = {"pp": 0, "gp": 0, "ep": 0, "sp": 0, "cp": 0}
    new_src, new_tgt = plan_transfer(src, tgt, {"gp": 5, "sp": 8}, "Elara Quill")
    assert new_src["gp"] == 20 and new_src["sp"] == 0 and new_tgt == {**tgt, "gp": 5, "sp": 8}
    # no change-making: 1 pp cannot be paid with gold
    with pytest.raises(CurrencyError) as err:
        plan_transfer(src, tgt, {"gp": 1, "pp": 1}, "Elara Quill")
    assert str(err.value) == "Insufficient pp: Elara Quill has 0, needs 1"
    assert src == balance(elara)


def test_modify_clamps_at_zero() -> None:
    assert modify(5, -10) == 0
    assert modify(5, 10) == 15
