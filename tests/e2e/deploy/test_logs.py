"""`vttrelay serve`'s log as an operator reads it: one access line per request with the client's
address (behind a trusted proxy, the address it names), the key's name (never the key), the
world, a request id, status, bytes and time, in order with the other lines; `--log-format json`
for every line; `--access-log off` leaves the access lines out and the activity log still
records the calls."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import aiohttp
import orjson
from bench.procs import free_port
from tests.support.relay import stop_process

from vttrelay.relay import activity
from vttrelay.relay.store import RelayStore
from vttrelay.server.prepare import EMBEDDED_CLIENT_ID

REQUEST_ID = re.compile(r"r\d+_[0-9a-f]{8}")


async def make_key(data: Path, name: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "vttrelay", "keys", "create", "--name", name),
        *("--scope", "world:info", "--scope", "clients:read", "--data-dir", str(data)),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
    return out.decode().strip()


@asynccontextmanager
async def serving(data: Path, log: Path, *args: str) -> AsyncIterator[str]:
    """`vttrelay serve` with its stderr in `log`, until the block ends (then SIGTERM)."""
    port = free_port()
    with log.open("w") as stderr:
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "vttrelay", "serve", "--port", str(port)),
            *("--data-dir", str(data), *args),
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        assert proc.stdout is not None
        while not (await asyncio.wait_for(proc.stdout.readline(), 60)).startswith(b"Try: "):
            assert proc.returncode is None, log.read_text()
        yield f"http://127.0.0.1:{port}"
    finally:
        await stop_process(proc)


async def test_json_lines_with_the_client_the_key_name_and_the_world_in_order(
    tmp_path: Path,
) -> None:
    data, log = tmp_path / "data", tmp_path / "serve.log"
    secret = await make_key(data, 'table "bot"')
    json_log = ("--log-format", "json", "--trusted-proxy", "127.0.0.1")
    async with serving(data, log, *json_log) as base, aiohttp.ClientSession() as http:
        headers = {"x-api-key": secret, "X-Forwarded-For": "203.0.113.7"}
        params = {"clientId": EMBEDDED_CLIENT_ID}
        async with http.get(base + "/world-info", params=params, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            body = await resp.read()
        async with http.get(base + "/clients", headers={"x-api-key": "f" * 64}) as resp:
            assert resp.status == 401
    text = log.read_text()
    assert secret not in text and "f" * 64 not in text
    lines = [orjson.loads(line) for line in text.splitlines()]  # every line is one JSON object
    assert all({"time", "level", "logger"} <= set(line) for line in lines)
    access = [line for line in lines if line["logger"] == "vttrelay.access"]
    [info] = [line for line in access if line["path"] == "/world-info"]
    assert {k: v for k, v in info.items() if k not in ("time", "ms", "requestId")} == {
        "level": "INFO",
        "logger": "vttrelay.access",
        "peer": "203.0.113.7",
        "method": "GET",
        "path": "/world-info",
        "status": 200,
        "bytes": len(body),
        "key": 'table "bot"',
        "world": EMBEDDED_CLIENT_ID,
    }
    assert info["ms"] > 0 and REQUEST_ID.fullmatch(info["requestId"])
    [refused] = [line for line in access if line["path"] == "/clients"]
    assert (refused["status"], refused["key"], refused["peer"]) == (401, None, "127.0.0.1")
    assert len({line["requestId"] for line in access}) == len(access)
    # in the order they were made: the world connected before the call, the call before the
    # shutdown line, and the times never go back (by more than a thread's scheduling)
    messages = [line.get("message", line.get("path")) for line in lines]
    connected = next(i for i, m in enumerate(messages) if m.startswith("world connected: "))
    assert connected < lines.index(info) < messages.index("shutting down")
    stamps = [datetime.fromisoformat(line["time"]).timestamp() for line in lines]
    late = [(a, b) for a, b in zip(stamps, stamps[1:], strict=False) if b < a - 0.05]
    assert not late, late


async def test_access_log_off_leaves_the_lines_out_and_the_activity_log_records(
    tmp_path: Path,
) -> None:
    data, log = tmp_path / "data", tmp_path / "serve.log"
    secret = await make_key(data, "quiet bot")
    async with serving(data, log, "--access-log", "off") as base, aiohttp.ClientSession() as http:
        params = {"clientId": EMBEDDED_CLIENT_ID}
        headers = {"x-api-key": secret}
        async with http.get(base + "/world-info", params=params, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
    text = log.read_text()
    assert "vttrelay.access" not in text and "/world-info" not in text
    assert " INFO vttrelay.relay: world connected: " in text  # the other lines, as text
    store = RelayStore(data / "relay.db")
    try:
        calls = activity.find(store.db, None, activity.Filter(route="/world-info"))
    finally:
        store.close()
    assert [(c.key_name, c.world, c.status) for c in calls] == [
        ("quiet bot", EMBEDDED_CLIENT_ID, 200)
    ]
