"""Fixtures for the rules and dnd5e action tests: the demo actors as documents (fresh copies;
`item_of` in tests/support/world.py finds an actor's item by name)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vttrelay.world.store.seed import load_actor_content, prepare_actor

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
