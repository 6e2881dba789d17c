"""The embedded world as `vttrelay serve` runs it: on its own event loop in its own thread
(`embedded.start_in_thread`), connected to a real relay over a real WebSocket; its
pictures are drawn in its heavy-work process, so the world answers other requests while one is
drawn; `stop` disconnects it and ends the thread and the worker process."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from tests.support import heavy_jobs as jobs
from tests.support.e2e import CLIENT_ID, FAST, eventually

from vttrelay.world.embedded import start_in_thread
from vttrelay.world.runtime.thread import THREAD_NAME


async def test_the_world_runs_on_its_own_loop_and_thread(
    relay: Any, api: Any, tmp_path: Path
) -> None:
    handle = await start_in_thread(
        relay.ws_url, relay.token(client_id=CLIENT_ID), tmp_path / "w", client_id=CLIENT_ID, **FAST
    )
    gate, log = tmp_path / "gate", tmp_path / "log"  # holds the heavy-work process until made
    try:
        assert handle.thread is not threading.current_thread()
        assert handle.thread.name == THREAD_NAME and handle.thread.is_alive()
        assert handle.loop is not asyncio.get_running_loop()
        world = handle.value.world
        where = await asyncio.wrap_future(
            handle.call(lambda: (threading.current_thread().name, world.metadata()["world"]["id"]))
        )
        assert where[0] == THREAD_NAME
        status, info = await api(relay, "GET", "/world-info")
        assert status == 200 and info["data"]["world"]["id"] == where[1]

        # The heavy-work process: not the relay's, nor the world's.
        worker, _ = await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(world.heavy.run(jobs.who), handle.loop)
        )
        assert worker != os.getpid()
        # Hold it: a picture waits for it, the world's loop does not.
        asyncio.run_coroutine_threadsafe(
            world.heavy.run(jobs.wait_for, gate, log, "held"), handle.loop
        )
        picture = asyncio.create_task(
            relay.call(
                "GET", "/scene/image", key=relay.key(("scene:read",)), params={"width": "512"}
            )
        )
        await asyncio.sleep(0.2)
        status, _ = await api(relay, "GET", "/world-info")
        assert status == 200 and not picture.done()
        gate.touch()
        answer = await picture
        assert answer.status == 200 and answer.body.startswith(b"\x89PNG")
    finally:
        gate.touch()
        await handle.stop()
    assert not handle.thread.is_alive()
    await eventually(lambda: not jobs.alive(worker))  # the worker process ended with the world
    await eventually(lambda: relay.state.registry.get(CLIENT_ID) is None)
