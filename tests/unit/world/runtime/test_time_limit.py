"""Issue 20, "a request past its time limit stops its work and commits nothing": every store
read and write of an action, each `ctx.checkpoint()` of a long loop and the commit check the
action's deadline; past it the action stops there, answers a clear error in its reply shape, and
the world is as before (no document, no event). Time is an injected clock, no sleeping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.world import Clock, call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.runtime.world import World

SCENE = "sceneTavern00001"
STOPPED = "The request ran past the world's time limit of 1 s and was stopped: nothing was changed"


class Ticking:
    """A monotonic clock that moves `step` seconds at each reading."""

    def __init__(self) -> None:
        self.now = 0.0
        self.step = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


@pytest.fixture
def ticking() -> Ticking:
    return Ticking()


@pytest.fixture
def timed_world(tmp_path: Path, clock: Clock, ticking: Ticking) -> Iterator[World]:
    w = World.open(
        tmp_path / "data",
        actions=standard_table(),
        dice=Dice(ScriptedRandom([], seed=3)),
        clock=clock,
        monotonic=ticking,
        time_limit=1.0,
    )
    w.sent = []  # type: ignore[attr-defined]
    w.sink = w.sent.append  # type: ignore[attr-defined]
    w.set_subscription("hooks", 1)
    w.set_subscription("chat-events", 1)
    yield w
    w.close()


def walls(world: World) -> list[Any]:
    with world.store.transaction() as tx:
        scene = tx.get("Scene", SCENE)
    assert scene is not None
    return list(scene.get("walls") or [])


async def create_walls(world: World, n: int) -> dict[str, Any]:
    return await call(
        world,
        "create-canvas-document",
        documentType="walls",
        className="Wall",
        sceneId=SCENE,
        data=[{"c": [i, 0, i, 10]} for i in range(n)],
    )


async def test_a_long_batch_stops_at_its_limit_and_commits_nothing(
    timed_world: World, ticking: Ticking
) -> None:
    ticking.step = 0.01  # the limit (1 s) is past after about 100 readings
    reply = await create_walls(timed_world, 5_000)
    assert reply == {
        "type": "create-canvas-document-result",
        "requestId": "create-canvas-document_1",
        "error": STOPPED,
    }
    assert ticking.reads < 150  # it stopped there, not after the 5,000 walls
    ticking.step = 0.0
    assert walls(timed_world) == []
    assert timed_world.sent == []  # type: ignore[attr-defined]


async def test_an_action_past_its_limit_at_the_commit_changes_nothing(
    timed_world: World, ticking: Ticking
) -> None:
    ticking.step = 0.2  # a handful of store calls, then the commit check is past the limit
    reply = await call(timed_world, "chat-send", content="too late")
    assert reply == {
        "type": "chat-send-result",
        "requestId": "chat-send_1",
        "success": False,
        "error": STOPPED,
    }
    ticking.step = 0.0
    reply = await call(timed_world, "chat-messages")
    assert reply["data"]["total"] == 0
    assert timed_world.sent == []  # type: ignore[attr-defined]


async def test_a_request_whose_deadline_passed_while_it_waited_does_nothing(
    timed_world: World, ticking: Ticking
) -> None:
    frame = {"type": "chat-send", "requestId": "r1", "content": "queued too long"}
    reply = await timed_world.handle(frame, deadline=ticking.now - 0.5)
    assert reply["error"] == STOPPED
    assert (await call(timed_world, "chat-messages"))["data"]["total"] == 0


async def test_actions_within_their_limit_commit(timed_world: World, ticking: Ticking) -> None:
    ticking.step = 0.001
    reply = await create_walls(timed_world, 50)
    assert "error" not in reply, reply
    assert len(walls(timed_world)) == 50
    assert (await call(timed_world, "chat-send", content="in time"))["success"] is True


async def test_a_picture_past_its_deadline_stops_drawing(
    timed_world: World, ticking: Ticking
) -> None:
    frame = {"type": "scene-screenshot", "requestId": "r2"}
    reply = await timed_world.handle(frame, deadline=ticking.now - 0.5)
    assert reply == {"type": "scene-screenshot-result", "requestId": "r2", "error": STOPPED}
    reply = await timed_world.handle(frame)
    assert reply["data"]["imageData"].startswith("data:image/png;base64,")
