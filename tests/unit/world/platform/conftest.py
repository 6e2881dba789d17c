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


@pytest.fixture
def world(tmp_path: Path, clock: Clock) -> Iterator[World]:
    """The seeded demo world, with every channel subscribed and events collected in `sent`."""
    w = World.open(tmp_path / "data", clock=clock)
    w.sent = []  # type: ignore[attr-defined]
    w.sink = w.sent.append  # type: ignore[attr-defined]
    yield w
    w.close()


async def call(world: World, action: str, **params: Any) -> dict[str, Any]:
    """Send one request frame as the relay would and return the reply frame."""
    frame = {"type": action, "requestId": f"{action}_1", "data": {}, **params}
    return await world.handle(frame)
