"""Permission levels and the three gates, with their exact error texts."""

from __future__ import annotations

import pytest

from vttrelay.world.errors import ActionError
from vttrelay.world.rules.permissions import (
    LIMITED,
    NONE,
    OWNER,
    assert_can_view,
    assert_gm,
    assert_owner,
    permission_level,
)
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.world import World

GM = {"_id": "gmUser0000000001", "name": "Gamemaster", "role": 4}
ARIA = {"_id": "playerAria000001", "name": "Aria", "role": 1}
BEN = {"_id": "playerBen0000001", "name": "Ben", "role": 1}
ACTOR = {
    "_id": "elaraWizard00001",
    "name": "Elara Quill",
    "ownership": {"default": 0, "playerAria000001": 3, "playerBen0000001": 1},
}
NPC = {"_id": "goblinNpc0000001", "name": "Goblin", "ownership": {"default": 0}}


def test_levels() -> None:
    assert permission_level(None, NPC) == OWNER
    assert permission_level(GM, NPC) == OWNER
    assert permission_level({**ARIA, "role": 3}, NPC) == OWNER  # assistant GM
    assert permission_level(ARIA, ACTOR) == OWNER
    assert permission_level(BEN, ACTOR) == LIMITED
    assert permission_level(BEN, NPC) == NONE
    assert permission_level(BEN, {"ownership": {"default": 2}}) == 2


def _ctx(world: World, user: dict | None) -> ActionContext:
    return world.context(None, user)


def test_gates(world: World) -> None:
    for user in (None, GM, ARIA):
        assert_can_view(_ctx(world, user), ACTOR)
        assert_owner(_ctx(world, user), ACTOR, "perform a short rest on")
    assert_can_view(_ctx(world, BEN), ACTOR)  # LIMITED passes the view gate
    with pytest.raises(ActionError) as err:
        assert_owner(_ctx(world, BEN), ACTOR, "perform a short rest on")
    assert err.value.message == (
        "User 'Ben' does not have permission to perform a short rest on 'Elara Quill'"
    )
    with pytest.raises(ActionError) as err:
        assert_can_view(_ctx(world, BEN), NPC)
    assert err.value.message == "User 'Ben' does not have permission to view actor 'Goblin'"
    assert_gm(_ctx(world, None), "select tokens")
    assert_gm(_ctx(world, GM), "select tokens")
    with pytest.raises(ActionError) as err:
        assert_gm(_ctx(world, ARIA), "select tokens")
    assert err.value.message == "User 'Aria' must be a GM to select tokens"


def test_views_and_write_gate_on_resolved_documents(world: World) -> None:
    from vttrelay.world.model import documents
    from vttrelay.world.rules.permissions import assert_can_write, filter_views, view

    with world.store.transaction() as tx:
        tx.put(
            "JournalEntry",
            {
                "_id": "journal000000001",
                "name": "Secrets",
                "ownership": {"default": 0, "playerAria000001": 2, "playerBen0000001": 1},
                "pages": [{"_id": "page000000000001", "name": "Page one"}],
            },
        )
        page = documents.resolve_uuid(
            tx, "JournalEntry.journal000000001.JournalEntryPage.page000000000001"
        )
        entry = documents.resolve_uuid(tx, "JournalEntry.journal000000001")
        npc = documents.resolve_uuid(tx, "Actor.goblinNpc0000001")
        assert page and entry and npc
        assert view(ARIA, page) == page.doc  # the page inherits the entry's OBSERVER
        assert view(BEN, page) == {
            "uuid": page.uuid,
            "name": "Page one",
            "type": "JournalEntryPage",
            "img": None,
        }
        assert view(BEN, npc) is None and view(GM, npc) == npc.doc and view(None, npc) == npc.doc
        assert view(ARIA, entry, {"x": 1}) == {"x": 1}
        assert [v["name"] for v in filter_views(BEN, [npc, entry])] == ["Secrets"]
        ctx = world.context(tx, ARIA)
        with pytest.raises(ActionError) as err:
            assert_can_write(ctx, page, "update")
        assert err.value.message == "User 'Aria' does not have permission to update 'Page one'"
        page.doc.pop("name")
        with pytest.raises(ActionError) as err:
            assert_can_write(ctx, page, "delete")
        assert err.value.message.endswith(f"to delete '{page.uuid}'")
        assert_can_write(world.context(tx, GM), page, "delete")
        assert_can_write(world.context(tx, None), page, "delete")
