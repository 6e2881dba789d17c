"""A script run never outlives its deadline (issue 9: "a script whose caller already got 408
keeps running"): waiting for a slot, starting and running all end by it, the child is killed,
and a slot given up while waiting is not lost. Real child processes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from vttrelay.world.errors import ScriptError
from vttrelay.world.scripts.sandbox import ScriptLimits, ScriptRunner

INIT: dict[str, Any] = {}


def no_host(op: str, args: Any) -> Any:
    raise AssertionError("no world calls expected")


async def test_the_deadline_cuts_a_longer_time_limit_and_kills_the_child() -> None:
    runner = ScriptRunner(ScriptLimits(time_limit=15.0))
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    try:
        with pytest.raises(ScriptError) as info:
            await runner.run("while (true) {}", init=INIT, host=no_host, deadline=loop.time() + 4)
        elapsed = time.monotonic() - started
        # Over by the deadline; on a loaded machine at worst by the kill at the deadline itself.
        assert elapsed < 4.5, elapsed
        assert info.value.message.startswith("the script exceeded its time limit of ")
        assert runner._children == set()  # the child is gone
    finally:
        runner.close()


async def test_waiting_for_a_slot_ends_at_the_deadline_and_keeps_the_slot() -> None:
    runner = ScriptRunner(ScriptLimits(time_limit=1.5), workers=1)
    loop = asyncio.get_running_loop()
    try:
        busy = asyncio.ensure_future(runner.run("while (true) {}", init=INIT, host=no_host))
        await asyncio.sleep(0.1)  # the busy script holds the only slot
        started = time.monotonic()
        with pytest.raises(ScriptError) as info:
            await runner.run("return 1", init=INIT, host=no_host, deadline=loop.time() + 0.3)
        assert time.monotonic() - started < 1.0
        assert info.value.message == (
            "the script could not start in time: the world runs at most 1 scripts at once"
        )
        with pytest.raises(ScriptError):
            await busy  # its own time limit
        result = await runner.run("return 2", init=INIT, host=no_host, deadline=loop.time() + 10)
        assert result.value == 2  # the slot given up by the waiter was not lost
    finally:
        runner.close()
