"""Relay instances sharing one PostgreSQL store: a pair request or pairing code made on one
instance is accepted on another, and a key or connection token revoked anywhere (another
instance, the CLI) stops working on every instance within seconds."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from tests.support.e2e import eventually

from vttrelay.protocol import Close


async def vttrelay(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the `vttrelay` command; returns (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def refused_within(relay: Any, key: str, limit: float) -> float:
    """Seconds until `relay` answers 401 "API key is disabled" to `key` (fails past `limit`)."""
    started = time.monotonic()
    while True:
        got = await relay.call("GET", "/clients", key=key)
        if got.status == 401:
            assert got.json() == {"error": "API key is disabled"}
            return time.monotonic() - started
        assert got.status == 200, got.body
        assert time.monotonic() - started < limit, f"still accepted after {limit} s"
        await asyncio.sleep(0.05)


async def test_pairing_on_one_instance_is_accepted_on_another(
    cluster: Any, postgres_url: str, world_double: Any
) -> None:
    a, b = await cluster(2, database=postgres_url)
    world = {"worldId": "friday", "worldTitle": "Friday Game", "systemId": "dnd5e"}
    got = await a.call("POST", "/auth/pair-request", json=world)
    assert got.status == 201, got.body
    request_code = got.json()["code"]
    # The owner approves with the CLI on the same database (here through the environment).
    code, _, err = await vttrelay(
        "pair", "approve", request_code, env={"VTTRELAY_DATABASE_URL": postgres_url}
    )
    assert code == 0, err
    got = await b.call("GET", f"/auth/pair-request/{request_code}/status")
    assert got.status == 200 and got.json()["status"] == "approved"
    pairing_code = got.json()["pairingCode"]
    got = await a.call("GET", f"/auth/pair-request/{request_code}/status")
    assert got.json() == {
        "message": "Pairing code has already been retrieved",
        "status": "exchanged",
    }

    paired = await b.call("POST", "/auth/pair", json={"code": pairing_code, "worldId": "friday"})
    assert paired.status == 200, paired.body
    token, client_id = paired.json()["token"], paired.json()["clientId"]
    again = await a.call("POST", "/auth/pair", json={"code": pairing_code, "worldId": "friday"})
    assert (again.status, again.json()) == (410, {"error": "Pairing code has already been used"})

    # A code minted by `vttrelay pair --database` is accepted by either instance, once.
    code, out, err = await vttrelay("pair", "--database", postgres_url)
    assert code == 0, err
    minted = out.strip()
    got = await a.call("POST", "/auth/pair", json={"code": minted, "worldId": "other"})
    assert got.status == 200 and got.json()["clientId"] != client_id
    got = await b.call("POST", "/auth/pair", json={"code": minted, "worldId": "other"})
    assert (got.status, got.json()) == (410, {"error": "Pairing code has already been used"})

    # The token paired on B connects the world on A; both instances list it.
    double = world_double(a.ws_url, client_id, token)
    await double.connect()
    key = a.key(["clients:read"])
    for relay in (a, b):
        got = await relay.call("GET", "/clients", key=key)
        listed = {c["clientId"]: c for c in got.json()["clients"]}
        assert listed[client_id]["isOnline"] is True
    await double.close()


async def test_revocations_reach_every_instance_within_seconds(
    cluster: Any, postgres_url: str, world_double: Any
) -> None:
    a, b = await cluster(2, database=postgres_url, key_cache_ttl=0.5, token_check_interval=0.5)
    key_id, key = a.store.create_key("default", ["clients:read"])
    for relay in (a, b):  # both instances know (and cache) the key
        assert (await relay.call("GET", "/clients", key=key)).status == 200
    code, _, err = await vttrelay("keys", "revoke", key_id, "--database", postgres_url)
    assert code == 0, err
    waited = await asyncio.gather(refused_within(a, key, 3.0), refused_within(b, key, 3.0))
    assert max(waited) < 3.0

    # A world connected on A: its token revoked in the database (the CLI) is closed by A's
    # token check; one unpaired through B (the module's self-unpair) is closed too.
    token = a.token(client_id="w-doomed")
    doomed = world_double(a.ws_url, "w-doomed", token)
    await doomed.connect()
    token_id = next(t.id for t in b.store.list_tokens() if t.client_id == "w-doomed")
    code, _, err = await vttrelay("tokens", "revoke", token_id, "--database", postgres_url)
    assert code == 0, err
    started = time.monotonic()
    assert await asyncio.wait_for(doomed.wait_closed(), 5) == Close.AUTH_PROTOCOL
    assert doomed.close_reason == "Connection token revoked"
    assert time.monotonic() - started < 3.0
    unpaired = await a.world("w-unpaired")
    got = await b.call("POST", "/api/self-unpair", json={"token": unpaired.token})
    assert got.json() == {"success": True, "message": "Connection token revoked"}
    assert await asyncio.wait_for(unpaired.wait_closed(), 5) == Close.AUTH_PROTOCOL
    await eventually(lambda: a.state.registry.get("w-doomed") is None)
    again = world_double(b.ws_url, "w-doomed", token)
    try:
        await again.connect()
        raise AssertionError("a revoked token connected")
    except world_double.Refused as refused:
        assert refused.code == Close.AUTH_FAILED


async def test_relay_processes_on_postgres_with_the_default_intervals(
    relay_processes: Any, postgres_url: str
) -> None:
    """`vttrelay serve --database postgresql://...` processes: a key made anywhere works on
    every instance at once, and its revocation is seen by all within the default key cache
    interval (5 s) plus one batch read."""
    a, b = await relay_processes(2, database=postgres_url)
    code, out, err = await vttrelay(
        "keys", "create", "--scope", "clients:read", "--database", postgres_url
    )
    assert code == 0, err
    key = out.strip()
    for relay in (a, b):
        assert (await relay.call("GET", "/clients", key=key)).status == 200
    key_id = next(k.id for k in a.store.list_keys() if k.scopes == ("clients:read",))
    assert a.store.revoke_key(key_id)
    waited = await asyncio.gather(refused_within(a, key, 8.0), refused_within(b, key, 8.0))
    assert max(waited) <= 6.0, waited
