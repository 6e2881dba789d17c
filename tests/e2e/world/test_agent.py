"""The world agent against real relays: persistence across restarts, reconnecting after the relay
restarts, close codes, events only for subscribed channels, concurrency, pairing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from bench.procs import free_port
from tests.support.e2e import CLIENT_ID, FAST, WORLD_SCOPES, eventually

from vttrelay.cli import main
from vttrelay.world.actions.table import standard_table
from vttrelay.world.link.agent import Agent, AgentConfig
from vttrelay.world.link.connection import (
    Connection,
    forget_token,
    load_connection,
    save_connection,
)
from vttrelay.world.runtime.world import World


async def test_state_survives_a_world_restart(
    relay: Any, start_world: Any, api: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "persist"
    first = await start_world(relay, data_dir)
    status, body = await api(relay, "POST", "/chat", {"content": "remember me"})
    assert status == 200
    await first.stop()
    await eventually(lambda: relay.state.registry.get(CLIENT_ID) is None)
    await start_world(relay, data_dir)
    status, body = await api(relay, "GET", "/chat")
    assert status == 200
    assert [m["content"] for m in body["data"]["messages"]] == ["remember me"]


async def test_agent_reconnects_after_the_relay_restarts(
    relay_factory: Any, start_world: Any, api: Any, tmp_path: Path
) -> None:
    first = await relay_factory(data_dir=tmp_path / "restarted-relay")
    handle = await start_world(first)
    await api(first, "POST", "/chat", {"content": "before"})
    await first.stop()
    await eventually(lambda: not handle.agent.connected.is_set())
    await asyncio.sleep(0.3)  # a few failed attempts against the closed port
    assert handle.agent.attempts >= 1
    # the same relay again: same port, same data
    second = await relay_factory(data_dir=tmp_path / "restarted-relay", port=first.port)
    await eventually(lambda: handle.agent.connected.is_set(), timeout=5)
    assert handle.agent.connections == 2 and handle.agent.attempts == 0
    status, body = await api(second, "GET", "/chat")
    assert status == 200 and body["data"]["messages"][0]["content"] == "before"


async def test_events_flow_only_for_subscribed_channels(
    relay: Any, start_world: Any, api: Any
) -> None:
    handle = await start_world(relay)
    await api(relay, "POST", "/chat", {"content": "nobody listens"})
    assert handle.agent.sent["chat-event"] == 0
    key = relay.key(WORLD_SCOPES)
    async with aiohttp.ClientSession() as session:
        resp = await session.get(
            relay.url + "/chat/subscribe",
            params={"clientId": CLIENT_ID},
            headers={"x-api-key": key},
        )
        assert resp.status == 200
        connected = await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 5)
        assert b"event: connected" in connected
        await eventually(lambda: handle.world.subscribed("chat-events"))
        status, body = await api(relay, "POST", "/chat", {"content": "someone listens"})
        frame = await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 5)
        assert b"event: chat-create" in frame
        data = orjson.loads(frame.split(b"data: ", 1)[1])
        assert data == body["data"]
        assert handle.agent.sent["chat-event"] == 1
        assert handle.agent.sent["roll-data"] == 0  # no roll subscribers
        relay.state.streams.hub.settings.subscription_linger = 0  # no grace for a reconnect
        resp.close()
    await eventually(lambda: not handle.world.subscribed("chat-events"))
    await api(relay, "POST", "/chat", {"content": "gone again"})
    assert handle.agent.sent["chat-event"] == 1


async def test_requests_run_concurrently(relay: Any, start_world: Any, api: Any) -> None:
    await start_world(relay)
    replies = await asyncio.gather(
        *(api(relay, "POST", "/chat", {"content": f"m{i}"}) for i in range(40))
    )
    assert {status for status, _ in replies} == {200}
    assert len({body["data"]["id"] for _, body in replies}) == 40
    _, body = await api(relay, "GET", "/chat", limit=100)
    assert body["data"]["total"] == 40


async def test_bad_token_stops_and_forgets_it(relay: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "bad-token"
    save_connection(data_dir, Connection(relay.url, "not-a-token", CLIENT_ID))
    world = World.open(data_dir, actions=standard_table())
    codes: list[int] = []

    def on_failure(code: int) -> None:
        codes.append(code)
        forget_token(data_dir)

    agent = Agent(world, AgentConfig(relay.url, "not-a-token", on_auth_failure=on_failure, **FAST))
    await asyncio.wait_for(agent.start(), 5)
    world.close()
    assert codes == [1008] and agent.stopped_reason == "auth failed (1008)"
    assert agent.connections == 0
    assert (
        load_connection(data_dir).token == "" and load_connection(data_dir).client_id == CLIENT_ID
    )


async def test_unpair_closes_with_4002_and_the_agent_stops(relay: Any, start_world: Any) -> None:
    token = relay.token(client_id=CLIENT_ID)
    codes: list[int] = []
    handle = await start_world(relay, token=token, on_auth_failure=codes.append)
    answer = await relay.call("POST", "/api/self-unpair", json={"token": token})
    assert answer.status == 200
    await eventually(lambda: handle.agent.stopped_reason is not None)
    assert codes == [4002] and handle.agent.stopped_reason == "auth failed (4002)"


async def test_replaced_connection_gets_1000_and_stops(
    relay: Any, start_world: Any, tmp_path: Path
) -> None:
    old = await start_world(relay, tmp_path / "a")
    new = await start_world(relay, tmp_path / "b")
    await eventually(lambda: old.agent.stopped_reason is not None)
    assert old.agent.stopped_reason == "closed by relay (1000)"
    assert new.agent.connected.is_set()


async def test_module_handshake_duplicate_and_backoff_against_a_scripted_relay(
    tmp_path: Path,
) -> None:
    """A scripted /relay: checks the query, the auth frame, ping and player-list, then closes
    with 4004 (retry after `duplicate_retry`), then 1011 twice during the handshake (backoff 1x,
    2x base), then serves one request and closes with 1000 (the agent stops)."""
    seen: list[dict[str, Any]] = []
    plan = [4004, 1011, 1011, None]

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        step = plan.pop(0)
        seen.append({"query": dict(request.query), "at": asyncio.get_running_loop().time()})
        auth = orjson.loads((await ws.receive()).data)
        seen[-1]["auth"] = auth
        await ws.send_str('{"type":"pong"}')  # dropped: before auth-success
        if step == 1011:  # fails during the handshake: the backoff keeps growing
            await ws.close(code=step)
            return ws
        await ws.send_str('{"type":"auth-success"}')
        if step is not None:
            await ws.close(code=step)
            return ws
        first = [orjson.loads((await ws.receive()).data) for _ in range(2)]
        seen[-1]["first"] = first
        await ws.send_str('{"type":"event-subscription-update","channel":"chat-events","count":1}')
        await ws.send_str('{"type":"players","requestId":"r1","data":{}}')
        frames = []
        while True:
            frame = orjson.loads((await ws.receive()).data)
            frames.append(frame)
            if frame.get("requestId") == "r1":
                break
        seen[-1]["reply"] = frames[-1]
        await ws.close(code=1000)
        return ws

    app = web.Application()
    app.router.add_get("/relay", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    data_dir = tmp_path / "scripted"
    world = World.open(data_dir, actions=standard_table())
    try:
        cfg = AgentConfig(
            f"http://127.0.0.1:{port}/", "tok", base_delay=0.1, max_delay=30, duplicate_retry=0.3
        )
        agent = Agent(world, cfg)
        await asyncio.wait_for(agent.start(), 10)
    finally:
        world.close()
        await runner.cleanup()
    assert agent.stopped_reason == "closed by relay (1000)"
    assert len(seen) == 4
    assert seen[0]["query"] == {
        "id": "vttrelay-demo",
        "worldId": "vttrelay-demo",
        "worldTitle": "vttrelay Demo World",
        "foundryVersion": "14.363",
        "systemId": "dnd5e",
        "systemTitle": "Dungeons & Dragons Fifth Edition",
        "systemVersion": "5.0.4",
    }
    assert all(s["auth"] == {"type": "auth", "token": "tok"} for s in seen)
    gaps = [b["at"] - a["at"] for a, b in zip(seen, seen[1:], strict=False)]
    assert 0.3 <= gaps[0] < 0.6  # 4004: duplicate_retry
    assert 0.1 <= gaps[1] < 0.35  # first backoff: base
    assert 0.2 <= gaps[2] < 0.5  # second: 2 x base
    ping, players = seen[3]["first"]
    assert ping == {"type": "ping"}
    assert players["type"] == "player-list"
    assert [(u["id"], u["role"], u["active"]) for u in players["users"]] == [
        ("gmUser0000000001", 4, True),
        ("playerAria000001", 1, False),
        ("playerBen0000001", 1, False),
    ]
    assert seen[3]["reply"]["type"] == "players-result"
    assert len(seen[3]["reply"]["users"]) == 3


async def test_pair_command_stores_a_working_token(
    relay: Any, start_world: Any, api: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "paired"
    code = relay.store.create_pairing_code("default")
    args = ["world", "pair", code.lower(), "--relay", relay.url, "--data-dir", str(data_dir)]
    assert await asyncio.to_thread(main, args) == 0
    conn = load_connection(data_dir)
    assert conn.token and conn.client_id and conn.relay_url.endswith("/relay")
    handle = await start_world(relay, data_dir, client_id=conn.client_id, token=conn.token)
    assert handle.agent.connected.is_set()
    _, body = await api(relay, "GET", "/world-info", clientId=conn.client_id)
    assert body["data"]["world"]["id"] == "vttrelay-demo"
    again = ["world", "pair", code, "--relay", relay.url, "--data-dir", str(data_dir)]
    assert await asyncio.to_thread(main, again) == 1  # a code is single use


def test_reset_and_settings_commands(tmp_path: Path, capsys: Any) -> None:
    data_dir = str(tmp_path / "cli")
    assert main(["world", "settings", "--data-dir", data_dir]) == 0
    off = "execute-js: off\nmacro-write: off\nmacro-execute: off\n"
    assert capsys.readouterr().out == off
    assert main(["world", "settings", "--execute-js", "on", "--data-dir", data_dir]) == 0
    assert capsys.readouterr().out == off.replace("execute-js: off", "execute-js: on")
    assert main(["world", "settings", "--macro-execute", "on", "--data-dir", data_dir]) == 0
    assert capsys.readouterr().out == ("execute-js: on\nmacro-write: off\nmacro-execute: on\n")
    world = World.open(Path(data_dir), actions=standard_table())
    with world.store.transaction() as tx:
        tx.put("ChatMessage", {"_id": "m0000000000000001", "content": "x"})
    world.close()
    assert main(["world", "reset", "--data-dir", data_dir]) == 0
    assert main(["world", "settings", "--data-dir", data_dir]) == 0
    assert capsys.readouterr().out == off
    world = World.open(Path(data_dir), actions=standard_table())
    with world.store.transaction() as tx:
        assert tx.all("ChatMessage") == []
    world.close()


async def test_stop_is_prompt_while_connecting_or_waiting_to_retry(
    relay: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "stop"
    world = World.open(data_dir, actions=standard_table())
    try:
        token = relay.token(client_id=CLIENT_ID)
        agent = Agent(world, AgentConfig(relay.url, token, **FAST))
        agent.start()
        await asyncio.sleep(0)  # the loop is inside its first connect
        await asyncio.wait_for(agent.stop(), 3)
        assert not agent.connected.is_set()
        await eventually(lambda: relay.state.registry.get(CLIENT_ID) is None)

        unreachable = Agent(world, AgentConfig(f"http://127.0.0.1:{free_port()}", token))
        unreachable.start()
        await eventually(lambda: unreachable.attempts >= 1)  # now waiting 1 s to retry
        await asyncio.wait_for(unreachable.stop(), 0.5)
        assert unreachable.connections == 0
    finally:
        world.close()
