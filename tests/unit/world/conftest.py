"""Fixtures for the world's in-process tests: the seeded demo world in a real SQLite file in a
tmp dir, answering the `actions` fixture's table (the standard one unless a test module
overrides the fixture), with a settable clock and scripted dice, its events collected in
`world.sent`. The helpers the tests call on it (`call`, `get_actor`, `chat`, `edited_actor`,
`older_world_file`, `Clock`) are in tests/support/world.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.world import Clock

from vttrelay.world.actions.table import standard_table
from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.runtime.table import ActionTable
from vttrelay.world.runtime.world import World


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def faces() -> ScriptedRandom:
    """The world's random source: append die faces to script the next rolls."""
    return ScriptedRandom([], seed=3)


@pytest.fixture
def actions() -> ActionTable:
    """The actions the `world` answers: the standard table (a test module that adds its own
    actions overrides this fixture)."""
    return standard_table()


@pytest.fixture
def world(
    tmp_path: Path, clock: Clock, faces: ScriptedRandom, actions: ActionTable
) -> Iterator[World]:
    """The seeded demo world, every event it sends collected in `sent`."""
    w = World.open(tmp_path / "data", actions=actions, dice=Dice(faces), clock=clock)
    w.sent = []  # type: ignore[attr-defined]
    w.sink = w.sent.append  # type: ignore[attr-defined]
    yield w
    w.close()
