"""A world's module-event budget scaled out (relay/accounts/module_events.py): one budget in
Redis over every instance the world connects through, so a world that reconnects elsewhere (or
is moved by a balancer) gets no fresh budget there."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.e2e import eventually

from vttrelay.relay.accounts import module_events
from vttrelay.relay.accounts.module_events import PER_MINUTE
from vttrelay.relay.accounts.services import ACCOUNTS


async def test_module_events_over_the_budget_across_two_instances_are_dropped(
    cluster: Any,
) -> None:
    a, b = await cluster(2)
    half = PER_MINUTE * 2 // 3  # 20 of 30 on each instance: 40 reported, 30 kept

    def kept() -> list[str]:
        return [e["actor"] for e in module_events.every(a.store, "default")]

    async def report(relay: Any, prefix: str) -> None:
        world = await relay.world("mod-1")
        for n in range(half):
            await world.emit({"type": "module-notify", "event": "macro-execute",
                              "actor": f"{prefix}{n}"})  # fmt: skip
        await eventually(lambda: len(kept()) + dropped() >= (half if prefix == "a" else 2 * half))
        await world.close()
        await eventually(lambda: relay.state.registry.get("mod-1") is None)

    def dropped() -> int:
        return sum(relay.app[ACCOUNTS].module_events.dropped for relay in (a, b))

    await report(a, "a")
    assert len(kept()) == half  # all of A's within the budget
    await report(b, "b")  # the same world through the other instance
    await asyncio.sleep(0.3)  # nothing more is written
    assert sorted(kept()) == sorted(
        [f"a{n}" for n in range(half)] + [f"b{n}" for n in range(PER_MINUTE - half)]
    )
    assert (a.app[ACCOUNTS].module_events.dropped, b.app[ACCOUNTS].module_events.dropped) == (
        0,
        2 * half - PER_MINUTE,
    )
