"""The embedded world inside `vttrelay serve`: open the demo world and connect it to the relay
over a real loopback WebSocket, exactly as a remote world would connect.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vttrelay.world.agent import Agent, AgentConfig
from vttrelay.world.world import World

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
    **agent_options: Any,
) -> EmbeddedWorld:
    """Open `<data-dir>/world/world.db` (seeding the demo world if new) and connect it to
    `relay_url` with the connection `token`. Waits up to `wait_connected` seconds for the relay
    to accept it, so that the first API call finds the world online."""
    world = World.open(Path(data_dir))
    agent = Agent(world, AgentConfig(relay_url=relay_url, token=token, **agent_options))
    agent.start()
    if wait_connected > 0 and not await agent.wait_connected(wait_connected):
        log.warning("the embedded world is not connected yet; it keeps trying in the background")
    return EmbeddedWorld(world, agent)
