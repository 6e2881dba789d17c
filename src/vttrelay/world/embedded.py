"""The embedded world inside `vttrelay serve`: open the demo world and connect it to the relay
over a real loopback WebSocket, exactly as a remote world would connect.

`start_in_thread` is what `vttrelay serve` calls: the world on its own event loop in its own
thread (`runtime.thread`), never on the relay's loop. `start` runs it on the caller's loop (the
tests, which look inside the world).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vttrelay.world.actions.table import standard_table
from vttrelay.world.link.agent import Agent, AgentConfig
from vttrelay.world.runtime.table import ActionTable
from vttrelay.world.runtime.thread import LoopThread, run_in_thread
from vttrelay.world.runtime.world import World

log = logging.getLogger(__name__)


@dataclass
class EmbeddedWorld:
    """A running world and its agent; `await stop()` disconnects and closes the database."""

    world: World
    agent: Agent

    async def stop(self) -> None:
        await self.agent.stop()
        self.world.close()


async def start(
    relay_url: str,
    token: str,
    data_dir: Path,
    *,
    wait_connected: float = 10.0,
    actions: ActionTable | None = None,
    seed: int | None = None,
    **agent_options: Any,
) -> EmbeddedWorld:
    """Open `<data-dir>/world/world.db` (seeding the demo world if new) and connect it to
    `relay_url` with the connection `token`. Waits up to `wait_connected` seconds for the relay
    to accept it, so that the first API call finds the world online. The world answers the
    actions of `actions` (default: `standard_table()`); `seed`: its rolls, ids and clock are
    reproducible (`runtime.chance`)."""
    world = World.open(Path(data_dir), actions=actions or standard_table(), seed=seed)
    agent = Agent(world, AgentConfig(relay_url=relay_url, token=token, **agent_options))
    agent.start()
    if wait_connected > 0 and not await agent.wait_connected(wait_connected):
        log.warning("the embedded world is not connected yet; it keeps trying in the background")
    return EmbeddedWorld(world, agent)


async def start_in_thread(
    relay_url: str, token: str, data_dir: Path, **options: Any
) -> LoopThread[EmbeddedWorld]:
    """`start` (same arguments) on an event loop of its own in a thread of its own; the
    handle's `value` is the `EmbeddedWorld`, `await handle.stop()` stops it and the thread."""
    return await run_in_thread(lambda: start(relay_url, token, data_dir, **options))
