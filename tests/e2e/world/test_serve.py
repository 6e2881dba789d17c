"""`vttrelay serve` as a user runs it: a real process with the relay and the demo world; the
printed `curl` line works when pasted, the world's state survives a restart of the process, and
no other token can claim the demo world's id."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import sys
from pathlib import Path

import orjson
import pytest
from bench.procs import free_port
from tests.support.relay import WorldDouble, WorldRefused, start_serve, stop_process

from vttrelay.protocol import Close
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.link.handshake import TOKEN_NOT_FOR_ID
from vttrelay.relay.store import RelayStore

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("curl") is None,
    reason="pastes the printed curl line into a real curl; uses POSIX signals",
)


async def _run(argv: list[str]) -> bytes:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0, argv
    return out


async def test_serve_prints_a_working_curl_line_and_keeps_state(tmp_path: Path) -> None:
    port = free_port()
    data_dir = tmp_path / "serve"
    procs: list[asyncio.subprocess.Process] = []
    try:
        proc, lines = await start_serve(data_dir, port)
        procs.append(proc)
        curl = lines[-1][len("Try: ") :]
        assert curl.startswith("curl ") and f"127.0.0.1:{port}" in curl
        body = orjson.loads(await _run(shlex.split(curl)))
        assert body["type"] == "world-info-result"
        assert body["data"]["world"]["id"] == "vttrelay-demo"
        assert body["data"]["activeScene"]["name"] == "The Yawning Portal"

        key = next(line.split(": ", 1)[1] for line in lines if line.startswith("API key: "))
        base = f"http://127.0.0.1:{port}"
        post = ["curl", "-s", "-H", f"x-api-key: {key}", "-H", "content-type: application/json"]
        sent = orjson.loads(await _run([*post, "-d", '{"content":"still here"}', f"{base}/chat"]))
        assert sent["success"] is True

        await stop_process(proc)
        assert proc.returncode == 0
        # A token for the demo world's id that serve did not mint (as an old pairing could have
        # issued) can't claim the id, not even while the restarted relay waits for its world.
        store = RelayStore(RelayConfig(data_dir=data_dir).db_path)
        rogue = store.create_connection_token("other", "vttrelay-demo", name="rogue")
        store.close()
        proc, lines = await start_serve(data_dir, port)
        procs.append(proc)
        refused = WorldDouble(f"ws://127.0.0.1:{port}/relay", "vttrelay-demo", rogue)
        with pytest.raises(WorldRefused) as info:
            await refused.connect()
        assert (info.value.code, info.value.reason) == (Close.AUTH_FAILED, TOKEN_NOT_FOR_ID)
        # the restart kept the key the first start printed (and wrote to the data dir)
        assert (data_dir / "demo-key").read_text() == key + "\n"
        assert not any(key in line for line in lines)
        listed = orjson.loads(await _run(["curl", "-s", "-H", f"x-api-key: {key}", f"{base}/chat"]))
        assert [m["content"] for m in listed["data"]["messages"]] == ["still here"]
    finally:
        for proc in procs:
            await stop_process(proc)
