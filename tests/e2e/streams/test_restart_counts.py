"""Channel state after a relay restart (issue 9 item 3): a world that reconnects to a relay that
restarted (stopped or killed) is told the count of every channel, zero included, so that a module
still forwarding a channel from before the restart stops. The world double keeps what it was
told across reconnects, as the real module does (its hooks stay registered)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from bench.procs import free_port
from tests.support.e2e import eventually
from tests.support.relay import WorldDouble, start_serve, stop_process

from vttrelay import protocol
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.relay.store import RelayStore

CLIENT = "world-1"


def channel_state(*doubles: WorldDouble) -> dict[str, int]:
    """What a module that saw these sockets' frames, in order, believes about each channel."""
    state: dict[str, int] = {}
    for double in doubles:
        for frame in double.received:
            if frame.get("type") == protocol.SUBSCRIPTION_UPDATE:
                state[frame["channel"]] = frame["count"]
    return state


def zero_counts(double: WorldDouble) -> set[str]:
    return {
        f["channel"]
        for f in double.received
        if f.get("type") == protocol.SUBSCRIPTION_UPDATE and f["count"] == 0
    }


async def test_reconnect_after_a_relay_restart_gets_zero_for_every_channel(
    relay_factory: Any, sse: Any, tmp_path: Path
) -> None:
    data = tmp_path / "restarted"
    first = await relay_factory(data_dir=data, subscription_linger=0)
    token = first.token(client_id=CLIENT)
    before = await WorldDouble(first.ws_url, CLIENT, token).connect()
    stream = await sse(first, "/chat/subscribe", first.key(DEFAULT_SCOPES), clientId=CLIENT)
    assert stream.status == 200
    await eventually(lambda: channel_state(before).get(protocol.CHAT_CHANNEL) == 1)

    await first.stop()  # the world sees 1001 and reconnects; the relay forgot its subscribers
    await before.close()
    second = await relay_factory(data_dir=data, port=first.port, subscription_linger=0)
    after = await WorldDouble(second.ws_url, CLIENT, token).connect()
    try:
        await eventually(lambda: zero_counts(after) == set(protocol.CHANNELS))
        state = channel_state(before, after)
        assert state == dict.fromkeys(protocol.CHANNELS, 0)
    finally:
        await after.close()


async def test_first_connect_of_a_new_world_is_told_only_live_channels(relay: Any) -> None:
    """A world that never connected before cannot be sending anything: no zeros for it."""
    double = await relay.world(CLIENT)
    await relay.state.streams.hub.flush()
    await asyncio.sleep(0.1)
    assert double.received == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
async def test_reconnect_after_the_relay_process_was_killed(tmp_path: Path, sse: Any) -> None:
    """The same after a crash: `vttrelay serve` killed with SIGKILL, started again."""
    data = tmp_path / "killed"
    port = free_port()
    store = RelayStore(RelayConfig(data_dir=data).db_path)
    token = store.create_connection_token("default", CLIENT, name=CLIENT)
    key = store.create_key("default", DEFAULT_SCOPES)[1]
    store.close()

    class Server:  # what the sse fixture needs
        url = f"http://127.0.0.1:{port}"

    async def serve() -> asyncio.subprocess.Process:
        proc, _ = await start_serve(data, port, "--no-world", "--subscription-linger", "0")
        return proc

    ws_url = f"ws://127.0.0.1:{port}/relay"
    procs: list[asyncio.subprocess.Process] = []
    doubles: list[WorldDouble] = []
    try:
        procs.append(await serve())
        before = await WorldDouble(ws_url, CLIENT, token).connect()
        doubles.append(before)
        stream = await sse(Server, "/chat/subscribe", key, clientId=CLIENT)
        assert stream.status == 200
        await eventually(lambda: channel_state(before).get(protocol.CHAT_CHANNEL) == 1)

        os.kill(procs[0].pid, signal.SIGKILL)
        await procs[0].wait()
        await asyncio.wait_for(before.closed.wait(), 5)
        procs.append(await serve())
        after = await WorldDouble(ws_url, CLIENT, token).connect()
        doubles.append(after)
        await eventually(lambda: zero_counts(after) == set(protocol.CHANNELS))
        assert channel_state(before, after) == dict.fromkeys(protocol.CHANNELS, 0)
    finally:
        for double in doubles:
            await double.close()
        for proc in procs:
            await stop_process(proc)
