"""`server.backup` on data dirs built in place: what a world-only backup lists and leaves out
(the connection being written, a file deleted between the listing and its copy), and the
refusals of a data dir with nothing to back up and of a named store that is not there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vttrelay.server import backup as backups
from vttrelay.world.link.connection import Connection, save_connection
from vttrelay.world.runtime.world import world_db_path
from vttrelay.world.store.sqlite import WorldStore


def _world_only(data: Path) -> None:
    """A data dir as `world pair` leaves it: the world's store and connection, and two files."""
    WorldStore(world_db_path(data)).close()
    save_connection(data, Connection("ws://relay:3010/relay", "token", "client"))
    (data / "world" / "connection.tmp").write_text("{}")  # a pair or run writing it right now
    notes = data / "world" / "files" / "data" / "notes"
    notes.mkdir(parents=True)
    (notes / "kept.txt").write_text("kept")
    (notes / "gone.txt").write_text("deleted while the backup runs")


def test_a_world_only_backup_lists_the_world_and_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    _world_only(data)
    listed = backups._files

    def deleted_after_listing(root: Path) -> Iterator[Path]:
        paths = list(listed(root))
        (data / "world" / "files" / "data" / "notes" / "gone.txt").unlink()
        return iter(paths)

    monkeypatch.setattr(backups, "_files", deleted_after_listing)
    copied = backups.backup(data, tmp_path / "b")
    assert [(c.path, c.kind) for c in copied] == [
        ("world/connection.json", "file"),
        ("world/world.db", "sqlite"),
        ("world/files/data/notes/kept.txt", "file"),
    ]
    assert not backups.holds_relay(copied)

    files, moved = backups.restore(tmp_path / "b", tmp_path / "restored")
    assert (files, moved) == (copied, None)
    assert (tmp_path / "restored" / "world" / "connection.json").read_bytes() == (
        data / "world" / "connection.json"
    ).read_bytes()


def test_nothing_to_back_up_and_a_named_store_that_is_missing_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    with pytest.raises(backups.BackupError) as refused:
        backups.backup(empty, tmp_path / "b")
    assert str(refused.value) == (
        f"{empty} holds neither a relay store (relay.db) nor an embedded world "
        "(world/world.db): nothing to back up"
    )
    _world_only(tmp_path / "data")
    missing = tmp_path / "elsewhere" / "relay.db"
    with pytest.raises(backups.BackupError) as refused:
        backups.backup(tmp_path / "data", tmp_path / "b", str(missing))
    assert str(refused.value) == f"{missing} does not exist: no relay store to back up"
    assert not (tmp_path / "b").exists()
