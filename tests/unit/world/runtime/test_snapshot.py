"""`World.snapshot` / `World.restore` (the pytest plugin's reset): documents, files, selection,
recent rolls, and a seeded world's dice and clock all go back to the snapshot."""

from __future__ import annotations

from pathlib import Path

from tests.support.world import call

from vttrelay.world.actions.table import standard_table
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
