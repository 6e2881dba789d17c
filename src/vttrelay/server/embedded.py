"""The embedded demo world of `vttrelay serve`: opened from the data dir and connected to the
relay over a real loopback WebSocket (`/relay`) with the token `prepare` reserved for it, exactly
as a remote world connects, on an event loop of its own in a thread of its own (so its work never
runs on the relay's loop); stopped (disconnected, its database closed) when the relay stops.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from vttrelay.relay.tls import loopback_client_context
from vttrelay.world.embedded import EmbeddedWorld, start_in_thread
from vttrelay.world.runtime.thread import LoopThread


@contextlib.asynccontextmanager
async def demo_world(
    relay_base: str, token: str | None, data_dir: Path, seed: int | None = None
) -> AsyncIterator[LoopThread[EmbeddedWorld] | None]:
    """The demo world of `data_dir` connected to the relay at `relay_base` (`http(s)://host:port`)
    while the block runs (`seed`: its rolls, ids and clock reproducible); None (no world) when
    `token` is None. A failure to stop it is not raised: the relay is shutting down anyway."""
    if token is None:
        yield None
        return
    ws_base = "ws" + relay_base.removeprefix("http")
    options = {"ssl_context": loopback_client_context()} if relay_base.startswith("https:") else {}
    world = await start_in_thread(f"{ws_base}/relay", token, data_dir, seed=seed, **options)
    try:
        yield world
    finally:
        with contextlib.suppress(Exception):
            await world.stop()
