"""`World.snapshot` / `World.restore` (the pytest plugin's reset): documents, files, selection,
recent rolls, and a seeded world's dice and clock all go back to the snapshot; a seeded world's
scripts draw the same `Math.random` numbers."""

from __future__ import annotations

from pathlib import Path

from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World


async def test_a_restore_puts_back_documents_files_rolls_and_the_dice(tmp_path: Path) -> None:
    world = World.open(tmp_path / "data", actions=standard_table(), seed=3)
    try:
        assert world.files is not None
        world.snapshot(tmp_path / "snap")
        first = await call(world, "roll", formula="2d20", createChatMessage=True)
        made = await call(world, "create", entityType="Actor", data={"name": "Gone", "type": "npc"})
        uuid = made["uuid"]
        world.files.put("data", "notes", "gone.txt", b"gone", overwrite=False)
        world.selection = ["Scene.x.Token.y"]
        assert world.recent_rolls

        world.restore(tmp_path / "snap")
        missing = await call(world, "get", uuid=uuid)
        assert "error" in missing  # the actor made after the snapshot is gone
        assert not (world.files.root / "data" / "notes").exists()
        assert world.selection == [] and world.recent_rolls == []
        again = await call(world, "roll", formula="2d20", createChatMessage=True)
        assert again == first  # the same dice, ids and timestamp as right after the snapshot
    finally:
        world.close()


async def test_a_seeded_worlds_scripts_draw_the_same_random_numbers(tmp_path: Path) -> None:
    """Math.random in execute-js (and script macros) is seeded from the world's generator."""
    script = {"type": "execute-js", "requestId": "x1", "script": "return [Math.random(), 7]"}
    draws = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        world = World.open(tmp_path / name, actions=standard_table(), seed=seed)
        try:
            with world.store.transaction() as tx:
                documents.set_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, True)
            reply = await world.handle(dict(script))
            assert reply.get("success") is True, reply
            draws.append(reply["result"][0])
        finally:
            world.close()
    assert draws[0] == draws[1] != draws[2]
    assert all(0 <= d < 1 for d in draws)
