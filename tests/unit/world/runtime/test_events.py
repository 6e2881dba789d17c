"""Document changes -> actor, scene and hook event frames (world-behaviour §6.2 payloads)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.events import diff
from vttrelay.world.runtime.table import ActionTable, action
from vttrelay.world.runtime.world import World

ACTOR = "elaraWizard00001"


@action("test-embedded")
def _embedded(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    actor = ctx.tx.get("Actor", ACTOR)
    assert actor is not None
    step = params["step"]
    if step == "add":
        actor["items"].append({"_id": "newItem000000001", "name": "Rope", "system": {"q": 1}})
        actor["effects"].append({"_id": "newEffect0000001", "name": "Blessed"})
    elif step == "update":
        actor["items"][-1]["system"]["q"] = 2
    elif step == "remove":
        actor["items"] = [i for i in actor["items"] if i["_id"] != "newItem000000001"]
        actor["effects"] = [e for e in actor["effects"] if e["_id"] != "newEffect0000001"]
    elif step == "token":
        scene = ctx.tx.get("Scene", "sceneTavern00001")
        assert scene is not None
        scene["tokens"][0]["x"] += 100
        scene["tokens"].pop()
        ctx.tx.put("Scene", scene)
        return {"data": {}}
    ctx.tx.put("Actor", actor)
    return {"data": {}}


def test_diff() -> None:
    assert diff({"a": 1, "b": {"c": 1, "d": 2}, "e": 0}, {"a": 1, "b": {"c": 2, "d": 2}}) == {
        "b": {"c": 2},
        "-=e": None,
    }
    assert diff({"l": [1]}, {"l": [1, 2], "n": None}) == {"l": [1, 2], "n": None}


@pytest.fixture
def actions() -> ActionTable:
    """The standard actions and this module's own."""
    return standard_table().extended(ActionTable.of(_embedded, _journal))


async def test_item_and_effect_events(world: World) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    world.set_subscription("actor-events", 1)
    await call(world, "test-embedded", step="add")
    events = [(f["data"]["eventType"], f["data"]) for f in sent]
    assert [e for e, _ in events] == ["item-add", "effect-add"]
    assert events[0][1]["item"]["name"] == "Rope"
    assert events[0][1]["actorUuid"] == f"Actor.{ACTOR}"
    assert events[1][1]["effect"]["name"] == "Blessed"
    sent.clear()
    await call(world, "test-embedded", step="update")
    assert [f["data"] for f in sent] == [
        {
            "actorUuid": f"Actor.{ACTOR}",
            "actorName": "Elara Quill",
            "eventType": "item-update",
            "itemId": "newItem000000001",
            "itemName": "Rope",
            "changes": {"system": {"q": 2}, "_id": "newItem000000001"},
        }
    ]
    sent.clear()
    world.set_subscription("hooks", 1)
    await call(world, "test-embedded", step="remove")
    kinds = [(f["type"], f["data"].get("eventType") or f["data"]["hook"]) for f in sent]
    assert kinds == [
        ("actor-event", "item-remove"),
        ("hook-event", "deleteItem"),
        ("actor-event", "effect-remove"),
        ("hook-event", "deleteActiveEffect"),
    ]
    assert sent[0]["data"]["itemName"] == "Rope" and sent[2]["data"]["effectName"] == "Blessed"


async def test_scene_token_events(world: World) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    world.set_subscription("scene-events", 1)
    await call(world, "test-embedded", step="token")
    assert [f["data"]["eventType"] for f in sent] == ["token-update", "token-delete"]
    assert sent[0]["data"]["sceneId"] == "sceneTavern00001"
    assert sent[0]["data"]["changes"] == {"x": 600, "_id": "tokElara00000001"}
    assert sent[1]["data"]["tokenName"] == "Wolf"


@action("test-journal")
def _journal(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    step = params["step"]
    if step == "create":
        ctx.tx.put("JournalEntry", {"_id": "journal000000001", "name": "Log", "pages": []})
    elif step == "page":
        entry = ctx.tx.get("JournalEntry", "journal000000001")
        assert entry is not None
        entry["name"] = "Ship's log"
        entry["pages"].append({"_id": "page000000000001", "name": "Day 1"})
        ctx.tx.put("JournalEntry", entry)
    elif step == "item-effect":
        actor = ctx.tx.get("Actor", ACTOR)
        assert actor is not None
        actor["items"][0].setdefault("effects", []).append(
            {"_id": "itemEffect000001", "name": "Glow"}
        )
        ctx.tx.put("Actor", actor)
    else:
        ctx.tx.delete("JournalEntry", "journal000000001")
    return {"data": {}}


async def test_hooks_for_every_document_type(world: World) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    world.set_subscription("hooks", 1)
    for step in ("create", "page", "delete", "item-effect"):
        await call(world, "test-journal", step=step)
    hooks = [(f["data"]["hook"], f["data"]["args"][-2]["documentName"]) for f in sent]
    assert hooks == [
        ("createJournalEntry", "JournalEntry"),
        ("updateJournalEntry", "JournalEntry"),
        ("createJournalEntryPage", "JournalEntryPage"),
        ("deleteJournalEntry", "JournalEntry"),
        ("createActiveEffect", "ActiveEffect"),  # on an actor's item: its own document event
    ]
    update = sent[1]["data"]["args"]
    assert update[1] == {"name": "Ship's log", "_id": "journal000000001"}
    assert update[-1] == "gmUser0000000001"
    assert sent[2]["data"]["args"][0] == {"_id": "page000000000001", "name": "Day 1"}
