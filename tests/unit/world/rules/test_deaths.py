"""Death saves: DC 10, nat 20 heals to 1 and resets, nat 1 counts twice, 3 successes stable."""

from __future__ import annotations

from vttrelay.world.rules.deaths import needs_death_save, resolve_death_save


def test_needs_roll_only_at_zero_hp_and_below_three_marks() -> None:
    assert needs_death_save(0, 0, 0)
    assert not needs_death_save(1, 0, 0)
    assert not needs_death_save(0, 3, 0)
    assert not needs_death_save(0, 0, 3)


def test_success_and_failure_counting() -> None:
    out = resolve_death_save("Pip", total=10, critical=False, fumble=False, success=0, failure=1)
    assert (out.success, out.failure, out.hp, out.message) == (1, 1, None, None)
    out = resolve_death_save("Pip", total=9, critical=False, fumble=False, success=1, failure=1)
    assert (out.success, out.failure) == (1, 2)


def test_nat_20_regains_one_hit_point_and_resets() -> None:
    out = resolve_death_save("Pip", total=20, critical=True, fumble=False, success=2, failure=2)
    assert (out.success, out.failure, out.hp) == (0, 0, 1)
    assert out.message and "regained 1 Hit Point" in out.message


def test_nat_1_counts_two_failures_capped_at_three() -> None:
    out = resolve_death_save("Pip", total=1, critical=False, fumble=True, success=0, failure=0)
    assert (out.success, out.failure, out.dead) == (0, 2, False)
    out = resolve_death_save("Pip", total=1, critical=False, fumble=True, success=1, failure=2)
    assert (out.failure, out.dead) == (3, True)
    assert out.message == "Pip has died with 3 death save failures!"


def test_third_success_is_stable_and_resets() -> None:
    out = resolve_death_save("Pip", total=15, critical=False, fumble=False, success=2, failure=1)
    assert (out.success, out.failure, out.stable, out.hp) == (0, 0, True, None)
    assert out.message == "Pip has survived with 3 death save successes and is now stable!"
