"""`stop_tasks`, how the shared backends stop their background tasks: each ends, also one that
lost its first cancellation on the way, and what a task raised is not reported again."""

from __future__ import annotations

import asyncio
import time

from vttrelay.relay.backends.redis import client as redis_client
from vttrelay.relay.backends.redis.client import stop_tasks


async def test_a_task_that_swallowed_its_cancellation_is_cancelled_again() -> None:
    swallowed = asyncio.Event()

    async def retry_loop() -> None:  # as a check loop whose Redis call turned the cancel into
        while True:  # an error it catches, then goes on with its next sleep
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                if swallowed.is_set():
                    raise
                swallowed.set()

    loop_task = asyncio.ensure_future(retry_loop())
    plain = asyncio.ensure_future(asyncio.sleep(30))
    await asyncio.sleep(0)
    started = time.monotonic()
    await stop_tasks([loop_task, plain])
    assert swallowed.is_set() and loop_task.cancelled() and plain.cancelled()
    assert time.monotonic() - started < redis_client.RECANCEL_AFTER * 4


async def test_a_task_that_failed_ends_quietly() -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    task = asyncio.ensure_future(fails())
    await asyncio.sleep(0)
    await stop_tasks([task])  # does not raise
    assert isinstance(task.exception(), RuntimeError)
