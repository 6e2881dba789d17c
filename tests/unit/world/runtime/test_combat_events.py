"""Combat events come from Combat document changes (runtime/events.py STREAM_RULES), whoever makes
them: a combat that leaves round 0 starts, a turn or round change is a turn, combatants joining
and leaving, a deleted combat ends; the combatStart/Round/Turn hooks go with them."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import ActionTable, action
from vttrelay.world.runtime.world import World

COMBAT = "combatTest000001"


def _member(cid: str, initiative: int | None) -> dict[str, Any]:
    return {"_id": cid, "name": cid, "initiative": initiative, "defeated": False}


@action("test-combat")
def _change(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    step = params["step"]
    combat = ctx.tx.get("Combat", COMBAT)
    if step == "create":
        combat = {"_id": COMBAT, "round": 0, "turn": None, "active": True, "combatants": []}
        combat["combatants"] = [_member("a", 5), _member("b", 15)]
    assert combat is not None
    if step == "begin":
        combat.update(round=1, turn=0)
    elif step == "join":  # a combatant joins ahead of the current one: the turn follows it
        combat["combatants"].append(_member("c", 20))
        combat["turn"] = 1
    elif step == "rename":
        combat["name"] = "Renamed"
    elif step == "end":
        ctx.tx.delete("Combat", COMBAT)
        return {}
    ctx.tx.put("Combat", combat)
    return {}


@pytest.fixture
def actions() -> ActionTable:
    """The standard actions and this module's own."""
    return standard_table().extended(ActionTable.of(_change))


async def test_combat_events_follow_the_document(world: World) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    world.set_subscription("combat-events", 1)
    world.set_subscription("hooks", 1)

    def combat_events() -> list[dict[str, Any]]:
        out = [f["data"] for f in sent if f["type"] == "combat-event"]
        sent.clear()
        return out

    def hooks() -> list[str]:
        return [f["data"]["hook"] for f in sent if f["type"] == "hook-event"]

    await call(world, "test-combat", step="create")  # created at round 0: not started
    assert [e["eventType"] for e in combat_events()] == ["combatant-add", "combatant-add"]
    await call(world, "test-combat", step="begin")
    assert hooks() == ["combatStart", "updateCombat"]
    [start] = combat_events()
    assert start == {
        "eventType": "start",
        "encounterId": COMBAT,
        "round": 0,
        "turn": None,
        "started": False,
        "combatants": [
            {"id": "b", "name": "b", "initiative": 15, "defeated": False,
             "uuid": f"Combat.{COMBAT}.Combatant.b"},
            {"id": "a", "name": "a", "initiative": 5, "defeated": False,
             "uuid": f"Combat.{COMBAT}.Combatant.a"},
        ],
    }  # fmt: skip
    await call(world, "test-combat", step="join")
    assert hooks() == ["createCombatant", "combatTurn", "updateCombat"]
    add, turn = combat_events()  # the combatant joins first, then the turn moves
    assert (add["eventType"], add["combatant"]["id"]) == ("combatant-add", "c")
    assert (turn["eventType"], turn["round"], turn["turn"], turn["started"]) == ("turn", 1, 1, True)
    assert [c["id"] for c in turn["combatants"]] == ["c", "b", "a"]
    await call(world, "test-combat", step="rename")
    assert hooks() == ["updateCombat"] and combat_events() == []
    sent.clear()
    await call(world, "test-combat", step="end")
    assert combat_events() == [{"eventType": "end", "encounterId": COMBAT, "round": 1}]
