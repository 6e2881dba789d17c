"""The action dispatcher: reply envelope, unknown users, errors roll back, events after commit."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.errors import ActionError
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import ActionTable, action
from vttrelay.world.runtime.world import World


@action("test-hp")
def _set_hp(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    actor = ctx.tx.get("Actor", params["actorId"])
    if actor is None:
        actor = {"_id": params["actorId"], "name": "Tmp", "system": {"hp": 0}, "items": []}
    actor["system"]["hp"] = params["hp"]
    ctx.tx.put("Actor", actor)
    if params.get("fail"):
        raise ActionError("nope")
    if params.get("crash"):
        raise KeyError("boom")
    return {"data": {"hp": params["hp"], "user": ctx.user and ctx.user["name"]}}


@action("test-extra", error_extra={"success": False})
def _extra(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    raise ActionError("bad")


def _hp(world: World, actor_id: str) -> Any:
    with world.store.transaction() as tx:
        actor = tx.get("Actor", actor_id)
    return actor and actor["system"]["hp"]


@pytest.fixture
def actions() -> ActionTable:
    """The standard actions and this module's own."""
    return standard_table().extended(ActionTable.of(_set_hp, _extra))


async def test_reply_envelope_and_key_order(world: World) -> None:
    reply = await call(world, "test-hp", actorId="tmpActor00000001", hp=5)
    assert list(reply) == ["type", "requestId", "data"]
    assert reply == {
        "type": "test-hp-result",
        "requestId": "test-hp_1",
        "data": {"hp": 5, "user": None},
    }
    assert _hp(world, "tmpActor00000001") == 5


async def test_user_resolution_by_id_then_name(world: World) -> None:
    by_id = await call(
        world, "test-hp", actorId="tmpActor00000001", hp=1, userId="playerAria000001"
    )
    by_name = await call(world, "test-hp", actorId="tmpActor00000001", hp=2, userId="aRiA")
    assert by_id["data"]["user"] == by_name["data"]["user"] == "Aria"


async def test_unknown_user_is_refused_before_the_handler(world: World) -> None:
    reply = await call(world, "test-hp", actorId="tmpActor00000001", hp=7, userId="nobody")
    assert reply == {
        "type": "test-hp-result",
        "requestId": "test-hp_1",
        "error": "User not found: nobody",
        "data": None,
    }
    assert _hp(world, "tmpActor00000001") is None


async def test_errors_roll_back_and_carry_extra_keys(world: World) -> None:
    await call(world, "test-hp", actorId="tmpActor00000001", hp=3)
    world.sent.clear()  # type: ignore[attr-defined]
    world.set_subscription("actor-events", 1)
    failed = await call(world, "test-hp", actorId="tmpActor00000001", hp=9, fail=True)
    assert failed == {"type": "test-hp-result", "requestId": "test-hp_1", "error": "nope"}
    crashed = await call(world, "test-hp", actorId="tmpActor00000001", hp=9, crash=True)
    # The reply says what was wrong with the request, not the exception's text ('boom').
    assert crashed["error"] == (
        "Could not carry out test-hp: a parameter has a value of an unexpected type or shape"
    )
    assert _hp(world, "tmpActor00000001") == 3
    assert world.sent == []  # type: ignore[attr-defined]
    extra = await call(world, "test-extra")
    assert list(extra) == ["type", "requestId", "success", "error"]
    assert extra["success"] is False


async def test_unknown_action_gets_a_clear_error(world: World) -> None:
    reply = await call(world, "no-such-thing")
    assert reply == {
        "type": "no-such-thing-result",
        "requestId": "no-such-thing_1",
        "error": "Unknown action: no-such-thing",
    }


async def test_actor_changes_become_events_only_when_subscribed(world: World) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    await call(world, "test-hp", actorId="tmpActor00000001", hp=1)
    assert sent == []
    world.set_subscription("actor-events", 1)
    await call(world, "test-hp", actorId="tmpActor00000001", hp=4)
    assert sent == [
        {
            "type": "actor-event",
            "data": {
                "actorUuid": "Actor.tmpActor00000001",
                "actorName": "Tmp",
                "eventType": "update",
                "changes": {"system": {"hp": 4}, "_id": "tmpActor00000001"},
            },
        }
    ]
    sent.clear()
    world.set_subscription("actor-events", 0)
    world.set_subscription("hooks", 2)
    await call(world, "test-hp", actorId="tmpActor00000001", hp=6, userId="Aria")
    assert [f["type"] for f in sent] == ["hook-event"]
    hook = sent[0]["data"]
    assert hook["hook"] == "updateActor"
    assert hook["args"][0]["system"] == {"hp": 6}
    assert hook["args"][1] == {"system": {"hp": 6}, "_id": "tmpActor00000001"}
    assert hook["args"][2]["documentName"] == "Actor"
    assert hook["args"][3] == "playerAria000001"
