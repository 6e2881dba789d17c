"""All-or-nothing through a real relay: currency is conserved when 500 transfers between four
actors run concurrently, and a rest interrupted by a killed world process leaves the actor as
it was (the world runs in a subprocess that exits before its transaction commits).

The relay here answers 408 only after 120 s instead of the route's 10 s: the world runs its
transactions one after another, so a request's time at the relay grows with the number in
flight times the machine's load (measured: ~4 s with 100 in flight and six busy processes on
two cores). A transfer the relay gave up on still lands in the world afterwards, so a 408 would
make the exact bookkeeping below wrong although no coin was lost.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.world import World

PARTY = [
    "Actor.elaraWizard00001",
    "Actor.corvinWarlock001",
    "Actor.brannFighter0001",
    "Actor.pipMonk000000001",
]
DENOMS = ("pp", "gp", "ep", "sp", "cp")
IN_FLIGHT = 50  # concurrent transfers at any moment


@pytest.fixture
async def relay(relay_factory: Any) -> Any:
    """The `relay` the `world` and `api` fixtures use, with a 120 s request timeout."""
    return await relay_factory(timeout_override=120.0)


async def _balances(api: Any) -> dict[str, dict[str, int]]:
    out = {}
    for uuid in PARTY:
        status, body = await api(
            "GET", "/dnd5e/get-actor-details", actorUuid=uuid, details=["stats"]
        )
        assert status == 200, body
        out[uuid] = {d: int(body["data"]["stats"]["currency"][d]) for d in DENOMS}
    return out


async def test_500_concurrent_transfers_conserve_currency(relay: Any, world: Any, api: Any) -> None:
    for uuid in PARTY:
        for denom, amount in (("gp", 60), ("sp", 20)):
            status, body = await api(
                "POST",
                "/dnd5e/modify-currency",
                {"actorUuid": uuid, "currency": denom, "amount": amount},
            )
            assert status == 200, body
    start = await _balances(api)
    assert relay.config.timeout_override == 120.0  # this module's relay
    rng = random.Random(20261122)
    transfers = []
    for _ in range(500):
        source, target = rng.sample(PARTY, 2)
        coins = {"gp": rng.randint(1, 25)}
        if rng.random() < 0.5:
            coins["sp"] = rng.randint(1, 10)
        transfers.append((source, target, coins))

    gate = asyncio.Semaphore(IN_FLIGHT)

    async def send(source: str, target: str, coins: dict[str, int]) -> tuple[int, Any]:
        payload = {"sourceActorUuid": source, "targetActorUuid": target, "currency": coins}
        async with gate:
            return await api("POST", "/dnd5e/transfer-currency", payload)

    replies = await asyncio.gather(*(send(*t) for t in transfers))
    timed_out = [body for status, body in replies if status == 408]
    assert not timed_out, f"{len(timed_out)} transfers timed out at the relay"
    expected = {uuid: dict(coins) for uuid, coins in start.items()}
    succeeded = refused = 0
    for (source, target, coins), (status, body) in zip(transfers, replies, strict=True):
        if status == 200:
            succeeded += 1
            for denom, amount in coins.items():
                expected[source][denom] -= amount
                expected[target][denom] += amount
            assert all(v >= 0 for v in body["data"]["sourceBalance"].values())
        else:
            refused += 1
            assert status == 400 and body["error"].startswith("Insufficient "), body
    end = await _balances(api)
    for denom in DENOMS:
        assert sum(b[denom] for b in end.values()) == sum(b[denom] for b in start.values())
    assert all(v >= 0 for b in end.values() for v in b.values())
    # every successful transfer moved exactly its coins, every refused one nothing
    assert end == expected
    assert succeeded > 100 and refused > 0, (succeeded, refused)


WORLD_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from vttrelay.world.embedded import start

    async def main() -> None:
        await start(sys.argv[1], sys.argv[2], Path(sys.argv[3]), client_id=sys.argv[4],
                    wait_connected=30.0, base_delay=0.05, max_delay=0.2)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
)


async def test_rest_interrupted_by_a_killed_world_changes_nothing(
    relay: Any, api: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "crash-world"
    world = World.open(data_dir, actions=standard_table())
    with world.store.transaction() as tx:
        brann = tx.get("Actor", "brannFighter0001")
        assert brann is not None
        brann["system"]["attributes"]["hp"]["value"] = 5
        brann["system"]["currency"]["gp"] = 77
        tx.put("Actor", brann)
        before = brann
    world.close()

    env = {**os.environ, "VTTRELAY_CRASH_AFTER": "long-rest"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WORLD_SCRIPT,
            relay.ws_url,
            relay.token(client_id=CLIENT_ID),
            str(data_dir),
            CLIENT_ID,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            status, body = await api(
                "GET",
                "/dnd5e/get-actor-details",
                actorUuid="Actor.brannFighter0001",
                details=["stats"],
            )
            if status == 200:
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, body
            await asyncio.sleep(0.1)
        assert body["data"]["stats"]["hp"]["value"] == 5

        status, body = await api(
            "POST", "/dnd5e/long-rest", {"actorUuid": "Actor.brannFighter0001"}
        )
        assert status == 503, body
        assert body == {"error": "World disconnected before replying"}
        assert await asyncio.to_thread(proc.wait, 20) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr:
            proc.stderr.close()

    world = World.open(data_dir, actions=standard_table())
    try:
        with world.store.transaction() as tx:
            assert tx.get("Actor", "brannFighter0001") == before
            assert [m for m in tx.all("ChatMessage") if m.get("type") == "rest"] == []
    finally:
        world.close()
