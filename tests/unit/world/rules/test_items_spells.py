"""Charges clamp, spell slots by class level, pact slots, slot spending and preparation."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import item_of

from vttrelay.world.errors import SpellError
from vttrelay.world.rules import spells
from vttrelay.world.rules.items import modify_charges, uses_max, uses_value


def test_charges_clamp_to_zero_and_max(elara: dict[str, Any]) -> None:
    wand = item_of(elara, "Wand of Magic Missiles")
    assert modify_charges(wand, elara, -1) == (7, 6)
    assert wand["system"]["uses"]["spent"] == 1
    assert modify_charges(wand, elara, -10) == (6, 0)
    assert modify_charges(wand, elara, 3) == (0, 3)
    assert modify_charges(wand, elara, 100) == (3, 7)
    assert wand["system"]["uses"]["spent"] == 0


def test_item_without_uses_reports_zero(elara: dict[str, Any]) -> None:
    staff = item_of(elara, "Quarterstaff")
    assert modify_charges(staff, elara, -1) == (0, 0)


def test_uses_max_formulas(brann: dict[str, Any]) -> None:
    assert uses_max({"max": "@prof + 1"}, brann) == 3
    assert uses_max({"max": ""}, brann) == 0
    assert uses_value({"max": "4", "spent": 1}, brann) == 3


def test_slot_tables(elara: dict[str, Any], corvin: dict[str, Any], brann: dict[str, Any]) -> None:
    assert spells.slots_view(elara) == {
        "spell1": {"value": 4, "max": 4},
        "spell2": {"value": 2, "max": 2},
    }
    assert spells.slots_view(corvin) == {"pact": {"value": 2, "max": 2, "level": 2}}
    assert spells.slots_view(brann) == {}
    item_of(elara, "Wizard")["system"]["levels"] = 5
    assert spells.slot_max(elara, 3) == 2
    elara["system"]["spells"]["spell3"]["override"] = 1
    assert spells.slot_max(elara, 3) == 1


def test_spend_slot_of_the_spells_level(elara: dict[str, Any]) -> None:
    missile = item_of(elara, "Magic Missile")
    assert spells.spend_slot_for(elara, missile) == "1st-level slot"
    assert elara["system"]["spells"]["spell1"]["value"] == 3
    assert spells.spend_slot_for(elara, item_of(elara, "Fire Bolt")) is None
    step = item_of(elara, "Misty Step")
    spells.spend_slot_for(elara, step)
    spells.spend_slot_for(elara, step)
    with pytest.raises(SpellError, match="No spell slots of level 2 remaining"):
        spells.spend_slot_for(elara, step)


def test_unprepared_spell_cannot_be_cast(elara: dict[str, Any]) -> None:
    with pytest.raises(SpellError, match="not prepared"):
        spells.spend_slot_for(elara, item_of(elara, "Sleep"))


def test_pact_spells_use_pact_slots(corvin: dict[str, Any]) -> None:
    retreat = item_of(corvin, "Expeditious Retreat")
    assert spells.spend_slot_for(corvin, retreat) == "pact slot (2nd level)"
    spells.spend_slot_for(corvin, retreat)
    with pytest.raises(SpellError, match="No pact slots remaining"):
        spells.spend_slot_for(corvin, retreat)


def test_preparation(elara: dict[str, Any], corvin: dict[str, Any]) -> None:
    assert spells.prepares_spells(elara) and not spells.prepares_spells(corvin)
    sleep = item_of(elara, "Sleep")
    spells.set_prepared(sleep, True)
    assert sleep["system"]["preparation"] == {"mode": "prepared", "prepared": True}
