"""Pure effect rules: the dnd5e status list, new ActiveEffect documents from caller data."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.errors import EffectDataError
from vttrelay.world.rules import effects as rules


def test_status_list_and_icons() -> None:
    assert len(rules.STATUS_EFFECTS) == 43
    assert rules.STATUS_BY_ID["heavilyEncumbered"].icon == (
        "systems/dnd5e/icons/svg/statuses/heavily-encumbered.svg"
    )
    assert rules.STATUS_BY_ID["exceedingCarryingCapacity"].name == "Exceeding Carrying Capacity"
    assert rules.STATUS_BY_ID["dead"].summary() == {
        "id": "dead",
        "name": "Dead",
        "icon": "systems/dnd5e/icons/svg/statuses/dead.svg",
    }


def test_new_effect_fills_defaults_and_keeps_what_was_given() -> None:
    doc = rules.new_effect(
        "e" * 16,
        {
            "name": "Bless",
            "icon": "icons/svg/sun.svg",
            "changes": [{"key": "system.bonuses.abilities.save", "value": "1d4"}],
            "duration": {"seconds": 60},
            "statuses": ["blessed", "blessed"],
            "flags": {"world": {"x": 1}},
            "_id": "ignored",
        },
        1000,
    )
    assert doc["_id"] == "e" * 16 and doc["img"] == "icons/svg/sun.svg" and "icon" not in doc
    assert doc["changes"] == [
        {"key": "system.bonuses.abilities.save", "mode": 2, "value": "1d4", "priority": None}
    ]
    assert doc["duration"]["seconds"] == 60 and doc["duration"]["rounds"] is None
    assert doc["statuses"] == ["blessed"] and doc["flags"] == {"world": {"x": 1}}
    assert doc["disabled"] is False and doc["transfer"] is False
    assert doc["_stats"]["createdTime"] == 1000


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({}, "name"),
        ({"name": "x", "changes": {}}, "changes"),
        ({"name": "x", "changes": [{"value": 1}]}, "changes"),
        ({"name": "x", "duration": 5}, "duration"),
        ({"name": "x", "statuses": "prone"}, "statuses"),
    ],
)
def test_new_effect_refuses_bad_data(data: dict[str, object], field: str) -> None:
    with pytest.raises(EffectDataError, match=f"validation errors: {field}"):
        rules.new_effect("e" * 16, data, 0)


def test_with_status() -> None:
    effects = [{"_id": "a", "statuses": []}, {"_id": "b", "statuses": ["prone"]}]
    assert rules.with_status(effects, "prone") == effects[1]
    assert rules.with_status(effects, "dead") is None


def test_apply_change_modes() -> None:
    add, mul, down, up, over = (
        rules.ADD,
        rules.MULTIPLY,
        rules.DOWNGRADE,
        rules.UPGRADE,
        rules.OVERRIDE,
    )
    assert rules.apply_change(3, add, "2") == 5 and rules.apply_change(None, add, "2") == 2
    assert rules.apply_change("", add, "1d4") == "1d4"
    assert rules.apply_change("+1", add, "1d4") == "+1 + 1d4"
    assert rules.apply_change(30, mul, "0.5") == 15 and rules.apply_change(10, up, "12") == 12
    assert rules.apply_change(10, up, "8") == 10 and rules.apply_change(10, down, "8") == 8
    assert rules.apply_change(10, over, "18") == 18 and rules.apply_change("a", over, "b") == "b"
    assert rules.apply_change(10, add, "lots") == 10  # does not fit: unchanged
    assert rules.apply_change(10, rules.CUSTOM, "5") == 10


def test_apply_changes_in_priority_order_without_touching_the_actor() -> None:
    actor: dict[str, Any] = {
        "system": {"attributes": {"ac": {"bonus": ""}, "movement": {"walk": 30}}},
        "effects": [
            {
                "_id": "a",
                "changes": [{"key": "system.attributes.movement.walk", "mode": 5, "value": "10"}],
            },
            {
                "_id": "b",
                "changes": [{"key": "system.attributes.movement.walk", "mode": 2, "value": "5"}],
            },
            {
                "_id": "c",
                "disabled": True,
                "changes": [{"key": "system.attributes.ac.bonus", "mode": 2, "value": "9"}],
            },
        ],
        "items": [
            {
                "effects": [
                    {
                        "transfer": True,
                        "changes": [{"key": "system.attributes.ac.bonus", "mode": 2, "value": "1"}],
                    }
                ]
            },
            {
                "effects": [
                    {
                        "transfer": False,
                        "changes": [{"key": "system.attributes.ac.bonus", "mode": 2, "value": "7"}],
                    }
                ]
            },
        ],
    }
    derived = rules.apply_changes(actor)
    # ADD (priority 20) before OVERRIDE (50): the override wins
    assert derived["system"]["attributes"]["movement"]["walk"] == 10
    assert derived["system"]["attributes"]["ac"]["bonus"] == "1"  # disabled and non-transfer: no
    assert actor["system"]["attributes"]["movement"]["walk"] == 30
    plain: dict[str, Any] = {"system": {}, "effects": [], "items": []}
    assert rules.apply_changes(plain) is plain
