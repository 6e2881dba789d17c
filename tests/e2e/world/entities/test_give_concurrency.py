"""/give moves items in one transaction: 200 concurrent moves between four actors through a
real relay conserve every item, and a move of more than the source holds changes nothing.

The relay here answers 408 only after 120 s instead of the route's 10 s (as in the currency
test of world_dnd5e): the world runs its transactions one after another, so on a loaded
machine a request can wait longer than 10 s, and a move the relay gave up on still lands in
the world afterwards, which would make the bookkeeping below wrong although nothing was lost.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from vttrelay.world.embedded import EmbeddedWorld

PARTY = [
    "Actor.elaraWizard00001",
    "Actor.corvinWarlock001",
    "Actor.brannFighter0001",
    "Actor.pipMonk000000001",
]
START = 50  # gems per actor


@pytest.fixture
async def relay(relay_factory: Any) -> Any:
    """The `relay` the `world` and `api` fixtures use, with a 120 s request timeout."""
    return await relay_factory(timeout_override=120.0)


def gems(world: EmbeddedWorld) -> dict[str, int]:
    out = {}
    with world.world.store.transaction() as tx:
        for uuid in PARTY:
            actor = tx.get("Actor", uuid.split(".")[1])
            assert actor is not None
            stacks = [i for i in actor["items"] if i["name"] == "Gem"]
            assert len(stacks) <= 1, stacks  # moves stack by name, never split into two
            out[uuid] = stacks[0]["system"]["quantity"] if stacks else 0
    return out


async def test_200_concurrent_gives_conserve_items(world: EmbeddedWorld, api: Any) -> None:
    _, gem = await api(
        "POST", "/create", {"entityType": "Item", "data": {"name": "Gem", "type": "loot"}}
    )
    for uuid in PARTY:
        status, body = await api(
            "POST", "/give", {"toUuid": uuid, "itemUuid": gem["uuid"], "quantity": START}
        )
        assert status == 200 and body["quantity"] == START, body
    rng = random.Random(200)
    moves: list[dict[str, Any]] = []
    for _ in range(200):
        source, target = rng.sample(PARTY, 2)
        moves.append(
            {
                "fromUuid": source,
                "toUuid": target,
                "itemName": "gem",
                "quantity": rng.randint(1, 20),
            }
        )
    replies = await asyncio.gather(*(api("POST", "/give", move) for move in moves))
    assert not [b for s, b in replies if s == 408], "a move timed out at the relay"
    done = [m for m, (s, _) in zip(moves, replies, strict=True) if s == 200]
    refused = [b for s, b in replies if s != 200]
    assert all("has only" in b["error"] or "Item not found: gem" in b["error"] for b in refused), (
        refused
    )
    assert done, "no move succeeded"
    after = gems(world)
    assert sum(after.values()) == START * len(PARTY)  # conserved
    # and each actor holds exactly what the successful moves say, whatever their order
    expected = dict.fromkeys(PARTY, START)
    for move in done:
        expected[move["fromUuid"]] -= move["quantity"]
        expected[move["toUuid"]] += move["quantity"]
    assert after == expected


async def test_giving_more_than_held_changes_nothing(world: EmbeddedWorld, api: Any) -> None:
    move = {"fromUuid": PARTY[0], "toUuid": PARTY[1], "itemName": "Rations", "quantity": 6}
    before = gems(world)
    status, body = await api("POST", "/give", move)
    assert status == 400 and body["error"] == "Elara Quill has only 5 of Rations, not 6"
    _, elara = await api("GET", "/get", uuid=PARTY[0])
    assert [i["system"]["quantity"] for i in elara["data"]["items"] if i["name"] == "Rations"] == [
        5
    ]
    assert gems(world) == before
