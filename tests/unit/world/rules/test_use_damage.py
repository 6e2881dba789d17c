"""Damage a target takes from a use: after its saving throw, temporary hit points first, never
below 0 HP."""

from __future__ import annotations

from typing import Any

from vttrelay.world.rules.use import apply_damage, damage_taken


def _actor(value: int, temp: int = 0) -> dict[str, Any]:
    return {"system": {"attributes": {"hp": {"value": value, "max": 20, "temp": temp}}}}


def test_a_save_halves_or_stops_the_damage() -> None:
    assert damage_taken(9, saved=False, on_save="half") == 9
    assert damage_taken(9, saved=True, on_save="half") == 4
    assert damage_taken(9, saved=True, on_save="none") == 0


def test_temporary_hit_points_go_first_and_hp_stops_at_zero() -> None:
    actor = _actor(10, temp=3)
    assert apply_damage(actor, 5) == 5
    assert actor["system"]["attributes"]["hp"] == {"value": 8, "max": 20, "temp": 0}
    assert apply_damage(actor, 50) == 8
    assert actor["system"]["attributes"]["hp"]["value"] == 0
    assert apply_damage(actor, -4) == 0 and actor["system"]["attributes"]["hp"]["value"] == 0
