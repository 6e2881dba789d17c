"""Issue 20 (hardening, round three), the relay's items, over real sockets: ids checked against
one pattern at the door (item 8), `/auth/pair` never hands out another live world's id (item 4),
public bodies read only up to the route's own limit (item 5), no log line takes raw input
(item 13), a key request naming another account's world refused (item 14)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from tests.support.e2e import eventually

from vttrelay import protocol
from vttrelay.relay.accounts import key_requests
from vttrelay.relay.backends.redis import link as redis_link
from vttrelay.relay.core import RelayError

TRAVERSAL = "z/../../keys/key_0123/revoke?"
INVALID_ID = (400, {"error": "Invalid client ID"})


@pytest.fixture
async def relay(relay_factory: Any) -> Any:
    """A relay without the per-IP pair, pair-request and key-request limits."""
    return await relay_factory(pair_rate_limit=0, key_request_rate_limit=0)


# Item 8: one pattern for the ids a world or a client chooses ------------------------------------


@pytest.mark.parametrize(
    "text",
    ["vttrelay-demo", "fvtt_0123456789abcdef", "world-1", "w", "my.world_2", "A" * 128],
)
def test_ids_that_worlds_use_match_the_pattern(text: str) -> None:
    assert protocol.valid_id(text)


@pytest.mark.parametrize(
    "text",
    ["", ".", "..", "../x", "a/b", "a?b", "a b", "a\nb", "é", "A" * 129, ".hidden", "a%2Fb"],
)
def test_ids_that_could_leave_a_path_segment_do_not(text: str) -> None:
    assert not protocol.valid_id(text)


async def _upgrade(relay: Any, query: dict[str, str]) -> tuple[int, str]:
    """Open /relay with a WebSocket upgrade: (HTTP status, body text) when refused, 101 else."""
    async with aiohttp.ClientSession() as http:
        try:
            ws = await http.ws_connect(relay.ws_url, params=query)
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status, exc.message
        await ws.close()
        return 101, ""


async def test_a_world_socket_with_an_id_off_the_pattern_is_refused_before_the_upgrade(
    relay: Any,
) -> None:
    async with aiohttp.ClientSession() as http:
        for query in ({"id": TRAVERSAL}, {"id": "ok-id", "worldId": "../x"}):
            async with http.get(
                relay.ws_url,
                params=query,
                headers={
                    "Upgrade": "websocket",
                    "Connection": "Upgrade",
                    "Sec-WebSocket-Version": "13",
                    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                },
            ) as resp:
                text = await resp.text()
                assert resp.status == 400, text
                assert text in (protocol.INVALID_CLIENT_ID, protocol.INVALID_WORLD_ID)
    # the ids worlds use connect as before
    for client_id in ("vttrelay-demo", "fvtt_0123456789abcdef", "world-1"):
        world = await relay.world(client_id)
        await world.close()


async def test_pairing_refuses_an_existing_client_id_off_the_pattern_before_spending_the_code(
    relay: Any,
) -> None:
    code = relay.store.create_pairing_code()
    body = {"code": code, "worldId": "w", "existingClientId": TRAVERSAL}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert (got.status, got.json()) == INVALID_ID
    got = await relay.call("POST", "/auth/pair", json={**body, "worldId": "a/b"})
    assert (got.status, got.json()) == (400, {"error": "Invalid world ID"})
    assert relay.store.list_tokens() == []
    got = await relay.call("POST", "/auth/pair", json={**body, "existingClientId": "fvtt_1"})
    assert (got.status, got.json()["clientId"]) == (200, "fvtt_1")  # the code still works


async def test_pair_and_key_requests_refuse_ids_off_the_pattern(relay: Any) -> None:
    for fields in ({"clientId": TRAVERSAL}, {"requestedTargetClients": ["ok", "a/b"]}):
        got = await relay.call("POST", "/auth/pair-request", json={"worldId": "w", **fields})
        assert (got.status, got.json()) == INVALID_ID
    got = await relay.call("POST", "/auth/pair-request", json={"worldId": "w/x"})
    assert (got.status, got.json()) == (400, {"error": "Invalid world ID"})
    app = {"appName": "A", "scopes": ["world:info"], "clientIds": ["world-1", TRAVERSAL]}
    got = await relay.call("POST", "/auth/key-request", json=app)
    assert (got.status, got.json()) == INVALID_ID
    app["clientIds"] = ["world-1", "vttrelay-demo"]
    assert (await relay.call("POST", "/auth/key-request", json=app)).status == 201


# Item 4: /auth/pair and another live world's id ------------------------------------------------


async def test_pairing_with_a_live_worlds_id_gets_a_new_id_and_the_world_keeps_its_requests(
    relay: Any,
) -> None:
    owner = await relay.world("fvtt_owner")  # worldId test-world, account default
    key = relay.key()
    code = relay.store.create_pairing_code()  # a code of the same account, in other hands
    body = {"code": code, "worldId": "test-world", "existingClientId": "fvtt_owner"}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert got.status == 200
    assert re.fullmatch("fvtt_[0-9a-f]{16}", got.json()["clientId"])
    assert [t.client_id for t in relay.store.list_tokens()].count("fvtt_owner") == 1
    answer = await relay.call("GET", "/world-info", key=key, params={"clientId": "fvtt_owner"})
    assert answer.status == 200 and answer.json()["data"]["echo"]["type"] == "world-info"
    assert owner.close_code is None

    # Offline, another world (another world id) does not get it either; the same world does
    await owner.close()
    await eventually(lambda: relay.state.registry.get("fvtt_owner") is None)
    body = {"code": relay.store.create_pairing_code(), "worldId": "other-world"}
    got = await relay.call("POST", "/auth/pair", json={**body, "existingClientId": "fvtt_owner"})
    assert got.status == 200 and got.json()["clientId"] != "fvtt_owner"
    body = {"code": relay.store.create_pairing_code(), "worldId": "test-world"}
    got = await relay.call("POST", "/auth/pair", json={**body, "existingClientId": "fvtt_owner"})
    assert (got.status, got.json()["clientId"]) == (200, "fvtt_owner")  # DESIGN §4


async def test_the_pair_approval_page_shows_which_client_id_will_be_redeemed(relay: Any) -> None:
    await relay.world("fvtt_owner")
    asked = {"worldId": "test-world", "clientId": "fvtt_owner"}
    made = (await relay.call("POST", "/auth/pair-request", json=asked)).json()
    page = (await relay.call("GET", f"/pair/{made['code']}")).body.decode()
    assert "a new id (fvtt_owner is connected now)" in page
    made = (await relay.call("POST", "/auth/pair-request", json={"worldId": "test-world"})).json()
    page = (await relay.call("GET", f"/pair/{made['code']}")).body.decode()
    assert "a new id, unless the world already has one of the approving account" in page


# Item 5: public bodies read up to the route's own limit ----------------------------------------


async def _chunked(size: int) -> AsyncIterator[bytes]:
    chunk = b'{"token":"' + b"x" * (64 * 1024)
    sent = 0
    while sent < size:
        yield chunk
        sent += len(chunk)


@pytest.mark.parametrize(
    "path", ["/api/self-unpair", "/auth/pair", "/auth/pair-request", "/auth/key-request"]
)
async def test_a_public_body_past_its_limit_is_refused_with_413_unread(
    relay: Any, path: str
) -> None:
    big = b'{"token":"' + b"x" * (2 * 1024 * 1024) + b'"}'
    got = await relay.call("POST", path, data=big, headers={"Content-Type": "application/json"})
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})
    # chunked (no Content-Length): read only up to the limit, then 413
    async with (
        aiohttp.ClientSession() as http,
        http.post(relay.url + path, data=_chunked(64 * 1024 * 1024)) as resp,
    ):
        assert resp.status == 413
        assert await resp.json() == {"error": "Request body too large"}


# Item 13: no log line takes raw input -----------------------------------------------------------


async def test_a_client_id_with_a_newline_forges_no_log_line(
    relay: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    forged = "w\n2026-01-01 00:00:00,000 INFO vttrelay.relay: world connected: fvtt_x"
    status, _ = await _upgrade(relay, {"id": forged})
    assert status == 400
    code = relay.store.create_pairing_code()
    body = {"code": code, "worldId": "w", "existingClientId": forged}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert (got.status, got.json()) == INVALID_ID
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "\n" in m or "fvtt_x" in m], messages


# Item 14: a key request naming another account's world ------------------------------------------


async def test_a_key_request_for_another_accounts_world_is_refused_clearly(relay: Any) -> None:
    await relay.world("alice-world", account="alice")
    app = {"appName": "Bot", "scopes": ["world:info"], "clientIds": ["alice-world"]}
    code = (await relay.call("POST", "/auth/key-request", json=app)).json()["code"]
    with pytest.raises(RelayError) as refused:
        key_requests.approve_key_request(relay.store, code, "mallory")
    assert (refused.value.status, refused.value.message) == (
        400,
        "World alice-world is not a world of account mallory",
    )
    assert relay.store.list_keys("mallory") == []
    done = key_requests.approve_key_request(relay.store, code, "alice")
    assert relay.store.get_key(done.key_id).client_ids == ("alice-world",)


# Item 12: unknown codes cost each address and all callers together -----------------------------


async def test_unknown_codes_from_many_addresses_share_one_global_budget(
    relay_factory: Any,
) -> None:
    relay = await relay_factory(code_miss_limit=2, code_miss_global_limit=5)
    statuses = []
    for n in range(2, 6):  # four addresses, two guesses each: eight misses against five
        connector = aiohttp.TCPConnector(local_addr=(f"127.0.0.{n}", 0))
        async with aiohttp.ClientSession(connector=connector) as http:
            for guess in ("ZZZZZZZZ", "YYYYYYYY"):
                url = f"{relay.url}/auth/pair-request/{guess}/status"
                async with http.get(url) as resp:
                    statuses.append(resp.status)
    assert statuses == [404] * 5 + [429] * 3


# Item 6: the scale-out link port ------------------------------------------------------------------


async def test_idle_link_connections_time_out_and_count_against_max_connections(
    relay_factory: Any,
) -> None:
    relay = await relay_factory(max_connections=6)
    (site,) = relay.runner.sites
    listener = await redis_link.listen(
        "127.0.0.1", "127.0.0.1", lambda *_: None, lambda *_: None, auth_timeout=0.5
    )
    listener.doorman.gate = site.gate  # as `vttrelay serve` wires it (count_links_in)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        while listener.doorman.refused == 0 and len(idle) < 20:  # sockets that send nothing
            idle.append(await asyncio.open_connection("127.0.0.1", listener.address.port))
            await asyncio.sleep(0.01)
        assert listener.doorman.refused == 1 and len(idle) <= 7  # the limit held
        async with aiohttp.ClientSession() as http, http.get(relay.url + "/api/health") as resp:
            assert (resp.status, await resp.json()) == (503, {"error": "Too many connections"})
        for reader, _ in idle:  # each closed by the link port for want of a secret
            assert await asyncio.wait_for(reader.read(), 3) == b""
        assert listener.doorman.timeouts >= 1 and listener.doorman.open == {}
        async with aiohttp.ClientSession() as http, http.get(relay.url + "/api/health") as resp:
            assert resp.status == 200
    finally:
        for _, writer in idle:
            writer.close()
        await listener.close()


async def test_a_flood_of_idle_link_connections_leaves_room_for_a_real_link() -> None:
    got: list[bytes] = []
    listener = await redis_link.listen(
        "127.0.0.1", "127.0.0.1", lambda _, m: got.append(m), lambda *_: None, limit=3
    )
    idle = [await asyncio.open_connection("127.0.0.1", listener.address.port) for _ in range(10)]
    try:
        await eventually(lambda: listener.doorman.refused + len(listener.doorman.open) >= 3)
        assert len(listener.doorman.open) <= 3
        address = dataclasses.replace(listener.address, path="")  # over TCP
        link = await redis_link.dial(address, lambda *_: None, lambda *_: None)
        link.send(b"hello")
        await eventually(lambda: got == [b"hello"])
        assert len(listener.doorman.open) <= 3 and listener.doorman.waiting.keys() != set()
        link.close()
    finally:
        for _, writer in idle:
            writer.close()
        await listener.close()


# Item 14: /docs, unknown API keys -----------------------------------------------------------------


async def test_the_docs_page_cannot_be_framed_and_keeps_no_key(relay: Any) -> None:
    got = await relay.call("GET", "/docs")
    assert got.status == 200
    assert got.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in got.headers["Content-Security-Policy"]
    page = got.body.decode()
    assert "localStorage" not in page and "sessionStorage" in page  # this tab only


async def test_unknown_api_keys_cost_the_address_a_budget(
    relay_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    relay = await relay_factory(unknown_key_rate_limit=3)
    reads: list[str] = []
    original = relay.store.key_by_secret

    def counted(secret: str) -> Any:
        reads.append(secret)
        return original(secret)

    monkeypatch.setattr(relay.store, "key_by_secret", counted)
    valid = relay.key()
    guesses = [f"{n:064x}" for n in range(5)]

    async def get(address: str, secret: str, path: str = "/clients") -> int:
        connector = aiohttp.TCPConnector(local_addr=(address, 0))
        async with (
            aiohttp.ClientSession(connector=connector) as http,
            http.get(relay.url + path, headers={"x-api-key": secret}) as resp,
        ):
            return resp.status

    assert await get("127.0.0.2", valid) == 200  # a known key costs nothing
    assert [await get("127.0.0.2", g) for g in guesses] == [401, 401, 401, 429, 429]
    assert len(reads) == 4  # the valid key and three guesses: no read past the budget
    assert await get("127.0.0.2", valid) == 200  # known keys still work from there
    assert await get("127.0.0.3", guesses[4]) == 401  # another address has its own budget
    # /mcp (Bearer keys) shares the budget
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with (
        aiohttp.ClientSession(connector=connector) as http,
        http.post(
            relay.url + "/mcp", headers={"Authorization": "Bearer " + "f" * 64}, data=b"{}"
        ) as resp,
    ):
        assert resp.status == 429


async def test_self_unpair_is_limited_per_address(relay_factory: Any) -> None:
    relay = await relay_factory(unpair_rate_limit=3)
    got = [await relay.call("POST", "/api/self-unpair", json={"token": "f" * 64}) for _ in range(4)]
    assert [g.status for g in got] == [200, 200, 200, 429]
    assert got[3].json() == {"error": "Too many requests, please try again later"}


async def test_the_active_probe_answers_an_id_off_the_pattern_without_a_store_read(
    relay: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    monkeypatch.setattr(relay.store, "known_client", reads.append)
    got = await relay.call("GET", "/api/clients/a%20b/active")
    assert (got.status, got.json()) == (404, {"error": "Client not found"})
    assert reads == []
