"""The world directory over Redis, end to end: relays sharing one Redis and one store, a world
on one instance, calls on another, with the bodies, statuses and timeouts of one process (real
sockets, a real redis-server). The hop runs over the direct link between the instances, and
(`hop="redis"`) through Redis pub/sub, the way when no link can be opened."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import pytest
import redis
from tests.support.e2e import eventually
from tests.support.relay import WorldDouble, assert_duplicate_from_other_host
from tests.support.servers import start_redis_server

from vttrelay.protocol import Close
from vttrelay.relay.core import TIMED_OUT, WORLD_GONE
from vttrelay.relay.routes import ALL_SCOPES, ROUTES

from ..relay.test_isolation import _valid as valid_call

FORWARD = [r for r in ROUTES if r.mode == "forward"]

INFO = "/world-info"
HOPS = ["link", "redis"]


def hop_through(holder: Any, hop: str) -> None:
    """Before its world connects: `redis`: the holder's entries name no direct link, so the
    calls of other instances to its worlds are published on its channel."""
    if hop == "redis":
        holder.state.registry.link_address = ""


def assert_hopped(caller: Any, holder: Any, hop: str) -> None:
    """The caller opened a link to the holder (`link`), or none (`redis`)."""
    expected = [holder.state.registry.link_address] if hop == "link" else []
    assert caller.state.registry.links() == expected


def without_request_id(body: dict[str, Any]) -> dict[str, Any]:
    """A reply body with the relay-made request ids (unique per call) taken out."""
    body = orjson.loads(orjson.dumps(body))
    if isinstance(body, dict):
        body.pop("requestId", None)
        echo = body.get("data", {}).get("echo", {}) if isinstance(body.get("data"), dict) else {}
        echo.pop("requestId", None)
    return body


@pytest.mark.parametrize("hop", HOPS)
async def test_a_world_on_one_instance_answers_calls_on_another(cluster: Any, hop: str) -> None:
    a, b = await cluster(2)
    hop_through(a, hop)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    for method, path, body in [
        ("GET", INFO, None),
        ("POST", "/dnd5e/skill-check", {"actorUuid": "Actor.a", "skill": "prc"}),
        ("GET", "/search", None),
    ]:
        params = {"clientId": "w1", **({"query": "gob"} if path == "/search" else {})}
        here = await a.call(method, path, key=key, json=body, params=params)
        there = await b.call(method, path, key=key, json=body, params=params)
        assert (there.status, there.headers["Content-Type"]) == (
            here.status,
            here.headers["Content-Type"],
        )
        assert without_request_id(there.json()) == without_request_id(here.json())
    assert len(world.received) == 6  # every call reached the one world socket, on A
    assert_hopped(b, a, hop)


@pytest.mark.parametrize("hop", HOPS)
async def test_errors_timeouts_and_a_world_leaving_are_the_same_elsewhere(
    cluster: Any, hop: str
) -> None:
    a, b = await cluster(2, timeout_override=0.5)
    hop_through(a, hop)
    leave = asyncio.Event()

    async def handler(frame: dict[str, Any]) -> Any:
        if frame["type"] == "world-info":
            return None  # never answers: a timeout
        if frame["type"] == "search":
            leave.set()  # the world goes away while the call waits
            return None
        return {"type": "x-result", "requestId": frame["requestId"], "error": "Actor not found"}

    world = await a.world("w1", handler=handler)
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    failed = await b.call(
        "POST", "/dnd5e/skill-check", key=key, json={"actorUuid": "A", "skill": "prc"}
    )
    assert failed.status == 400 and failed.json()["error"] == "Actor not found"
    assert_hopped(b, a, hop)
    started = asyncio.get_running_loop().time()
    timed_out = await b.call("GET", INFO, key=key)
    took = asyncio.get_running_loop().time() - started
    assert (timed_out.status, timed_out.json()) == (408, {"error": TIMED_OUT})
    assert 0.45 < took < 1.5
    waiting = asyncio.ensure_future(b.call("GET", "/search", key=key, params={"query": "x"}))
    await leave.wait()
    await world.close()
    gone = await waiting
    assert (gone.status, gone.json()) == (503, {"error": WORLD_GONE})
    await eventually(lambda: b.state.registry.get("w1") is None)
    missing = await b.call("GET", INFO, key=key, params={"clientId": "w1"})
    assert (missing.status, missing.json()["error"]) == (404, "Invalid client ID")


async def test_worlds_of_every_instance_are_resolved_and_listed(cluster: Any) -> None:
    a, b = await cluster(2)
    await a.world("w-a")
    await b.world("w-b", system_id="pf2e")
    await a.world("other", account="alice")
    await eventually(lambda: len(a.state.registry.for_account("default")) == 2)
    await eventually(lambda: b.state.registry.get("other") is not None)
    key = a.key()
    several = await b.call("GET", INFO, key=key)
    assert several.status == 400
    assert several.json()["connectedClients"] == ["w-a", "w-b"]
    listed = (await b.call("GET", "/clients", key=key)).json()
    assert [(c["clientId"], c["instanceId"], c["isOnline"]) for c in listed["clients"]] == [
        ("w-a", "relay-0", True),
        ("w-b", "relay-1", True),
    ]
    assert listed["clients"][0]["worldTitle"] == "Test World"
    before = int(time.time() * 1000)
    assert (await b.call("GET", INFO, key=key, params={"clientId": "w-a"})).status == 200
    seen = (await b.call("GET", "/clients", key=key)).json()["clients"][0]
    assert seen["clientId"] == "w-a" and seen["lastSeen"] >= before  # its reply was seen
    foreign = await b.call("GET", INFO, key=key, params={"clientId": "other"})
    assert (foreign.status, foreign.json()) == (
        401,
        {"error": "Invalid API key for this client ID"},
    )
    wrong_system = await a.call(
        "POST",
        "/dnd5e/skill-check",
        key=key,
        json={"actorUuid": "A", "skill": "prc"},
        params={"clientId": "w-b"},
    )
    assert wrong_system.status == 400
    assert (
        wrong_system.json()["error"] == "This endpoint needs a dnd5e world; world 'w-b' runs 'pf2e'"
    )


async def test_ws_api_calls_reach_a_world_on_another_instance(cluster: Any, api_ws: Any) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    socket = await api_ws(b, a.key())
    assert socket.hello["clientId"] == "w1"
    await socket.send(
        {"type": "skill-check", "requestId": "mine-1", "actorUuid": "A", "skill": "prc"}
    )
    reply = await socket.recv()
    assert (reply["type"], reply["requestId"], reply["clientId"]) == (
        "skill-check-result",
        "mine-1",
        "w1",
    )
    assert world.received[-1] == reply["data"]["echo"]


async def test_one_world_id_one_holder_over_the_cluster(cluster: Any, world_double: Any) -> None:
    a, b = await cluster(2)
    first = await a.world("dup")
    await eventually(lambda: b.state.registry.get("dup") is not None)
    # another host: refused before auth-success, on the other instance too
    await assert_duplicate_from_other_host(b, "dup")
    # another account: refused too
    with pytest.raises(world_double.Refused) as refused:
        await b.world("dup", account="alice")
    assert refused.value.code == Close.DUPLICATE
    assert not first.closed.is_set()
    # the same host reconnecting through the other instance replaces the holder
    second = await b.world("dup")
    assert await first.wait_closed() == Close.NORMAL
    assert first.close_reason == "Replaced by reconnect"
    await eventually(lambda: a.state.registry.get("dup") is not None)
    await eventually(lambda: getattr(a.state.registry.get("dup"), "instance_id", None) == "relay-1")
    answer = await a.call("GET", INFO, key=a.key())
    # the new holder answered; the counts a returning world is told on connecting come from a
    # Redis round trip, so they may land before or after the call
    asked = [f["type"] for f in second.received if f.get("type") != "event-subscription-update"]
    assert answer.status == 200 and asked[-1] == "world-info"
    assert b.state.registry.get("dup") is not None and len(b.state.registry) == 1
    assert len(a.state.registry) == 0  # A's socket is gone and nothing of it is claimed


@pytest.mark.parametrize("hop", HOPS)
async def test_large_frames_cross_instances_whole(cluster: Any, hop: str) -> None:
    a, b = await cluster(2)
    hop_through(a, hop)
    big = "x" * 900_000  # past the pub/sub inline limit (512 KiB): goes through a stored key

    def handler(frame: dict[str, Any]) -> dict[str, Any]:
        return {"type": "search-result", "requestId": frame["requestId"], "data": [big, frame]}

    await a.world("w1", handler=handler)
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    answer = await b.call("POST", "/execute-js", key=a.key(("execute-js",)), json={"script": big})
    assert answer.status == 200
    data = answer.json()["data"]
    assert data[0] == big and data[1]["script"] == big
    assert (await b.call("GET", "/search", key=key, params={"query": "q"})).status == 200
    assert_hopped(b, a, hop)


async def test_claims_are_put_back_when_redis_loses_them(cluster: Any, redis_server: Any) -> None:
    a, b = await cluster(2, heartbeat_ttl=1.0)
    await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushall()  # as after a Redis restart without persistence
        await eventually(lambda: client.hexists("vttrelay:worlds", "w1"), timeout=5)
        await eventually(lambda: client.zcard("vttrelay:instances") == 2)
    await eventually(lambda: b.state.registry.get("w1") is not None, timeout=5)
    answer = await b.call("GET", INFO, key=a.key())
    assert answer.status == 200


async def test_every_forward_route_answers_the_same_through_another_instance(
    cluster: Any,
) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key(scopes=ALL_SCOPES)
    for route in FORWARD:
        path, query, body = valid_call(route)
        here = await a.call(route.method, path, key=key, params=query, json=body)
        sent_here = world.received[-1] if here.status == 200 else None
        there = await b.call(route.method, path, key=key, params=query, json=body)
        label = f"{route.method} {route.path}"
        assert there.status == here.status, label
        assert there.headers["Content-Type"] == here.headers["Content-Type"], label
        if there.headers["Content-Type"].startswith("application/json"):
            assert without_request_id(there.json()) == without_request_id(here.json()), label
        else:
            assert there.body == here.body, label
        if sent_here is not None:  # the world got the same frame both times
            assert without_request_id(world.received[-1]) == without_request_id(sent_here)


async def test_self_unpair_on_one_instance_closes_the_world_on_another(cluster: Any) -> None:
    a, b = await cluster(2)
    token = a.token(client_id="w1")
    world = WorldDouble(a.ws_url, "w1", token)
    await world.connect()
    await eventually(lambda: b.state.registry.get("w1") is not None)
    got = await b.call("POST", "/api/self-unpair", json={"token": token})
    assert got.json() == {"success": True, "message": "Connection token revoked"}
    assert await world.wait_closed(2) == Close.AUTH_PROTOCOL
    assert world.close_reason == "Unpaired by owner"
    await eventually(lambda: b.state.registry.get("w1") is None)


async def test_a_burst_of_reconnects_leaves_one_socket_and_its_claim(
    cluster: Any, redis_server: Any
) -> None:
    a, b = await cluster(2)
    token = b.token(client_id="w1")
    doubles = [WorldDouble(b.ws_url, "w1", token) for _ in range(6)]
    await asyncio.gather(*(d.connect() for d in doubles), return_exceptions=True)
    await eventually(lambda: sum(not d.closed.is_set() for d in doubles) == 1)
    (survivor,) = [d for d in doubles if not d.closed.is_set()]
    held = b.state.registry.get("w1")
    with redis.Redis.from_url(redis_server.url) as client:
        entry = orjson.loads(client.hget("vttrelay:worlds", "w1") or b"{}")
    assert entry["instance"] == "relay-1"
    assert entry["conn"] == b.state.registry._conn["w1"]
    await eventually(lambda: a.state.registry.get("w1") is not None)
    answer = await a.call("GET", INFO, key=a.key())
    assert answer.status == 200 and survivor.received[-1]["type"] == "world-info"
    assert held is b.state.registry.get("w1")
    for double in doubles:
        await double.close()


async def test_many_calls_at_once_through_another_instance_each_get_their_reply(
    cluster: Any,
) -> None:
    a, b = await cluster(2, rate_per_minute=0)

    async def handler(frame: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.001 * (hash(frame["query"]) % 20))  # replies out of order
        return {"type": "search-result", "requestId": frame["requestId"], "q": frame["query"]}

    await a.world("w1", handler=handler)
    await eventually(lambda: b.state.registry.get("w1") is not None)
    key = a.key()
    answers = await asyncio.gather(
        *(b.call("GET", "/search", key=key, params={"query": f"q{i}"}) for i in range(200))
    )
    assert [(x.status, x.json()["q"]) for x in answers] == [(200, f"q{i}") for i in range(200)]
    assert b.state.registry._pending == {}  # nothing left waiting


async def test_instances_find_each_other_again_after_redis_restarts(
    cluster: Any, redis_server: Any
) -> None:
    a, b = await cluster(2)
    world = await a.world("w1")
    await eventually(lambda: b.state.registry.get("w1") is not None)
    redis_server.stop()  # everything in it is lost: no persistence
    restarted = start_redis_server(redis_server.directory, redis_server.port)
    try:
        # the subscriptions come back, the claims are put back, calls cross again
        await eventually(lambda: b.state.registry.get("w1") is not None, timeout=10)
        deadline = time.monotonic() + 10
        while (got := await b.call("GET", INFO, key=a.key())).status != 200:
            assert time.monotonic() < deadline, got.body
            await asyncio.sleep(0.1)
        assert world.received[-1]["type"] == "world-info"
        with redis.Redis.from_url(restarted.url) as client:
            await eventually(lambda: client.hexists("vttrelay:worlds", "w1"), timeout=10)
            await eventually(lambda: client.zcard("vttrelay:instances") == 2, timeout=5)
    finally:
        restarted.stop()


async def test_an_instance_that_joins_is_counted_by_the_others_at_once(
    redis_server: Any, relay_factory: Any, tmp_path: Any
) -> None:
    # checks 30 s apart: only the `joined` announcement can tell A about B within the test
    def start(instance_id: str) -> Any:
        return relay_factory(
            tmp_path / "shared", instance_id=instance_id, redis_url=redis_server.url,
            heartbeat_check_interval=30.0, heartbeat_ttl=60.0,
        )  # fmt: skip

    a = await start("relay-a")
    assert (await a.call("GET", "/api/status")).json()["instancesAlive"] == 1
    b = await start("relay-b")
    await eventually(lambda: len(a.state.registry.instances()) == 2, timeout=2)
    for node in (a, b):
        assert (await node.call("GET", "/api/status")).json()["instancesAlive"] == 2
