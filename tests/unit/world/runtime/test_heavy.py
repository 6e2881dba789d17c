"""The world's heavy-work pool: work runs on its own lower-priority thread, off the caller's
loop; results and exceptions come back; a small pool queues work instead of taking more
threads; `close` ends its threads."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from vttrelay.world.runtime.heavy import HeavyWork


def _who() -> tuple[str, int]:
    tid = threading.get_native_id()
    return threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, tid)


async def test_work_runs_on_a_nicer_thread_of_its_own() -> None:
    heavy = HeavyWork(workers=1, niceness=5)
    try:
        name, niceness = await heavy.run(_who)
    finally:
        heavy.close()
    assert name.startswith("vttrelay-world-heavy")
    assert name != threading.current_thread().name
    if sys.platform == "linux":  # niceness is per thread there
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert niceness == min(19, mine + 5)


async def test_results_and_exceptions_come_back() -> None:
    heavy = HeavyWork()
    try:
        assert await heavy.run(sum, [1, 2, 3]) == 6
        with pytest.raises(ZeroDivisionError):
            await heavy.run(divmod, 1, 0)
    finally:
        heavy.close()


async def test_work_queues_for_the_pool_and_the_loop_stays_free() -> None:
    """With one worker, a second job waits for the first; the loop meanwhile runs other tasks."""
    heavy = HeavyWork(workers=1)
    gate = threading.Event()
    order: list[str] = []

    def job(name: str) -> str:
        if name == "first":
            gate.wait(10)
        order.append(name)
        return name

    try:
        first = asyncio.create_task(heavy.run(job, "first"))
        second = asyncio.create_task(heavy.run(job, "second"))
        for _ in range(20):  # the loop runs its other tasks meanwhile
            await asyncio.sleep(0)
        assert not first.done() and not second.done() and order == []  # the loop still runs
        gate.set()
        assert await asyncio.gather(first, second) == ["first", "second"]
        assert order == ["first", "second"]
    finally:
        gate.set()
        heavy.close()


async def test_close_ends_the_threads() -> None:
    heavy = HeavyWork(workers=1)
    name, _ = await heavy.run(_who)
    heavy.close()
    assert name not in {t.name for t in threading.enumerate()}
    heavy.close()  # twice is fine
