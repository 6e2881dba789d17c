"""The world session without a socket: frames in, what they mean out; the keepalive's decisions
from given times; the handshake's refusals."""

from __future__ import annotations

import asyncio
import dataclasses

import orjson
import pytest

from vttrelay import protocol
from vttrelay.protocol import Close
from vttrelay.relay.link import handshake
from vttrelay.relay.link.pending import WorldGone
from vttrelay.relay.link.session import (
    PLAYERS_CHANGED,
    PONG,
    Beat,
    EventReceived,
    Keepalive,
    WorldSession,
)
from vttrelay.relay.store import TokenRecord

TOKEN = TokenRecord(
    id="t1",
    account="acct",
    client_id="w1",
    name="table",
    created_at=0.0,
    revoked_at=None,
    ip_allow="",
)


def _session() -> WorldSession:
    return WorldSession("w1", "acct", {"systemId": "dnd5e", "lastSeen": 0}, TOKEN)


async def test_a_reply_resolves_its_request_and_stamps_last_seen() -> None:
    world = _session()
    future = asyncio.get_running_loop().create_future()
    world.pending["r1"] = future
    raw = b'{"type":"players-result","requestId":"r1","users":[]}'
    assert world.receive(raw) is None
    assert future.result().raw is raw and not future.result().is_error
    assert world.metadata["lastSeen"] > 0
    assert world.system_id == "dnd5e"


async def test_an_error_reply_is_marked_and_an_unknown_id_is_dropped() -> None:
    world = _session()
    future = asyncio.get_running_loop().create_future()
    world.pending["r1"] = future
    assert world.receive(b'{"type":"x-result","requestId":"r1","error":"no"}') is None
    assert future.result().is_error
    assert world.receive(b'{"type":"x-result","requestId":"gone"}') is None


def test_control_frames_become_a_pong_or_events() -> None:
    world = _session()
    assert world.receive(orjson.dumps({"type": protocol.PING})) == PONG
    users = [{"id": "u1", "name": "GM", "role": 4, "active": True}]
    assert world.receive(orjson.dumps({"type": "player-list", "users": users})) is PLAYERS_CHANGED
    assert world.users == users
    assert world.receive(b'{"type":"player-list","users":"nope"}') is PLAYERS_CHANGED
    assert world.users == []
    event = {"type": "chat-event", "data": {"eventType": "create", "data": {"id": "m"}}}
    assert world.receive(orjson.dumps(event)) == EventReceived(event)  # type: ignore[arg-type]


@pytest.mark.parametrize("raw", [b"not json", b"[1,2]", b'{"type":"what"}', b'"auth"'])
def test_anything_else_is_dropped(raw: bytes) -> None:
    assert _session().receive(raw) is None


async def test_a_world_gone_fails_its_pending_requests_at_once() -> None:
    world = _session()
    future = asyncio.get_running_loop().create_future()
    world.pending["r1"] = future
    world.fail_pending()
    assert world.pending == {}
    with pytest.raises(WorldGone):
        future.result()


def test_keepalive_pings_every_interval_and_drops_after_the_limit() -> None:
    keepalive = Keepalive(interval=10.0, limit=25.0, now=100.0)
    assert keepalive.step(105.0) is Beat.WAIT and keepalive.wake_at == 110.0
    assert keepalive.step(110.0) is Beat.PING and keepalive.wake_at == 120.0
    assert keepalive.step(120.0) is Beat.PING and keepalive.wake_at == 125.0  # the deadline
    keepalive.pong(121.0)
    assert keepalive.step(125.0) is Beat.WAIT and keepalive.wake_at == 130.0
    assert keepalive.step(130.0) is Beat.PING
    assert keepalive.step(146.0) is Beat.DROP  # 25 s after the last pong


def test_the_handshake_refuses_with_the_documented_codes() -> None:
    assert handshake.auth_token(b'{"type":"auth","token":"s3cret"}') == "s3cret"
    for bad in (b"", b"{}", b'{"type":"auth"}', b'{"type":"auth","token":""}', b"[]"):
        assert handshake.auth_token(bad) is None
    assert handshake.check_token(None, "w1", {}, "127.0.0.1") == handshake.AUTH_FAILED
    assert handshake.check_token(TOKEN, "w2", {}, "127.0.0.1") == handshake.NOT_FOR_ID
    assert handshake.check_token(TOKEN, "w1", {"w1": "other"}, "::1") == handshake.NOT_FOR_ID
    assert handshake.check_token(TOKEN, "w1", {}, "127.0.0.1") is None
    fenced = dataclasses.replace(TOKEN, ip_allow="10.0.0.0/8")
    assert handshake.check_token(fenced, "w1", {}, "127.0.0.1") == handshake.IP_NOT_ALLOWED
    assert handshake.AUTH_FAILED.code == Close.AUTH_FAILED == 1008
    assert handshake.INVALID_AUTH.code == handshake.AUTH_TIMEOUT.code == Close.AUTH_PROTOCOL
    assert (handshake.DUPLICATE.code, handshake.TRY_AGAIN.code) == (4004, 1011)


def test_the_metadata_a_world_shows() -> None:
    query = {"id": "w1", "worldTitle": "Vale", "systemId": "dnd5e", "other": "x"}
    shown = handshake.world_metadata(query, "127.0.0.1:5000", "https://vtt.example", 1234)
    assert shown == {
        "worldTitle": "Vale",
        "systemId": "dnd5e",
        "ipAddress": "127.0.0.1:5000",
        "publicUrl": "https://vtt.example",
        "connectedSince": 1234,
        "lastSeen": 1234,
    }
    assert handshake.stored_metadata(shown) == {
        k: v for k, v in shown.items() if k not in ("connectedSince", "lastSeen")
    }
