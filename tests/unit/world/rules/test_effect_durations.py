"""Effect durations in combat (rules/effects.py): a duration in rounds or turns starts at the
combat's round and turn and runs out as the combat advances."""

from __future__ import annotations

from typing import Any

from vttrelay.world.rules.effects import (
    is_expired,
    new_effect,
    remove_expired,
    start_duration,
)


def _combat(round_: int, turn: int | None, count: int = 3) -> dict[str, Any]:
    return {
        "_id": "fight",
        "round": round_,
        "turn": turn,
        "combatants": [{"_id": f"c{i}"} for i in range(count)],
    }


def _effect(rounds: int | None = None, turns: int | None = None) -> dict[str, Any]:
    return new_effect("e1", {"name": "Bless", "duration": {"rounds": rounds, "turns": turns}}, 0)


def test_a_duration_starts_at_the_current_round_and_turn() -> None:
    effect = _effect(rounds=1)
    start_duration(effect, _combat(2, 1))
    duration = effect["duration"]
    assert (duration["startRound"], duration["startTurn"], duration["combat"]) == (2, 1, "fight")
    permanent = new_effect("e2", {"name": "Blessing"}, 0)
    start_duration(permanent, _combat(2, 1))
    assert permanent["duration"]["startRound"] is None  # no round/turn duration: untouched
    outside = _effect(rounds=1)
    start_duration(outside, None)
    assert outside["duration"]["startRound"] is None


def test_rounds_run_out_a_whole_round_later() -> None:
    effect = _effect(rounds=1)
    start_duration(effect, _combat(1, 1))
    assert not is_expired(effect, _combat(1, 1))
    assert not is_expired(effect, _combat(1, 2))
    assert not is_expired(effect, _combat(2, 0))
    assert is_expired(effect, _combat(2, 1))
    assert is_expired(effect, _combat(3, 0))


def test_turns_run_out_after_that_many_turns() -> None:
    effect = _effect(turns=2)
    start_duration(effect, _combat(1, 0))
    assert not is_expired(effect, _combat(1, 1))
    assert is_expired(effect, _combat(1, 2))
    both = _effect(rounds=1, turns=1)
    start_duration(both, _combat(1, 0))
    assert not is_expired(both, _combat(2, 0)) and is_expired(both, _combat(2, 1))


def test_only_round_and_turn_durations_of_this_combat_expire() -> None:
    timed = new_effect("e3", {"name": "Timed", "duration": {"seconds": 6}}, 0)
    assert not is_expired(timed, _combat(9, 0))
    other = _effect(rounds=1)
    start_duration(other, {**_combat(1, 0), "_id": "another"})
    assert not is_expired(other, _combat(5, 0))


def test_remove_expired_deletes_only_what_ran_out() -> None:
    short, long_ = _effect(rounds=1), _effect(rounds=10)
    long_["_id"] = "e9"
    for effect in (short, long_):
        start_duration(effect, _combat(1, 0))
    actor = {"effects": [short, long_]}
    assert remove_expired(actor, _combat(1, 2)) == []
    assert remove_expired(actor, _combat(2, 0)) == [short]
    assert actor["effects"] == [long_]
