"""Fixtures for the world platform's unit tests: a real SQLite world in a tmp dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vttrelay.world.world import World


class Clock:
    """A settable clock in milliseconds."""

    def __init__(self, start: int = 1_782_956_929_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


# The contract's actors; the demo content (written by the rules part) provides the real ones.
# Tests that need them insert a minimal stand-in for any that are not in the content yet.
CONTRACT_ACTORS = {
    "elaraWizard00001": ("Elara Quill", "character", "playerAria000001"),
    "corvinWarlock001": ("Corvin Ash", "character", "playerBen0000001"),
    "brannFighter0001": ("Brann Stoneheart", "character", "playerAria000001"),
    "pipMonk000000001": ("Pip Tealeaf", "character", "playerBen0000001"),
    "goblinNpc0000001": ("Goblin", "npc", None),
    "banditNpc0000001": ("Bandit", "npc", None),
    "wolfNpc000000001": ("Wolf", "npc", None),
}
PLAYERS = ("playerAria000001", "playerBen0000001")


def ensure_contract_actors(world: World) -> None:
    with world.store.transaction() as tx:
        for actor_id, (name, kind, owner) in CONTRACT_ACTORS.items():
            if tx.get("Actor", actor_id) is not None:
                continue
            ownership: dict[str, int] = {"default": 0}
            if owner:
                ownership.update({p: 3 if p == owner else 1 for p in PLAYERS})
            tx.put(
                "Actor",
                {
                    "_id": actor_id,
                    "name": name,
                    "type": kind,
                    "system": {},
                    "items": [],
                    "effects": [],
                    "ownership": ownership,
                    "flags": {},
                },
            )


@pytest.fixture
def world(tmp_path: Path, clock: Clock) -> Iterator[World]:
    """The seeded demo world, with every channel subscribed and events collected in `sent`."""
    w = World.open(tmp_path / "data", clock=clock)
    ensure_contract_actors(w)
    w.sent = []  # type: ignore[attr-defined]
    w.sink = w.sent.append  # type: ignore[attr-defined]
    yield w
    w.close()


async def call(world: World, action: str, **params: Any) -> dict[str, Any]:
    """Send one request frame as the relay would and return the reply frame."""
    frame = {"type": action, "requestId": f"{action}_1", "data": {}, **params}
    return await world.handle(frame)
