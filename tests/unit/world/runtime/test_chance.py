"""A world's one source of chance (`runtime.chance`): seeded, its dice, ids and clock repeat;
`restart` starts them over; a seeded clock starts after the chat already stored."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.chance import SEEDED_EPOCH_MS, Chance
from vttrelay.world.runtime.world import World


def draws(chance: Chance) -> tuple[str, str, float]:
    return chance.new_id(), chance.new_id(), chance.random.random()


def test_a_seed_repeats_its_ids_and_draws_and_restart_starts_over() -> None:
    first = Chance(11)
    drawn = draws(first)
    assert draws(Chance(11)) == drawn and draws(Chance(12)) != drawn
    first.restart()
    assert draws(first) == drawn
    assert first.wall_ms() == SEEDED_EPOCH_MS
    unseeded = Chance()
    assert not unseeded.seeded and abs(unseeded.wall_ms() - time.time() * 1000) < 5000
    assert len({unseeded.new_id() for _ in range(100)}) == 100


async def test_two_seeded_worlds_answer_alike_and_a_reopened_one_keeps_chat_in_order(
    tmp_path: Path,
) -> None:
    table = standard_table()
    worlds = [World.open(tmp_path / name, actions=table, seed=5) for name in ("a", "b")]
    try:
        answers = [
            [
                await call(w, "roll", formula="3d6", createChatMessage=True),
                await call(w, "skill-check", actorUuid="Actor.brannFighter0001", skill="ath"),
                await call(w, "create-user", name="Cleric"),
            ]
            for w in worlds
        ]
        assert answers[0] == answers[1]
        assert answers[0][0]["data"]["roll"]["timestamp"] == SEEDED_EPOCH_MS
    finally:
        for w in worlds:
            w.close()
    again = World.open(tmp_path / "a", actions=table, seed=5)
    try:
        latest = again.store.latest_chat_time()
        assert latest > SEEDED_EPOCH_MS
        later = await call(again, "roll", formula="1d4", createChatMessage=True)
        assert later["data"]["roll"]["timestamp"] >= latest  # after what is stored, not before
    finally:
        again.close()
