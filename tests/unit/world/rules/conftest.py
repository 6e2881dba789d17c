"""Fixtures for the rules and dnd5e action tests: the demo actors as documents (fresh copies),
and the real demo world in a tmp SQLite file with scripted dice (`world`, `faces`, `call`)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vttrelay.world.dice import Dice, ScriptedRandom
from vttrelay.world.seed import load_actor_content, prepare_actor
from vttrelay.world.world import World

_ACTORS = {a["_id"]: prepare_actor(a, 1_782_950_000_000) for a in load_actor_content()}


@pytest.fixture
def actors() -> dict[str, dict[str, Any]]:
    return copy.deepcopy(_ACTORS)


@pytest.fixture
def elara(actors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return actors["elaraWizard00001"]


@pytest.fixture
def corvin(actors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return actors["corvinWarlock001"]


@pytest.fixture
def brann(actors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return actors["brannFighter0001"]


@pytest.fixture
def pip(actors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return actors["pipMonk000000001"]


@pytest.fixture
def goblin(actors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return actors["goblinNpc0000001"]


class Clock:
    """A settable clock in milliseconds."""

    def __init__(self, start: int = 1_782_956_929_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def faces() -> ScriptedRandom:
    """The world's random source: append die faces to script the next rolls."""
    return ScriptedRandom([], seed=3)


@pytest.fixture
def world(tmp_path: Path, faces: ScriptedRandom) -> Iterator[World]:
    """The seeded demo world in a real SQLite file, with scripted dice; events in `sent`."""
    w = World.open(tmp_path / "data", dice=Dice(faces), clock=Clock())
    w.sent = []  # type: ignore[attr-defined]
    w.sink = w.sent.append  # type: ignore[attr-defined]
    yield w
    w.close()


async def call(world: World, action: str, **params: Any) -> dict[str, Any]:
    """Send one request frame as the relay would and return the reply frame."""
    frame = {"type": action, "requestId": f"{action}_1", "data": {}, **params}
    return await world.handle(frame)


def get_actor(world: World, actor_id: str) -> dict[str, Any]:
    with world.store.transaction() as tx:
        actor = tx.get("Actor", actor_id)
    assert actor is not None
    return actor


def item_of(actor: dict[str, Any], name: str) -> dict[str, Any]:
    return next(i for i in actor["items"] if i["name"] == name)


def chat(world: World) -> list[dict[str, Any]]:
    with world.store.transaction() as tx:
        return tx.all("ChatMessage")
