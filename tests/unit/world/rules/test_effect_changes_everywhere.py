"""Active effects' changes shape every roll, not only details and checks: attacks and damage
when using items (the dnd5e attack-type bonuses), the target's AC, save DCs, death saves and
initiative all read the actor through `effects.apply_changes`; what is spent is taken from the
stored actor, which never receives the changes."""

from __future__ import annotations

import copy
from typing import Any

from tests.support.world import item_of

from vttrelay.world.rules.abilities import death_save_formula
from vttrelay.world.rules.combat import initiative_formula
from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.rules.effects import apply_changes, new_effect
from vttrelay.world.rules.use import attack_type, spell_save_dc, use_item


def _with_effect(actor: dict[str, Any], *changes: tuple[str, str]) -> dict[str, Any]:
    effect = new_effect(
        "blessed000000001",
        {"name": "Blessed", "changes": [{"key": k, "mode": 2, "value": v} for k, v in changes]},
        0,
    )
    actor.setdefault("effects", []).append(effect)
    return actor


def test_attack_types() -> None:
    def activity(value: str, classification: str) -> dict[str, Any]:
        return {"attack": {"type": {"value": value, "classification": classification}}}

    assert attack_type(activity("melee", "weapon")) == "mwak"
    assert attack_type(activity("ranged", "weapon")) == "rwak"
    assert attack_type(activity("melee", "spell")) == "msak"
    assert attack_type(activity("ranged", "spell")) == "rsak"
    assert attack_type({}) == "mwak"


def test_attack_and_damage_bonuses_from_effects(brann: dict[str, Any]) -> None:
    _with_effect(brann, ("system.bonuses.mwak.attack", "2"), ("system.bonuses.mwak.damage", "1"))
    stored = copy.deepcopy(brann)
    out = use_item(brann, item_of(brann, "Longsword")["_id"], Dice(ScriptedRandom([10, 5])))
    assert out.attack is not None and out.attack.formula == "1d20 + 3 + 2 + 2"
    assert out.rolls[1].formula == "1d8 + 3 + 1"
    # the stored actor is unchanged: the bonuses come from the effect alone
    assert brann == stored
    assert out.actor["system"]["bonuses"]["mwak"] == {"attack": "", "damage": ""}


def test_the_targets_ac_is_read_with_its_effects(
    elara: dict[str, Any], goblin: dict[str, Any]
) -> None:
    _with_effect(goblin, ("system.attributes.ac.bonus", "5"))
    fire_bolt = item_of(elara, "Fire Bolt")["_id"]
    out = use_item(elara, fire_bolt, Dice(ScriptedRandom([14, 7])), target=goblin)
    assert any("misses Goblin (AC 20)" in n for n in out.notes), out.notes


def test_save_dc_death_saves_and_initiative(elara: dict[str, Any]) -> None:
    base_dc = spell_save_dc(elara)
    _with_effect(
        elara,
        ("system.bonuses.spell.dc", "1"),
        ("system.bonuses.abilities.save", "1d4"),
        ("system.attributes.init.bonus", "3"),
    )
    derived = apply_changes(elara)
    assert spell_save_dc(derived) == base_dc + 1
    assert death_save_formula(elara) == "1d20"  # the stored actor knows nothing of the effect
    assert death_save_formula(derived) == "1d20 + 1d4"
    assert initiative_formula(derived).endswith(" + 3")
