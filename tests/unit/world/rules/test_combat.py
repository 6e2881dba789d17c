"""Combat rules: turn order, navigation as the tabletop computes it, keeping the current
combatant, defeated combatants, the dnd5e initiative formula."""

from __future__ import annotations

from typing import Any

from vttrelay.world.rules import combat as rules


def _combat(inits: dict[str, Any], round_: int = 1, turn: int | None = 0) -> dict[str, Any]:
    return {
        "round": round_,
        "turn": turn,
        "combatants": [{"_id": cid, "initiative": init} for cid, init in inits.items()],
    }


THREE = {"a": 12, "b": 18, "c": 5}  # order: b, a, c


def test_turn_order_highest_first_none_last_ties_by_id() -> None:
    order = rules.turn_order(
        _combat({"z": 10, "y": None, "x": 10, "w": 20.5, "v": None})["combatants"]
    )
    assert [c["_id"] for c in order] == ["w", "x", "z", "v", "y"]


def test_current_combatant_follows_the_turn_order() -> None:
    assert rules.current_combatant(_combat(THREE, 1, 1))["_id"] == "a"  # type: ignore[index]
    assert rules.current_combatant(_combat(THREE, 1, None)) is None
    assert rules.current_combatant(_combat({}, 1, 0)) is None


def test_next_turn_walks_the_order_then_wraps_into_the_next_round() -> None:
    combat = _combat(THREE, 1, 0)
    seen = []
    for _ in range(5):
        combat.update(rules.next_turn(combat, set(), skip_defeated=False))
        seen.append((combat["round"], combat["turn"]))
    assert seen == [(1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]


def test_next_turn_skips_defeated_when_the_setting_says_so() -> None:
    combat = _combat(THREE, 1, 0)  # b
    assert rules.next_turn(combat, {"a"}, skip_defeated=True) == {"round": 1, "turn": 2}
    assert rules.next_turn(combat, {"a"}, skip_defeated=False) == {"round": 1, "turn": 1}
    # The last living combatant acts: the next round starts at the first living one.
    combat = _combat(THREE, 3, 1)  # a
    assert rules.next_turn(combat, {"b", "c"}, skip_defeated=True) == {"round": 4, "turn": 1}


def test_next_turn_before_the_start_begins_round_one() -> None:
    assert rules.next_turn(_combat(THREE, 0, None), set(), False) == {"round": 1, "turn": None}
    assert rules.next_turn(_combat(THREE, 0, 0), set(), False) == {"round": 1, "turn": 0}


def test_next_round_starts_at_the_first_living_combatant() -> None:
    combat = _combat(THREE, 2, 1)
    assert rules.next_round(combat, set(), False) == {"round": 3, "turn": 0}
    assert rules.next_round(combat, {"b"}, True) == {"round": 3, "turn": 1}
    assert rules.next_round(combat, {"a", "b", "c"}, True) == {"round": 3, "turn": 0}
    assert rules.next_round(_combat(THREE, 2, None), set(), True) == {"round": 3, "turn": None}


def test_previous_turn_and_round() -> None:
    assert rules.previous_turn(_combat(THREE, 2, 2)) == {"round": 2, "turn": 1}
    # Before the first turn of a round: the last turn of the previous round.
    assert rules.previous_turn(_combat(THREE, 2, 0)) == {"round": 1, "turn": 2}
    # Back from round 1: round 0, nobody's turn; from round 0 turn 0: nothing to do.
    assert rules.previous_turn(_combat(THREE, 1, 0)) == {"round": 0, "turn": None}
    assert rules.previous_turn(_combat(THREE, 0, 0)) is None
    assert rules.previous_round(_combat(THREE, 3, 1)) == {"round": 2, "turn": 2}
    assert rules.previous_round(_combat(THREE, 1, 1)) == {"round": 0, "turn": None}
    assert rules.previous_round(_combat(THREE, 0, None)) == {"round": 0, "turn": None}


def test_the_reference_sequence_on_one_combatant() -> None:
    """endpoints-beyond-seed §8.4: next-turn 2/0, next-round 3/0, last-turn 2/0, last-round 1/0."""
    combat = _combat({"only": 13}, 1, 0)
    combat.update(rules.next_turn(combat, set(), False))
    assert (combat["round"], combat["turn"]) == (2, 0)
    combat.update(rules.next_round(combat, set(), False))
    assert (combat["round"], combat["turn"]) == (3, 0)
    update = rules.previous_turn(combat)
    assert update is not None
    combat.update(update)
    assert (combat["round"], combat["turn"]) == (2, 0)
    combat.update(rules.previous_round(combat))
    assert (combat["round"], combat["turn"]) == (1, 0)


def test_adding_combatants_keeps_the_current_one() -> None:
    combat = _combat(THREE, 1, 1)  # a is current
    grown = [*combat["combatants"], {"_id": "d", "initiative": 30}]
    assert rules.turn_keeping(combat, "a", grown) == 2  # d, b, a, c
    assert rules.turn_keeping(_combat({}, 1, 0), None, grown) == 0


def test_removing_the_current_combatant_hands_the_turn_to_the_next_survivor() -> None:
    combat = _combat(THREE, 1, 1)  # order b, a, c; a current
    assert rules.turn_after_removal(combat, {"a"}, set(), False) == 1  # c, now at 1
    assert rules.turn_after_removal(combat, {"b"}, set(), False) == 0  # a stays, now at 0
    last = _combat(THREE, 1, 2)  # c current and removed: the previous survivor
    assert rules.turn_after_removal(last, {"c"}, set(), False) == 1
    # A defeated next survivor is passed over when skipping.
    assert rules.turn_after_removal(combat, {"a"}, {"c"}, True) == 0
    assert rules.turn_after_removal(_combat(THREE, 1, None), {"a"}, set(), False) is None
    assert rules.turn_after_removal(_combat({"a": 1}, 1, 0), {"a"}, set(), False) == 0


def test_defeated_by_flag_or_by_the_dead_status() -> None:
    dead = {"effects": [{"statuses": ["dead"], "disabled": False}]}
    assert rules.is_defeated({"defeated": True}, None)
    assert rules.is_defeated({"defeated": False}, dead)
    assert not rules.is_defeated({}, {"effects": [{"statuses": ["dead"], "disabled": True}]})
    assert not rules.is_defeated({}, {"effects": [{"statuses": ["prone"]}]})


def _actor(dex: int, **init: Any) -> dict[str, Any]:
    return {
        "type": "npc",
        "system": {
            "abilities": {"dex": {"value": dex}},
            "attributes": {"init": {"ability": "", "bonus": "", **init}},
            "details": {"cr": 0.25},
        },
    }


def test_initiative_formula() -> None:
    assert rules.initiative_formula(_actor(14)) == "1d20 + 2"
    assert rules.initiative_formula(_actor(8)) == "1d20 - 1"
    assert rules.initiative_formula(_actor(10)) == "1d20 + 0"
    assert rules.initiative_formula(_actor(14, bonus=3)) == "1d20 + 2 + 3"
    assert rules.initiative_formula(_actor(14, prof=1)) == "1d20 + 2 + 2"
    assert rules.initiative_formula(_actor(14, roll={"mode": 1})) == "2d20kh + 2"
    assert rules.initiative_formula(_actor(14, roll={"mode": -1})) == "2d20kl + 2"
    assert rules.initiative_formula(_actor(14), dex_tiebreaker=True) == "1d20 + 2 + 0.14"
