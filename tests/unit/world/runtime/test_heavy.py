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
from pathlib import Path
from typing import Any

import pytest
from tests.support import heavy_jobs as jobs

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.context import WORKER_LOST, ActionContext
from vttrelay.world.runtime.heavy import HeavyWork, OverTime, WorkerLost
from vttrelay.world.runtime.table import ActionTable, action
from vttrelay.world.runtime.world import World


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


async def test_results_and_exceptions_come_back() -> None:
    heavy = HeavyWork()
    try:
        assert await heavy.run(jobs.add, 2, b=3) == 5
        with pytest.raises(ZeroDivisionError):
            await heavy.run(jobs.divide, 1, 0)
        assert await heavy.run(jobs.add, 1, 1) == 2  # the worker survives its work's errors
    finally:
        heavy.close()


async def test_work_queues_for_the_worker_and_the_loop_stays_free(tmp_path: Path) -> None:
    """With one worker, a second job waits for the first; the loop meanwhile runs other tasks."""
    heavy = HeavyWork()
    gate, log = tmp_path / "gate", tmp_path / "log"
    log.touch()
    try:
        first = asyncio.create_task(heavy.run(jobs.wait_for, gate, log, "first"))
        second = asyncio.create_task(heavy.run(jobs.wait_for, gate, log, "second"))
        for _ in range(20):  # the loop runs its other tasks meanwhile
            await asyncio.sleep(0.01)
        assert not first.done() and not second.done() and log.read_text() == ""
        gate.touch()
        assert await asyncio.gather(first, second) == ["first", "second"]
        assert log.read_text() == "first\nsecond\n"
    finally:
        gate.touch()
        heavy.close()


async def test_a_deadline_stops_work_at_its_next_checkpoint() -> None:
    heavy = HeavyWork()
    try:
        assert await heavy.run(jobs.spin, 0.05, seconds=5) > 0  # within its time: done
        start = time.monotonic()
        with pytest.raises(OverTime):
            await heavy.run(jobs.spin, 30, seconds=0.3)
        assert time.monotonic() - start < 5  # stopped near 0.3 s, not after 30
        with pytest.raises(OverTime):  # already past: it does not start
            await heavy.run(jobs.add, 1, 2, seconds=-1)
    finally:
        heavy.close()


async def test_work_queued_past_its_deadline_does_not_start(tmp_path: Path) -> None:
    heavy = HeavyWork()
    gate, log = tmp_path / "gate", tmp_path / "log"
    log.touch()
    try:
        first = asyncio.create_task(heavy.run(jobs.wait_for, gate, log, "first"))
        late = asyncio.create_task(heavy.run(jobs.wait_for, gate, log, "late", seconds=0.2))
        await asyncio.sleep(0.5)
        gate.touch()
        assert await first == "first"
        with pytest.raises(OverTime):
            await late
        assert log.read_text() == "first\n"
    finally:
        gate.touch()
        heavy.close()


async def test_a_killed_worker_fails_its_work_and_the_next_job_starts_another(
    tmp_path: Path,
) -> None:
    heavy = HeavyWork()
    gate, log = tmp_path / "gate", tmp_path / "log"
    try:
        pid, _ = await heavy.run(jobs.who)
        held = asyncio.create_task(heavy.run(jobs.wait_for, gate, log, "held"))
        queued = asyncio.create_task(heavy.run(jobs.who))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerLost):
            await held
        new_pid, _ = await queued  # the next job: a new worker
        assert new_pid != pid and await heavy.run(jobs.add, 2, 2) == 4
        assert not jobs.alive(pid)
    finally:
        gate.touch()
        heavy.close()


async def test_the_worker_ignores_ctrl_c() -> None:
    heavy = HeavyWork()
    try:
        pid, _ = await heavy.run(jobs.who)
        os.kill(pid, signal.SIGINT)
        await asyncio.sleep(0.2)
        assert await heavy.run(jobs.add, 3, 4) == 7
        assert (await heavy.run(jobs.who))[0] == pid
    finally:
        heavy.close()


async def test_close_ends_the_worker() -> None:
    heavy = HeavyWork()
    pid, _ = await heavy.run(jobs.who)
    heavy.close()
    assert await _gone(pid)
    heavy.close()  # twice is fine


@action("test-held-picture")
async def _held_picture(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Heavy work that waits for the file `frame["gate"]` (the test kills its worker first)."""
    gate = Path(frame["gate"])
    return {"data": await ctx.heavy(jobs.wait_for, gate, gate.with_name("log"), "held")}


async def test_heavy_work_whose_worker_dies_is_an_error_reply_and_the_next_is_drawn(
    tmp_path: Path,
) -> None:
    """The world's side: an action whose worker is killed under its work answers the worker's
    loss as its error (no hang, no crash); the next picture gets a new worker."""
    table = standard_table().extended(ActionTable.of(_held_picture))
    world = World.open(tmp_path / "data", actions=table)
    gate = tmp_path / "gate"
    try:
        pid, _ = await world.heavy.run(jobs.who)
        frame = {"type": "test-held-picture", "requestId": "p1", "gate": str(gate)}
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
        gate.touch()
        world.close()


async def test_a_job_that_prints_does_not_break_the_worker(tmp_path: Path) -> None:
    """The worker's stdout carries its answers only: what a job prints goes to stderr."""
    heavy = HeavyWork()
    try:
        assert await heavy.run(jobs.noisy, "hello") == "hello"
        assert await heavy.run(jobs.add, 1, 2) == 3
    finally:
        heavy.close()


async def test_unpicklable_work_is_refused_here_and_the_worker_keeps_going() -> None:
    heavy = HeavyWork()
    try:
        with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
            await heavy.run(jobs.add, lambda: 1, 2)  # a lambda cannot cross to the worker
        assert await heavy.run(jobs.add, 1, 2) == 3
    finally:
        heavy.close()
