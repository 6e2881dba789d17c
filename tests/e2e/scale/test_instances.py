"""Relay instances as separate `vttrelay serve --redis` processes: a world on one, calls on
another, and what happens when an instance is killed (SIGKILL: nothing released by it)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from typing import Any

import aiohttp
import redis
from bench.procs import free_port
from tests.support.relay import assert_duplicate_from_other_host, echo_handler

from vttrelay.protocol import Close
from vttrelay.relay.core import WORLD_GONE

INFO = "/world-info"
TTL = 1.0  # --heartbeat-ttl: an instance silent this long is dead


async def listed(node: Any, key: str) -> list[str]:
    body = (await node.call("GET", "/clients", key=key)).json()
    return [c["clientId"] for c in body["clients"] if c["isOnline"]]


async def test_a_killed_instance_fails_calls_to_its_worlds_and_releases_them(
    relay_processes: Any, redis_server: Any, world_double: Any
) -> None:
    a, b = await relay_processes(2, "--heartbeat-ttl", str(TTL))
    assert a.instance_id != b.instance_id

    def handler(frame: dict[str, Any]) -> Any:
        return None if frame["type"] == "world-info" else echo_handler(frame)

    world = await a.world("w1", handler=handler)
    key = a.key()
    deadline = time.monotonic() + 5
    while await listed(b, key) != ["w1"]:
        assert time.monotonic() < deadline, "B never saw the world of A"
        await asyncio.sleep(0.05)
    answer = await b.call("GET", "/search", key=key, params={"query": "gob"})
    assert answer.status == 200 and answer.json()["data"]["echo"]["query"] == "gob"
    status = (await b.call("GET", "/api/status")).json()
    assert status["instancesAlive"] == 2

    waiting = asyncio.ensure_future(b.call("GET", INFO, key=key))  # never answered
    while (await world.next_request())["type"] != "world-info":
        pass  # the search before it
    a.kill()
    killed = time.monotonic()
    gone = await waiting
    took = time.monotonic() - killed
    assert (gone.status, gone.json()) == (503, {"error": WORLD_GONE})
    # A's last heartbeat was at most a check interval before the kill: it expired at most TTL
    # after it; the call failed within 2 s of that
    assert took < TTL + 2.0, took
    print(f"503 on the live instance {took:.2f} s after SIGKILL (heartbeat TTL {TTL} s)")

    # nothing stays claimed by the dead instance once its heartbeat expired (the call above may
    # fail sooner: the direct link to A closed with its process)
    while await listed(b, key) != []:
        assert time.monotonic() < killed + TTL + 2.0, "the dead instance's world is still listed"
        await asyncio.sleep(0.05)
    missing = await b.call("GET", INFO, key=key, params={"clientId": "w1"})
    assert (missing.status, missing.json()["error"]) == (404, "Invalid client ID")
    with redis.Redis.from_url(redis_server.url) as client:
        assert client.hgetall("vttrelay:worlds") == {}
        assert client.zrange("vttrelay:instances", 0, -1) == [b.instance_id.encode()]
    assert (await b.call("GET", "/api/status")).json()["instancesAlive"] == 1

    # the world comes back through the live instance, even from another host
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        back = world_double(b.ws_url, "w1", b.token(client_id="w1"), session=session)
        await back.connect()
        again = await b.call("GET", "/search", key=key, params={"query": "x"})
        assert again.status == 200
        await back.close()


async def test_duplicate_rule_between_processes(relay_processes: Any, world_double: Any) -> None:
    a, b = await relay_processes(2)
    first = await a.world("dup")
    await assert_duplicate_from_other_host(b, "dup")
    await b.world("dup")  # the same host: replaces A's socket
    assert await first.wait_closed() == Close.NORMAL
    key = a.key()
    deadline = time.monotonic() + 5
    while (answer := await a.call("GET", INFO, key=key)).status != 200:
        assert time.monotonic() < deadline, answer.json()  # until A sees B's claim
        await asyncio.sleep(0.05)
    assert answer.json()["type"] == "world-info-result"


def test_serve_refuses_to_start_without_its_redis(tmp_path: Any) -> None:
    port = free_port()  # nothing listens there
    done = subprocess.run(
        [sys.executable, "-m", "vttrelay", "serve", "--no-world", "--port", "0",
         "--data-dir", str(tmp_path), "--redis", f"redis://127.0.0.1:{port}/0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"vttrelay: Redis at redis://127.0.0.1:{port}/0 is unreachable" in done.stderr
    assert "Traceback" not in done.stderr


async def test_the_redis_url_may_come_from_the_environment(
    redis_server: Any, tmp_path: Any
) -> None:
    port = free_port()
    env = {**os.environ, "VTTRELAY_REDIS_URL": redis_server.url}
    log = tmp_path / "serve.log"
    with log.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "vttrelay", "serve", "--no-world", "--port", str(port),
             "--data-dir", str(tmp_path)],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors,
        )  # fmt: skip
    try:
        assert process.stdout is not None
        first = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 20)
        # serving, and SIGTERM now stops it cleanly
        assert b"listening on" in first, log.read_text(errors="replace")[-2000:]
        with redis.Redis.from_url(redis_server.url) as client:
            assert client.zcard("vttrelay:instances") == 1  # it joined the cluster
            process.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(process.wait, 10) == 0
            assert client.zcard("vttrelay:instances") == 0  # it left the cluster cleanly
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)


async def test_a_world_behind_a_balancer_comes_back_through_a_live_instance(
    relay_processes: Any, balancer: Any, start_world: Any
) -> None:
    a, b = await relay_processes(2, "--heartbeat-ttl", str(TTL))
    front = await balancer([a, b])
    # the demo world (`serve --no-world` keeps its usual id for its own), through the balancer
    world = await start_world(front, client_id="demo")
    key = a.key()
    deadline = time.monotonic() + 5
    while (got := await b.call("GET", INFO, key=key)).status != 200:
        assert time.monotonic() < deadline, got.body  # until B knows the world
        await asyncio.sleep(0.05)
    info = got.json()["data"]
    a.kill()
    killed = time.monotonic()
    # the module's backoff reconnects it; the balancer sends it to B, the live instance
    while (got := await b.call("GET", INFO, key=key)).status != 200:
        assert time.monotonic() - killed < TTL + 10, got.body
        await asyncio.sleep(0.05)
    print(f"the world answered through B again {time.monotonic() - killed:.2f} s after SIGKILL")
    assert got.json()["data"] == info
    assert world.agent.connected.is_set()
    clients = (await b.call("GET", "/clients", key=key)).json()["clients"]
    assert [(c["clientId"], c["instanceId"]) for c in clients if c["isOnline"]] == [
        ("demo", b.instance_id)
    ]
