"""`vttrelay serve --workers N` as a real command: N worker processes on one port (SO_REUSEPORT)
over a real redis-server, the embedded world on one of them, /api/status and /metrics from each,
a killed worker restarted, SIGTERM stopping them all; worker 0 keeping the world's lock when
the supervisor is killed; and the refusal without --redis."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from bench.procs import free_port
from prometheus_client.parser import text_string_to_metric_families
from tests.support.e2e import eventually
from tests.support.relay import run_vttrelay
from tests.support.servers import RedisServer

from vttrelay.relay.config import REDIS_URL_ENV

LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+) \((\d+) worker processes\)")
WORKER_UP = re.compile(r"worker (\d+) listening \(pid (\d+), instance (relay-[0-9a-f]+)\)")
METRICS_AT = re.compile(r"metrics of instance (relay-[0-9a-f]+) at (http://\S+/metrics)")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vttrelay", "serve", *args]


def env_without_redis() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != REDIS_URL_ENV}


def test_more_than_one_worker_needs_redis(tmp_path: Path) -> None:
    done = subprocess.run(
        command("--workers", "2", "--port", "0", "--data-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
        env=env_without_redis(),
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "--workers 2 needs --redis URL (or VTTRELAY_REDIS_URL)" in done.stderr
    assert not (tmp_path / "relay.db").exists()  # refused before touching anything


@dataclass
class Workers:
    """A running `vttrelay serve --workers N` (its supervisor process)."""

    process: subprocess.Popen[str]
    base: str
    api_key: str
    log_path: Path
    ready_path: Path  # --ready-file

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def workers(self) -> dict[int, tuple[int, str]]:
        """index -> (pid, instance id), the latest start of each, from the supervisor's log."""
        return {int(i): (int(pid), inst) for i, pid, inst in WORKER_UP.findall(self.log)}

    def metrics_urls(self) -> dict[str, str]:
        """instance id -> its own /metrics URL (`--metrics-port 0`), from the log."""
        return dict(METRICS_AT.findall(self.log))


@pytest.fixture
async def workers(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[Workers]:
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            command(
                "--workers", "2", "--port", "0", "--redis", redis_server.url,
                "--metrics-port", "0", "--data-dir", str(tmp_path / "data"),
                "--ready-file", str(tmp_path / "ready.json"),
            ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
            env=env_without_redis(),
        )  # fmt: skip
    try:
        assert process.stdout is not None
        first = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 60)
        match = LISTENING.search(first)
        assert match and match.group(2) == "2", first + log_path.read_text()
        key_line = await asyncio.to_thread(process.stdout.readline)
        assert key_line.startswith("API key: ")
        yield Workers(
            process, match.group(1), key_line.split()[-1], log_path, tmp_path / "ready.json"
        )
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(process.wait, 20)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(5)


async def on_fresh_connections(base: str, path: str, key: str, count: int) -> list[Any]:
    """`count` GETs, each on a new connection (SO_REUSEPORT spreads connections, not requests);
    returns (status, body text) pairs."""
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        answers = []
        for _ in range(count):
            async with http.get(base + path, headers={"x-api-key": key}) as resp:
                answers.append((resp.status, await resp.text()))
        return answers


async def statuses(base: str, count: int = 40) -> list[dict[str, Any]]:
    return [
        orjson.loads(text) for _, text in await on_fresh_connections(base, "/api/status", "", count)
    ]


async def test_workers_share_the_port_and_reach_the_world_from_each(workers: Workers) -> None:
    assert set(workers.workers()) == {0, 1}
    instances = {inst for _, inst in workers.workers().values()}
    # both workers answer on the one port, each says who it is and that two are alive
    seen = await statuses(workers.base)
    assert {s["instanceId"] for s in seen} == instances
    assert {s["instancesAlive"] for s in seen} == {2}, seen

    # the embedded world (connected to one of them) answers through either
    calls = await on_fresh_connections(workers.base, "/world-info", workers.api_key, 30)
    assert {status for status, _ in calls} == {200}

    # each worker's own metrics port: its share of those calls, its round trips to Redis
    urls = workers.metrics_urls()
    assert set(urls) == instances
    served: dict[str, float] = {}
    async with aiohttp.ClientSession() as http:
        for instance, url in urls.items():
            async with http.get(url) as resp:
                assert resp.status == 200
                families = {f.name: f for f in text_string_to_metric_families(await resp.text())}
            info = families["vttrelay_instance_info"].samples[0].labels
            assert info["instance_id"] == instance
            served[instance] = sum(
                s.value
                for s in families["vttrelay_http_requests"].samples
                if s.name == "vttrelay_http_requests_total"
                and s.labels["route"] == "/world-info"
                and s.labels["status"] == "200"
            )
            assert families["vttrelay_redis_round_trips"].samples[0].value > 0
    assert sum(served.values()) == 30
    assert all(count > 0 for count in served.values())  # both served the world's calls
    worlds = sum(1 for line in workers.log.splitlines() if "world connected: vttrelay-demo" in line)
    assert worlds == 1  # one embedded world, held by one worker


async def test_a_killed_worker_is_restarted_and_sigterm_stops_all(workers: Workers) -> None:
    before = workers.workers()
    dead_pid, dead_instance = before[1]
    os.kill(dead_pid, signal.SIGKILL)
    await eventually(lambda: workers.workers().get(1, before[1]) != before[1], timeout=20)
    new_pid, new_instance = workers.workers()[1]
    assert new_instance != dead_instance
    assert f"worker 1 (pid {dead_pid}, instance {dead_instance}) exited with code -9" in workers.log

    async def two_alive_and_the_new_one_answers() -> bool:
        seen = await statuses(workers.base, 20)
        ids = {s["instanceId"] for s in seen}
        return new_instance in ids and {s["instancesAlive"] for s in seen} == {2}

    deadline = time.monotonic() + 15
    while not await two_alive_and_the_new_one_answers():
        assert time.monotonic() < deadline, workers.log[-3000:]
        await asyncio.sleep(0.2)
    calls = await on_fresh_connections(workers.base, "/world-info", workers.api_key, 10)
    assert {status for status, _ in calls} == {200}

    # the ready file names the supervisor, the process that stops them all
    ready = orjson.loads(workers.ready_path.read_bytes())
    assert (ready["pid"], ready["url"]) == (workers.process.pid, workers.base)
    assert ready["apiKey"] == workers.api_key and ready["clientId"] == "vttrelay-demo"

    pids = [pid for pid, _ in workers.workers().values()]
    os.kill(workers.process.pid, signal.SIGTERM)
    assert await asyncio.to_thread(workers.process.wait, 20) == 0
    assert not workers.ready_path.exists()  # removed at the clean stop
    for pid in pids:  # every worker was stopped and reaped by the supervisor
        assert not Path(f"/proc/{pid}").exists()


def _world_lock_free(data: Path) -> bool:
    """Whether nobody holds the data dir's world lock (taken and dropped here to find out)."""
    with (data / "world" / "world.lock").open("a+b") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        return True


async def test_worker_zero_keeps_the_world_lock_when_the_supervisor_is_killed(
    workers: Workers, tmp_path: Path
) -> None:
    """Worker 0 runs the embedded world and holds the world's lock with the supervisor (the same
    open file, handed to it at spawn): SIGKILL the supervisor and the world still runs alone; a
    new `serve` of that data dir is refused until worker 0 is gone too."""
    data = tmp_path / "data"
    pids = [pid for pid, _ in workers.workers().values()]
    try:
        os.kill(workers.process.pid, signal.SIGKILL)
        await asyncio.to_thread(workers.process.wait, 10)
        assert not _world_lock_free(data)
        code, out, err = await run_vttrelay(
            "serve", "--port", str(free_port()), "--data-dir", str(data)
        )
        assert (code, out) == (1, "")
        assert err == (
            f"vttrelay: the embedded world of {data} is already served by another "
            f"vttrelay serve (pid {workers.process.pid})\n"
        )
        calls = await on_fresh_connections(workers.base, "/world-info", workers.api_key, 4)
        assert {status for status, _ in calls} == {200}
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    await eventually(lambda: _world_lock_free(data), timeout=10)
