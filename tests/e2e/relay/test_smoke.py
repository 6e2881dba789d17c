"""Smoke: a world connects, a forward route round-trips."""

from __future__ import annotations

from typing import Any


async def test_skill_check_round_trip(relay: Any) -> None:
    world = await relay.world()
    key = relay.key()
    answer = await relay.call(
        "POST", "/dnd5e/skill-check", key=key, json={"actorUuid": "Actor.x", "skill": "prc"}
    )
    assert answer.status == 200, answer.body
    frame = answer.json()["data"]["echo"]
    assert frame["type"] == "skill-check"
    assert frame["createChatMessage"] is True
    assert world.received[-1] == frame
