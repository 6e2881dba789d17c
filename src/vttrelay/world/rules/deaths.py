"""Death saving throws (spec §4.1, world-behaviour §3.6).

DC 10. A natural 20 restores 1 hit point and resets both counters; otherwise a success adds
one, and the third success makes the creature stable (counters reset). A failure adds one, a
natural 1 adds two, capped at 3; three failures mean death (counters stay at 3).
"""

from __future__ import annotations

from dataclasses import dataclass

DEATH_SAVE_DC = 10
MAX_MARKS = 3


@dataclass(frozen=True)
class DeathSaveOutcome:
    success: int
    failure: int
    hp: int | None  # the new hit points when the save restores some, else None
    message: str | None  # the milestone chat text, if any
    stable: bool = False
    dead: bool = False


def needs_death_save(hp: int, success: int, failure: int) -> bool:
    """A death save is rolled only at 0 HP and while neither counter has reached 3."""
    return hp <= 0 and success < MAX_MARKS and failure < MAX_MARKS


def resolve_death_save(
    name: str,
    *,
    total: int,
    critical: bool,
    fumble: bool,
    success: int,
    failure: int,
) -> DeathSaveOutcome:
    """The counters after a death save of `total` (critical = natural 20, fumble = natural 1)."""
    if total >= DEATH_SAVE_DC:
        if critical:
            return DeathSaveOutcome(
                0,
                0,
                1,
                f"{name} critically succeeded on a death saving throw and has regained "
                "1 Hit Point!",
            )
        success += 1
        if success >= MAX_MARKS:
            return DeathSaveOutcome(
                0,
                0,
                None,
                f"{name} has survived with 3 death save successes and is now stable!",
                stable=True,
            )
        return DeathSaveOutcome(success, failure, None, None)
    failure = min(MAX_MARKS, failure + (2 if fumble else 1))
    if failure >= MAX_MARKS:
        return DeathSaveOutcome(
            success, failure, None, f"{name} has died with 3 death save failures!", dead=True
        )
    return DeathSaveOutcome(success, failure, None, None)
