"""Helpers for the scale-out tests: `skill_checks(relay, key, count, client_id="w1")` sends
`count` skill checks to one world through one relay, all at once, and returns their statuses."""

from __future__ import annotations

import asyncio
from typing import Any


async def skill_checks(relay: Any, key: str, count: int, client_id: str = "w1") -> list[int]:
    """`count` skill checks on world `client_id` through `relay`, all at once: their statuses."""

    async def call(i: int) -> int:
        answer = await relay.call(
            "POST",
            "/dnd5e/skill-check",
            key=key,
            params={"clientId": client_id},
            json={"actorUuid": f"Actor.{i}", "skill": "prc"},
        )
        return int(answer.status)

    return list(await asyncio.gather(*(call(i) for i in range(count))))
