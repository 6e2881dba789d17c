"""The world's heavy-work process: work runs in a nicer worker process of its own, off the
caller's loop; results and exceptions come back; one worker queues work instead of taking more
cores; a deadline stops work at its next checkpoint (and work that queued past it never starts);
a worker killed under its work fails that work (an action's reply says so) and the next job
starts a new worker; a job's prints and unpicklable arguments do not break it; the worker
ignores Ctrl-C (SIGINT) and `close` ends it."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from tests.support import heavy_jobs as jobs

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.context import WORKER_LOST, ActionContext
from vttrelay.world.runtime.heavy import HeavyWork, OverTime, WorkerLost
from vttrelay.world.runtime.table import ActionTable, action
from vttrelay.world.runtime.world import World


class Gate(NamedTuple):
    """`jobs.wait_for` waits until `path` exists, then writes its name to `log`."""

    path: Path
    log: Path


@pytest.fixture
def heavy() -> Iterator[HeavyWork]:
    work = HeavyWork()
    yield work
    work.close()


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    """A closed gate, opened at the end of the test whatever happened (no worker waits on)."""
    closed = Gate(tmp_path / "gate", tmp_path / "log")
    closed.log.touch()
    yield closed
    closed.path.touch()


async def _gone(pid: int, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not jobs.alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False


async def test_work_runs_in_a_nicer_process_of_its_own() -> None:
    heavy = HeavyWork(niceness=5)
    try:
        pid, niceness = await heavy.run(jobs.who)
        again, _ = await heavy.run(jobs.who)
    finally:
        heavy.close()
    assert pid != os.getpid() and again == pid  # one worker, kept
    assert niceness == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)


async def test_results_and_exceptions_come_back(heavy: HeavyWork) -> None:
    assert await heavy.run(jobs.add, 2, b=3) == 5
    with pytest.raises(ZeroDivisionError):
        await heavy.run(jobs.divide, 1, 0)
    assert await heavy.run(jobs.add, 1, 1) == 2  # the worker survives its work's errors


async def test_work_queues_for_the_worker_and_the_loop_stays_free(
    heavy: HeavyWork, gate: Gate
) -> None:
    """With one worker, a second job waits for the first; the loop meanwhile runs other tasks."""
    first = asyncio.create_task(heavy.run(jobs.wait_for, *gate, "first"))
    second = asyncio.create_task(heavy.run(jobs.wait_for, *gate, "second"))
    for _ in range(20):  # the loop runs its other tasks meanwhile
        await asyncio.sleep(0.01)
    assert not first.done() and not second.done() and gate.log.read_text() == ""
    gate.path.touch()
    assert await asyncio.gather(first, second) == ["first", "second"]
    assert gate.log.read_text() == "first\nsecond\n"


async def test_a_deadline_stops_work_at_its_next_checkpoint(heavy: HeavyWork) -> None:
    assert await heavy.run(jobs.spin, 0.05, seconds=5) > 0  # within its time: done
    start = time.monotonic()
    with pytest.raises(OverTime):
        await heavy.run(jobs.spin, 30, seconds=0.3)
    assert time.monotonic() - start < 5  # stopped near 0.3 s, not after 30
    with pytest.raises(OverTime):  # already past: it does not start
        await heavy.run(jobs.add, 1, 2, seconds=-1)


async def test_work_queued_past_its_deadline_does_not_start(heavy: HeavyWork, gate: Gate) -> None:
    first = asyncio.create_task(heavy.run(jobs.wait_for, *gate, "first"))
    late = asyncio.create_task(heavy.run(jobs.wait_for, *gate, "late", seconds=0.2))
    await asyncio.sleep(0.5)
    gate.path.touch()
    assert await first == "first"
    with pytest.raises(OverTime):
        await late
    assert gate.log.read_text() == "first\n"


async def test_a_killed_worker_fails_its_work_and_the_next_job_starts_another(
    heavy: HeavyWork, gate: Gate
) -> None:
    pid, _ = await heavy.run(jobs.who)
    held = asyncio.create_task(heavy.run(jobs.wait_for, *gate, "held"))
    queued = asyncio.create_task(heavy.run(jobs.who))
    await asyncio.sleep(0.3)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(WorkerLost):
        await held
    new_pid, _ = await queued  # the next job: a new worker
    assert new_pid != pid and await heavy.run(jobs.add, 2, 2) == 4
    assert not jobs.alive(pid)


async def test_the_worker_ignores_ctrl_c(heavy: HeavyWork) -> None:
    pid, _ = await heavy.run(jobs.who)
    os.kill(pid, signal.SIGINT)
    await asyncio.sleep(0.2)
    assert await heavy.run(jobs.add, 3, 4) == 7
    assert (await heavy.run(jobs.who))[0] == pid


async def test_close_ends_the_worker() -> None:
    heavy = HeavyWork()
    pid, _ = await heavy.run(jobs.who)
    heavy.close()
    assert await _gone(pid)
    heavy.close()  # twice is fine


async def test_a_job_that_prints_does_not_break_the_worker(heavy: HeavyWork) -> None:
    """The worker's stdout carries its answers only: what a job prints goes to stderr."""
    assert await heavy.run(jobs.noisy, "hello") == "hello"
    assert await heavy.run(jobs.add, 1, 2) == 3


async def test_unpicklable_work_is_refused_here_and_the_worker_keeps_going(
    heavy: HeavyWork,
) -> None:
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        await heavy.run(jobs.add, lambda: 1, 2)  # a lambda cannot cross to the worker
    assert await heavy.run(jobs.add, 1, 2) == 3


@action("test-held-picture")
async def _held_picture(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Heavy work that waits for the file `frame["gate"]` (the test kills its worker first)."""
    gate = Path(frame["gate"])
    return {"data": await ctx.heavy(jobs.wait_for, gate, gate.with_name("log"), "held")}


async def test_heavy_work_whose_worker_dies_is_an_error_reply_and_the_next_is_drawn(
    tmp_path: Path, gate: Gate
) -> None:
    """The world's side: an action whose worker is killed under its work answers the worker's
    loss as its error (no hang, no crash); the next picture gets a new worker."""
    table = standard_table().extended(ActionTable.of(_held_picture))
    world = World.open(tmp_path / "data", actions=table)
    try:
        pid, _ = await world.heavy.run(jobs.who)
        frame = {"type": "test-held-picture", "requestId": "p1", "gate": str(gate.path)}
        held = asyncio.create_task(world.handle(frame))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        assert await held == {
            "type": "test-held-picture-result",
            "requestId": "p1",
            "error": WORKER_LOST,
        }
        frame = {"type": "scene-screenshot", "requestId": "p2", "width": "256"}
        reply = await world.handle(frame)
        assert reply["data"]["imageData"].startswith("data:image/png;base64,")
    finally:
        world.close()
