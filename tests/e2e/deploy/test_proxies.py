"""The relay behind a real reverse proxy over TLS: Debian's nginx running docs/deploy/nginx.conf
and Debian's caddy running docs/deploy/Caddyfile as the docs give them (each test runs once per
proxy), with `--base-path /vtt` and `--trusted-proxy 127.0.0.1`.

Clients reach the proxy from their own loopback addresses (127.0.0.2, 127.0.0.3); the proxy
reaches the relay from 127.0.0.1, the one trusted proxy. A module-like client pairs and connects
its world over wss:// through the proxy, REST, SSE (unbuffered) and /ws/api work through it, the
links the relay writes name the proxy's https origin and prefix, each client has its own per-IP
budget, and forwarding headers from a peer the relay does not trust change nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from bench.procs import free_port
from tests.support.e2e import eventually
from tests.support.proxies import Proxy, make_certificate, start_caddy, start_nginx
from tests.support.relay import WorldDouble

from vttrelay.protocol import Close
from vttrelay.relay.accounts import keys, pair_requests

PROXY = "127.0.0.1"


@pytest.fixture(params=["nginx", "caddy"])
async def behind_proxy(
    request: pytest.FixtureRequest, relay_factory: Any, tmp_path: Path
) -> AsyncIterator[tuple[Any, Proxy]]:
    relay = await relay_factory(
        base_path="/vtt",
        trusted_proxies=(PROXY,),
        keepalive_interval=0.2,
        pair_rate_limit=2,
    )
    start: Callable[[Path, int, int], Proxy] = start_caddy
    if request.param == "nginx":
        start = partial(start_nginx, certificate=make_certificate(tmp_path / "tls"))
    proxy = await asyncio.to_thread(start, tmp_path / request.param, free_port(), relay.port)
    try:
        yield relay, proxy
    finally:
        await asyncio.to_thread(proxy.stop)


@pytest.fixture
async def client_from(
    behind_proxy: tuple[Any, Proxy],
) -> AsyncIterator[Callable[[str], aiohttp.ClientSession]]:
    """HTTP sessions from a given loopback address, trusting the proxy's CA."""
    proxy = behind_proxy[1]
    sessions: list[aiohttp.ClientSession] = []

    def make(address: str) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(ssl=proxy.client_context(), local_addr=(address, 0))
        session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None)
        )
        sessions.append(session)
        return session

    try:
        yield make
    finally:
        for session in sessions:
            await session.close()


async def test_module_pairs_and_everything_works_through_the_proxy_over_tls(
    behind_proxy: tuple[Any, Proxy], client_from: Callable[[str], aiohttp.ClientSession]
) -> None:
    relay, proxy = behind_proxy
    module = client_from("127.0.0.2")
    base = proxy.url + "/vtt"

    # The module's Pair button: a pair request whose pairUrl opens through the proxy
    async with module.post(
        base + "/auth/pair-request",
        json={"worldId": "my-world", "worldTitle": "My World", "systemId": "dnd5e"},
        headers={"Origin": "https://foundry.example"},
    ) as resp:
        assert resp.status == 201
        made = await resp.json()
    assert made["pairUrl"] == f"{base}/pair/{made['code']}"
    stored = pair_requests.get_pair_request(relay.store, made["code"])
    assert stored is not None and stored.peer == "127.0.0.2"  # the client, not the proxy
    async with module.get(made["pairUrl"]) as page:
        assert page.status == 200 and "text/html" in page.headers["Content-Type"]

    # Pairing with a code: the relayUrl is the proxy's wss:// address under the prefix
    code = relay.store.create_pairing_code()
    async with module.post(base + "/auth/pair", json={"code": code, "worldId": "my-world"}) as resp:
        paired = await resp.json()
    assert paired["relayUrl"] == f"wss://127.0.0.1:{proxy.port}/vtt/relay"
    world = WorldDouble(paired["relayUrl"], paired["clientId"], paired["token"], session=module)
    await world.connect()
    try:
        key = relay.key()
        bot = client_from("127.0.0.3")
        async with bot.get(base + "/clients", headers={"x-api-key": key}) as resp:
            clients = (await resp.json())["clients"]
        assert [c["clientId"] for c in clients] == [paired["clientId"]]

        # REST forwarded to the world over wss through the proxy
        async with bot.get(
            base + "/structure", params={"path": "x"}, headers={"x-api-key": key}
        ) as resp:
            assert resp.status == 200, await resp.text()
            assert (await resp.json())["data"]["echo"]["type"] == "structure"

        # SSE: the connected event and the keepalives arrive as they are sent (no buffering)
        async with bot.get(base + "/chat/subscribe", headers={"x-api-key": key}) as stream:
            assert stream.status == 200
            first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
            assert b"event: connected" in first
            for _ in range(2):
                frame = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 2)
                assert frame == b": keepalive\n\n"

        # /ws/api over wss through the proxy
        ws = await bot.ws_connect(f"wss://127.0.0.1:{proxy.port}/vtt/ws/api")
        await ws.send_str(orjson.dumps({"type": "auth", "token": key}).decode())
        hello = orjson.loads((await ws.receive(timeout=5)).data)
        assert hello["type"] != "error", hello
        await ws.close()

        # /docs loads openapi.json beside it; the document's server is the prefix
        async with bot.get(base + "/docs") as resp:
            docs = await resp.text()
        assert 'fetch("openapi.json")' in docs
        async with bot.get(base + "/openapi.json") as resp:
            assert (await resp.json())["servers"] == [{"url": "/vtt"}]
    finally:
        await world.close()


async def test_clients_behind_proxy_have_their_own_limits(
    behind_proxy: tuple[Any, Proxy], client_from: Callable[[str], aiohttp.ClientSession]
) -> None:
    _, proxy = behind_proxy
    url = proxy.url + "/vtt/auth/pair"
    guesser, other = client_from("127.0.0.2"), client_from("127.0.0.3")

    async def pair(session: aiohttp.ClientSession, headers: dict[str, str] | None = None) -> int:
        async with session.post(
            url, json={"code": "ZZZZZZ", "worldId": "w"}, headers=headers or {}
        ) as resp:
            return resp.status

    assert [await pair(guesser) for _ in range(3)] == [404, 404, 429]  # pair_rate_limit=2
    # a made-up X-Forwarded-For from the client: nginx appends the real address (caddy replaces
    # the header), which counts
    assert await pair(guesser, {"X-Forwarded-For": "203.0.113.9"}) == 429
    assert await pair(other) == 404  # another client behind the same proxy: its own budget


async def test_forwarding_headers_from_an_untrusted_peer_change_nothing(
    behind_proxy: tuple[Any, Proxy], client_from: Callable[[str], aiohttp.ClientSession]
) -> None:
    relay, _ = behind_proxy
    direct = client_from("127.0.0.2")  # straight to the relay: not a trusted proxy
    spoofed = {
        "X-Forwarded-For": "203.0.113.9",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "evil.example",
        "Forwarded": "for=203.0.113.10;proto=https;host=evil.example",
    }
    async with direct.post(
        relay.url + "/auth/pair-request", json={"worldId": "w"}, headers=spoofed
    ) as resp:
        made = await resp.json()
    assert made["pairUrl"].startswith(f"http://127.0.0.1:{relay.port}/vtt/pair/")
    stored = pair_requests.get_pair_request(relay.store, made["code"])
    assert stored is not None and stored.peer == "127.0.0.2"
    statuses = []
    for n in range(3):
        headers = {**spoofed, "X-Forwarded-For": f"203.0.113.{n}"}
        async with direct.post(
            relay.url + "/auth/pair", json={"code": "ZZZZZZ", "worldId": "w"}, headers=headers
        ) as resp:
            statuses.append(resp.status)
    assert statuses == [404, 404, 429]  # one budget, whatever address it claims


async def test_a_world_behind_the_proxy_is_known_by_its_own_address(
    behind_proxy: tuple[Any, Proxy],
    client_from: Callable[[str], aiohttp.ClientSession],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The world socket takes the client's address from the trusted proxy, as every HTTP route
    does: the token's IP allow-list, the duplicate-host rule, `ipAddress` and the connection log
    name the world's machine, not the proxy."""
    relay, proxy = behind_proxy
    caplog.set_level(logging.INFO, logger="vttrelay.relay")
    relay_url = f"wss://127.0.0.1:{proxy.port}/vtt/relay"
    token = relay.store.create_connection_token("default", "table", ip_allow="127.0.0.2")

    # the proxy itself (127.0.0.1) is not on the allow-list: a world from elsewhere is refused
    with pytest.raises(WorldDouble.Refused) as refused:
        await WorldDouble(relay_url, "table", token, session=client_from("127.0.0.3")).connect()
    assert refused.value.code == Close.AUTH_PROTOCOL

    world = await WorldDouble(relay_url, "table", token, session=client_from("127.0.0.2")).connect()
    try:
        live = relay.state.registry.get("table")
        assert live is not None and live.metadata["ipAddress"] == "127.0.0.2"
        assert any(
            r.getMessage().startswith("world connected: table ")
            and "from 127.0.0.2 via 127.0.0.1:" in r.getMessage()
            for r in caplog.records
        ), [r.getMessage() for r in caplog.records]

        def logged() -> list[str]:
            return [
                row["ip_address"] for row in keys.connection_logs(relay.store, "default", 9, 0)[1]
            ]

        await eventually(lambda: logged() == ["127.0.0.2"])

        # the same id from another machine behind the same proxy: the duplicate-host rule
        other = relay.store.create_connection_token("default", "table")
        with pytest.raises(WorldDouble.Refused) as duplicate:
            await WorldDouble(relay_url, "table", other, session=client_from("127.0.0.3")).connect()
        assert duplicate.value.code == Close.DUPLICATE
        assert not world.closed.is_set()
        # from the world's own machine: a reconnect replaces the old socket
        again = WorldDouble(relay_url, "table", token, session=client_from("127.0.0.2"))
        await again.connect()
        await world.wait_closed()  # (1000 from the relay; the proxy may end the TCP first)
        assert "world table replaced by a reconnect from 127.0.0.2" in caplog.messages
        await again.close()
    finally:
        await world.close()
