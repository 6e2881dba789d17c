"""The /relay world socket over real WebSockets: handshake, every close code, keepalive."""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from typing import Any

import aiohttp
import orjson
import pytest
from tests.support.e2e import eventually
from tests.support.relay import assert_duplicate_from_other_host

from vttrelay.protocol import PERMANENT_CLOSE_CODES, Close
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.link.handshake import MISSING_ID, TOKEN_IN_URL


async def _raw_auth(relay: Any, query: dict[str, str], first: str | bytes | None) -> tuple:
    """Open /relay, send `first` (text, binary or nothing), return (close code, reason, frames)."""
    frames = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(relay.ws_url, params=query) as ws,
    ):
        if isinstance(first, str):
            await ws.send_str(first)
        elif isinstance(first, bytes):
            await ws.send_bytes(first)
        while True:
            msg = await ws.receive(timeout=5)
            if msg.type == aiohttp.WSMsgType.TEXT:
                frames.append(orjson.loads(msg.data))
                continue
            return ws.close_code, msg.extra, frames


async def test_missing_id_is_http_400(relay: Any) -> None:
    answer = await relay.call("GET", "/relay", headers={"Upgrade": "websocket"})
    assert (answer.status, answer.body.decode()) == (400, MISSING_ID)
    answer = await relay.call("GET", "/relay", params={"id": ""})
    assert (answer.status, answer.body.decode()) == (400, MISSING_ID)


async def test_token_in_url_is_http_400(relay: Any) -> None:
    answer = await relay.call("GET", "/relay", params={"id": "w", "token": "abc"})
    assert (answer.status, answer.body.decode()) == (400, TOKEN_IN_URL)
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        async with aiohttp.ClientSession() as session:
            await session.ws_connect(relay.ws_url, params={"id": "w", "token": "x"})
    assert info.value.status == 400


async def test_auth_timeout_closes_4002(relay_factory: Any) -> None:
    relay = await relay_factory(auth_timeout=0.3)
    loop = asyncio.get_running_loop()
    started = loop.time()
    code, reason, frames = await _raw_auth(relay, {"id": "w"}, None)
    assert 0.25 < loop.time() - started < 2.0
    assert (code, reason, frames) == (Close.AUTH_PROTOCOL, "Authentication timeout", [])


@pytest.mark.parametrize(
    "first",
    [
        "not json",
        '{"type":"hello","token":"x"}',
        '{"type":"auth","token":""}',
        '{"type":"auth"}',
        '["auth"]',
        b'{"type":"auth","token":"x"}',
    ],
)
async def test_invalid_auth_message_closes_4002(relay: Any, first: str | bytes) -> None:
    code, reason, frames = await _raw_auth(relay, {"id": "w"}, first)
    assert (code, reason, frames) == (Close.AUTH_PROTOCOL, "Invalid auth message", [])


async def test_unknown_token_closes_1008(relay: Any) -> None:
    bad = orjson.dumps({"type": "auth", "token": "0" * 64}).decode()
    code, reason, frames = await _raw_auth(relay, {"id": "w"}, bad)
    assert (code, reason, frames) == (Close.AUTH_FAILED, "Authentication failed", [])


async def test_revoked_token_closes_1008(relay: Any) -> None:
    token = relay.token()
    relay.store.revoke_token(token)
    code, reason, _ = await _raw_auth(
        relay, {"id": "w"}, orjson.dumps({"type": "auth", "token": token}).decode()
    )
    assert (code, reason) == (Close.AUTH_FAILED, "Authentication failed")


async def test_ip_allow_list_closes_4002(relay: Any, world_double: Any) -> None:
    token = relay.store.create_connection_token("default", "w", ip_allow="10.0.0.0/8")
    code, reason, frames = await _raw_auth(
        relay, {"id": "w"}, orjson.dumps({"type": "auth", "token": token}).decode()
    )
    assert (code, reason, frames) == (Close.AUTH_PROTOCOL, "IP address not allowed", [])
    allowed = relay.store.create_connection_token("default", "w2", ip_allow="10.0.0.1, 127.0.0.0/8")
    world = world_double(relay.ws_url, "w2", allowed)
    relay.worlds.append(world)
    await world.connect()
    assert relay.state.registry.get("w2") is not None


async def test_auth_success_then_registered_with_metadata(relay: Any) -> None:
    world = await relay.world("fvtt_abc", customName="Table", systemId="dnd5e")
    registered = relay.state.registry.get("fvtt_abc")
    assert registered is not None and registered.account == "default"
    meta = registered.metadata
    assert meta["worldId"] == "test-world" and meta["customName"] == "Table"
    assert meta["ipAddress"].startswith("127.0.0.1:")
    assert registered.system_id == "dnd5e"
    assert world.received == []  # nothing but auth-success before any request


async def test_same_host_duplicate_replaces_old_with_1000(relay: Any) -> None:
    old = await relay.world("dup")
    new = await relay.world("dup")
    assert await old.wait_closed() == Close.NORMAL
    assert old.close_reason == "Replaced by reconnect"
    assert relay.state.registry.get("dup") is not None
    assert relay.state.registry.get("dup").ws is not None
    key = relay.key()
    answer = await relay.call("GET", "/world-info", key=key)
    assert answer.status == 200
    assert len(new.received) == 1 and old.received == []


async def test_other_host_duplicate_gets_4004_before_auth_success(
    relay: Any, world_double: Any
) -> None:
    first = await relay.world("dup")
    await assert_duplicate_from_other_host(relay, "dup")
    assert relay.state.registry.get("dup") is not None
    assert not first.closed.is_set()


async def test_world_of_other_account_cannot_take_an_id(relay: Any, world_double: Any) -> None:
    await relay.world("shared-id", account="alice")
    with pytest.raises(world_double.Refused) as info:
        await relay.world("shared-id", account="bob")
    assert info.value.code == Close.DUPLICATE
    assert relay.state.registry.get("shared-id").account == "alice"


async def test_app_ping_gets_pong_and_player_list_is_kept(relay: Any) -> None:
    world = await relay.world()
    await world.emit({"type": "ping"})
    users = [{"id": "u1", "name": "Gamemaster", "role": 4, "active": True}]
    await world.emit({"type": "player-list", "users": users})
    for _ in range(100):
        if world.received and relay.state.registry.get("world-1").users:
            break
        await asyncio.sleep(0.02)
    assert world.received == [{"type": "pong"}]
    assert relay.state.registry.get("world-1").users == users


async def test_unknown_and_binary_frames_are_dropped(relay: Any) -> None:
    world = await relay.world()
    await world.emit({"type": "module-notify", "event": "settings-change"})
    await world.emit({"type": "skill-check-result", "requestId": "nobody-waits"})
    assert world.ws is not None
    await world.ws.send_bytes(b'{"type":"ping"}')
    await world.emit_raw("not json at all")
    await world.ws.send_frame(b'{"type":"ping","x":"\xff"}', aiohttp.WSMsgType.TEXT)  # bad UTF-8
    await world.emit({"type": "ping"})
    await eventually(lambda: world.received)
    assert world.received == [{"type": "pong"}]  # only the text ping was answered
    assert relay.state.registry.get("world-1") is not None


async def test_ws_ping_frames_and_drop_without_pong(relay_factory: Any) -> None:
    relay = await relay_factory(ping_interval=0.1, pong_timeout=0.5)
    # A live world answers ping frames (aiohttp autoping) and stays connected.
    alive = await relay.world("alive")
    token = relay.token(client_id="mute")
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(relay.ws_url, params={"id": "mute"}, autoping=False)
        await ws.send_str(orjson.dumps({"type": "auth", "token": token}).decode())
        assert (await ws.receive(timeout=5)).json() == {"type": "auth-success"}

        async def app_pings() -> None:  # application messages do not extend the deadline
            while not ws.closed:
                await ws.send_str('{"type":"ping"}')
                await asyncio.sleep(0.05)

        chatter = asyncio.ensure_future(app_pings())
        pings = pongs = 0
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            msg = await ws.receive(timeout=5)
            if msg.type == aiohttp.WSMsgType.PING:
                assert msg.data == b"keepalive"
                pings += 1
                continue
            if msg.type == aiohttp.WSMsgType.TEXT:
                assert msg.json() == {"type": "pong"}
                pongs += 1
                continue
            break
        elapsed = loop.time() - started
        chatter.cancel()
        assert msg.type == aiohttp.WSMsgType.CLOSE
        assert ws.close_code == Close.GOING_AWAY  # transient: the module reconnects
        assert msg.extra == "Keepalive timeout"
        assert pings >= 3 and pongs >= 3
        assert 0.4 < elapsed < 2.0
    assert relay.state.registry.get("mute") is None
    assert relay.state.registry.get("alive") is not None and not alive.closed.is_set()


async def test_64_mib_frames_are_accepted(relay: Any) -> None:
    blob = "x" * (64 * 1024 * 1024)  # the reply frame is a little over 64 MiB

    def big(frame: dict) -> str:
        rid = frame["requestId"]
        return '{"type":"world-info-result","requestId":"' + rid + '","data":"' + blob + '"}'

    await relay.world(handler=big)
    answer = await relay.call("GET", "/world-info", key=relay.key())
    assert answer.status == 200
    assert len(answer.body) > 64 * 1024 * 1024
    reply = answer.json()
    assert reply["type"] == "world-info-result" and reply["data"] == blob


async def test_concurrent_requests_of_every_frame_size_reach_the_world_intact(relay: Any) -> None:
    """Frames queued in one loop iteration leave together (frame_batch.py): 60 concurrent calls
    whose frames use all three header forms (under 126 bytes is not reachable: every frame
    carries its scopes) arrive whole, each answered to its own caller."""
    world = await relay.world()
    key = relay.key(["chat:write"])
    sizes = [1, 50, 200, 65_000, 65_600, 99_990] * 10

    async def one(i: int, size: int) -> None:
        content = f"{i:02d}" + "y" * size
        answer = await relay.call("POST", "/chat", key=key, json={"content": content})
        assert answer.status == 200, answer.body[:200]
        assert answer.json()["data"]["echo"]["content"] == content

    await asyncio.gather(*(one(i, size) for i, size in enumerate(sizes)))
    assert len(world.received) == len(sizes)
    assert sorted(len(f["content"]) - 2 for f in world.received) == sorted(sizes)


@pytest.mark.parametrize("path", ["/relay", "/relay/", "/"])
async def test_world_socket_paths(relay: Any, path: str, world_double: Any) -> None:
    url = relay.url.replace("http", "ws") + path
    world = world_double(url, "w-path", relay.token(client_id="w-path"))
    relay.worlds.append(world)
    await world.connect()
    assert relay.state.registry.get("w-path") is not None


async def test_root_without_upgrade_is_plain_http(relay: Any) -> None:
    answer = await relay.call("GET", "/")
    assert answer.status == 200 and answer.json()["docs"] == "/docs"


async def test_shutdown_closes_worlds_with_1001(relay_factory: Any) -> None:
    relay = await relay_factory()
    world = await relay.world()
    await relay.runner.cleanup()
    assert await world.wait_closed() == Close.GOING_AWAY


async def test_self_unpair_closes_live_socket_with_4002(relay: Any, world_double: Any) -> None:
    world = await relay.world()
    answer = await relay.call("POST", "/api/self-unpair", json={"token": world.token})
    assert answer.status == 200
    assert answer.json() == {"success": True, "message": "Connection token revoked"}
    assert await world.wait_closed() == Close.AUTH_PROTOCOL
    assert world.close_reason == "Unpaired by owner"
    assert world.ws is not None
    assert relay.state.registry.get("world-1") is None
    # The token is gone for good.
    with pytest.raises(world_double.Refused) as info:
        await world_double(relay.ws_url, "world-1", world.token).connect()
    assert info.value.code == Close.AUTH_FAILED


async def test_token_revoked_elsewhere_closes_4002(relay_factory: Any) -> None:
    relay = await relay_factory(token_check_interval=0.1)
    revoked = await relay.world("w-revoked")
    kept = await relay.world("w-kept")
    relay.store.revoke_token(revoked.token)  # as another process (the CLI) would
    assert await revoked.wait_closed() == Close.AUTH_PROTOCOL
    assert revoked.close_reason == "Connection token revoked"
    assert relay.state.registry.get("w-revoked") is None
    assert relay.state.registry.get("w-kept") is not None and not kept.closed.is_set()


async def test_replaced_world_fails_its_pending_requests(relay: Any) -> None:
    old = await relay.world("dup", handler=None)
    call = asyncio.ensure_future(relay.call("GET", "/world-info", key=relay.key()))
    await old.next_request()
    new = await relay.world("dup")
    got = await asyncio.wait_for(call, 2)
    assert (got.status, got.json()) == (503, {"error": "World disconnected before replying"})
    assert await old.wait_closed() == Close.NORMAL
    assert (await relay.call("GET", "/world-info", key=relay.key())).status == 200
    assert len(new.received) == 1


async def test_store_failure_during_auth_is_transient_1011(relay: Any) -> None:
    """A database problem must not make the module forget its token (never 1008/4002)."""

    def locked(secret: str) -> None:
        raise sqlite3.OperationalError("database is locked")

    relay.store.token_by_secret = locked
    auth = orjson.dumps({"type": "auth", "token": "a" * 64}).decode()
    code, reason, frames = await _raw_auth(relay, {"id": "w"}, auth)
    assert (code, reason, frames) == (Close.INTERNAL_ERROR, "Server error, try again", [])
    assert code not in PERMANENT_CLOSE_CODES
    assert relay.state.registry.get("w") is None


async def test_defaults_are_the_reference_relays() -> None:
    config = RelayConfig()
    assert (config.host, config.port) == ("127.0.0.1", 3010)
    assert config.auth_timeout == 10.0
    assert (config.ping_interval, config.effective_pong_timeout) == (20.0, 40.0)
    assert config.max_frame_bytes >= 64 * 1024 * 1024
    assert config.rate_per_minute == 300 and config.max_body_bytes == 250 * 1024 * 1024
    assert (config.pair_rate_limit, config.probe_rate_limit) == (10, 60)
    assert config.token_check_interval == 5.0  # revoked elsewhere: closed within seconds


async def test_one_log_line_per_connect_disconnect_and_request(
    relay: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vttrelay")
    world = await relay.world("logged", customName="x")
    await relay.call("GET", "/world-info", key=relay.key())
    await world.close()
    await eventually(lambda: relay.state.registry.get("logged") is None)
    lines = [r.getMessage() for r in caplog.records]
    assert sum(ln.startswith("world connected: logged ") for ln in lines) == 1
    assert sum(ln.startswith("world disconnected: logged ") for ln in lines) == 1
    requests = [r.getMessage() for r in caplog.records if r.name == "vttrelay.access"]
    line = r'127\.0\.0\.1 "GET /world-info" 200 \d+B \d+\.\dms key=key_\w+ world=- id=r\d+_\w{8}'
    assert any(re.fullmatch(line, ln) for ln in requests), requests
