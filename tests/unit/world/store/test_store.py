"""The world store: transactions are all-or-nothing, reads are private copies, data survives,
and no update is lost to another connection on the same file."""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.support.world import older_world_file
from yoyo import get_backend, read_migrations

from vttrelay.world.model.documents import find_by_name
from vttrelay.world.store.sqlite import WorldStore


def test_put_get_all_and_insertion_order(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")
    with store.transaction() as tx:
        for i in range(3):
            tx.put("Actor", {"_id": f"a{i}", "name": f"n{i}"})
        assert [d["_id"] for d in tx.all("Actor")] == ["a0", "a1", "a2"]
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a0", "name": "renamed"})  # replace keeps its place
        tx.put("Actor", {"_id": "a3", "name": "n3"})
        tx.delete("Actor", "a1")
        assert [d["name"] for d in tx.all("Actor")] == ["renamed", "n2", "n3"]
        assert tx.get("Actor", "a1") is None
    with store.transaction() as tx:
        assert [d["name"] for d in tx.all("Actor")] == ["renamed", "n2", "n3"]
        assert tx.all("User") == []
    store.close()


def test_exception_rolls_everything_back(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a", "hp": 10})
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.put("Actor", {"_id": "a", "hp": 3})
        tx.put("Actor", {"_id": "b", "hp": 1})
        assert tx.get("Actor", "a") == {"_id": "a", "hp": 3}  # own writes are visible
        raise RuntimeError("interrupted")
    with store.transaction() as tx:
        assert tx.get("Actor", "a") == {"_id": "a", "hp": 10}
        assert tx.get("Actor", "b") is None
    store.close()


def test_reads_are_private_copies(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")
    with store.transaction() as tx:
        doc: dict[str, Any] = {"_id": "a", "system": {"hp": 1}}
        tx.put("Actor", doc)
        doc["system"]["hp"] = 99  # changing the caller's dict after put changes nothing
        got = tx.get("Actor", "a")
        assert got == {"_id": "a", "system": {"hp": 1}}
        got["system"]["hp"] = 5
        assert tx.get("Actor", "a") == {"_id": "a", "system": {"hp": 1}}
    store.close()


def test_nothing_reaches_sqlite_before_commit(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    store = WorldStore(path)
    other = sqlite3.connect(path)
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a"})
        assert other.execute("SELECT count(*) FROM documents").fetchone() == (0,)
    assert other.execute("SELECT count(*) FROM documents").fetchone() == (1,)
    assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()
    store.close()


def test_survives_reopen_and_changes_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    store = WorldStore(path)
    with store.transaction() as tx:
        tx.put("ChatMessage", {"_id": "m", "content": "hi"})
        tx.put("Actor", {"_id": "a", "v": 1})
    store.close()
    store = WorldStore(path)  # migrations are idempotent
    with store.transaction() as tx:
        assert tx.get("ChatMessage", "m") == {"_id": "m", "content": "hi"}
        tx.put("Actor", {"_id": "a", "v": 2})
        tx.put("Actor", {"_id": "n", "v": 0})
        tx.put("ChatMessage", {"_id": "m", "content": "hi"})  # unchanged: not reported
        tx.delete("ChatMessage", "zzz")  # never existed: not reported
        changes = [(c.collection, c.doc_id, c.before, c.after) for c in tx.changes()]
    assert changes == [
        ("Actor", "a", {"_id": "a", "v": 1}, {"_id": "a", "v": 2}),
        ("Actor", "n", None, {"_id": "n", "v": 0}),
    ]
    store.close()


def test_bad_documents_and_nested_transactions_are_refused(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")
    with store.transaction() as tx:
        with pytest.raises(ValueError):
            tx.put("Actor", {"name": "no id"})
        with pytest.raises(RuntimeError), store.transaction():
            pass
    with store.transaction() as tx:
        assert tx.all("Actor") == []
    store.close()


def test_no_lost_update_against_another_process_on_the_same_file(tmp_path: Path) -> None:
    """A transaction holds the write lock from its first read to its commit: another
    connection (a `vttrelay world` command, say) waits and then sees the committed value."""
    path = tmp_path / "w.db"
    store = WorldStore(path)
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a", "gp": 0})
    other = WorldStore(path)
    started = threading.Event()

    def add_one_elsewhere() -> None:
        started.set()
        with other.transaction() as tx2:
            doc = tx2.get("Actor", "a")
            assert doc is not None
            doc["gp"] += 1
            tx2.put("Actor", doc)

    with store.transaction() as tx:
        doc = tx.get("Actor", "a")
        assert doc is not None
        worker = threading.Thread(target=add_one_elsewhere)
        worker.start()
        started.wait(5)
        time.sleep(0.2)  # the other transaction is now waiting for the lock
        doc["gp"] += 1
        tx.put("Actor", doc)
    worker.join(10)
    assert not worker.is_alive()
    with store.transaction() as tx:
        assert tx.get("Actor", "a") == {"_id": "a", "gp": 2}
    other.close()
    store.close()


def test_a_busy_database_is_an_error_that_leaves_no_transaction_open(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    store = WorldStore(path)
    other = WorldStore(path, busy_timeout_ms=50)
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a"})
        with pytest.raises(sqlite3.OperationalError, match="locked"), other.transaction():
            pass
    with other.transaction() as tx2:  # usable again once the lock is free
        assert tx2.get("Actor", "a") == {"_id": "a"}
        tx2.put("Actor", {"_id": "b"})
    with store.transaction() as tx:
        assert [d["_id"] for d in tx.all("Actor")] == ["a", "b"]
    other.close()
    store.close()


def test_search_index_follows_committed_writes_only(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")

    def names(**query: Any) -> list[str]:
        with store.transaction() as tx:
            return [e.name for e in tx.search_index(**query)]

    with store.transaction() as tx:
        tx.put("Item", {"_id": "i1", "name": "Longsword", "type": "weapon", "img": "s.svg"})
        tx.put("Item", {"_id": "i2", "name": "Long Rope", "type": "loot"})
        tx.put("User", {"_id": "u1", "name": "Longfellow"})  # not a searchable collection
    assert names(match="long") == ["Long Rope", "Longsword"]
    assert names(match="long", sub_type="WEAPON") == ["Longsword"]
    assert names(like="%g%r%p%") == ["Long Rope"]
    with store.transaction() as tx:
        entry = tx.search_index(match="sword")[0]
        assert (entry.collection, entry.id, entry.sub_type, entry.img) == (
            "Item",
            "i1",
            "weapon",
            "s.svg",
        )
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.put("Item", {"_id": "i1", "name": "Dagger"})
        tx.delete("Item", "i2")
        raise RuntimeError("roll back")
    assert names(match="long") == ["Long Rope", "Longsword"]  # nothing of the failed call
    with store.transaction() as tx:
        tx.put("Item", {"_id": "i1", "name": "Dagger"})
        tx.delete("Item", "i2")
    assert names(match="long") == [] and names(match="dag") == ["Dagger"]
    store.close()


def test_search_index_migration_indexes_an_existing_world(tmp_path: Path) -> None:
    """A world file made before the index (only migration 0001) gets its documents indexed."""

    from vttrelay.world.store.sqlite import MIGRATIONS_DIR

    path = tmp_path / "old.db"
    backend = get_backend(f"sqlite:///{path}")
    migrations = read_migrations(str(MIGRATIONS_DIR))
    first = migrations.filter(lambda m: m.id == "0001_documents")
    with backend.lock():
        backend.apply_migrations(backend.to_apply(first))
    backend.connection.close()
    conn = sqlite3.connect(path)
    rows = [
        ("Actor", "a1", {"_id": "a1", "name": "Old Hero", "type": "character", "img": "h.svg"}),
        ("Item", "i1", {"_id": "i1", "name": "Old Sword", "folder": "f1"}),
        ("User", "u1", {"_id": "u1", "name": "Old User"}),
    ]
    for collection, doc_id, doc in rows:
        conn.execute(
            "INSERT INTO documents (collection, id, data) VALUES (?, ?, ?)",
            (collection, doc_id, orjson.dumps(doc)),
        )
    conn.commit()
    conn.close()
    store = WorldStore(path)  # applies 0002
    with store.transaction() as tx:
        found = {
            (e.collection, e.name, e.sub_type, e.img, e.folder)
            for e in tx.search_index(match="old")
        }
    assert found == {
        ("Actor", "Old Hero", "character", "h.svg", None),
        ("Item", "Old Sword", "", "", "f1"),
    }
    store.close()


def test_ids_are_those_of_all_without_parsing(tmp_path: Path) -> None:
    store = WorldStore(tmp_path / "w.db")
    with store.transaction() as tx:
        for i in range(4):
            tx.put("Actor", {"_id": f"a{i}"})
    with store.transaction() as tx:
        tx.put("Actor", {"_id": "a0", "name": "replaced"})
        tx.delete("Actor", "a2")
        tx.put("Actor", {"_id": "b"})
        tx.put("Actor", {"_id": "c"})
        tx.delete("Actor", "c")
        assert tx.ids("Actor") == [d["_id"] for d in tx.all("Actor")] == ["a0", "a1", "a3", "b"]
        assert tx.ids("Item") == []
    store.close()


def test_active_documents_are_those_of_all_that_are_active(tmp_path: Path) -> None:
    """`Tx.active` lists what filtering `all` by a truthy `active` lists, in the same order, over
    random committed, replaced, deleted and pending documents (and rolled back transactions)."""
    store = WorldStore(tmp_path / "w.db")
    rng = random.Random(3)
    values: list[Any] = [True, False, None, 0, 1, "yes", "", [], {"a": 1}]
    for _round in range(30):
        with contextlib.suppress(RuntimeError), store.transaction() as tx:
            for _ in range(rng.randrange(1, 6)):
                collection = rng.choice(("Scene", "Combat"))
                doc_id = f"d{rng.randrange(12)}"
                if rng.random() < 0.25:
                    tx.delete(collection, doc_id)
                else:
                    doc: dict[str, Any] = {"_id": doc_id, "n": rng.random()}
                    if rng.random() < 0.8:
                        doc["active"] = rng.choice(values)
                    tx.put(collection, doc)
                for name in ("Scene", "Combat"):
                    assert tx.active(name) == [d for d in tx.all(name) if d.get("active")]
            if rng.random() < 0.2:
                raise RuntimeError("rolled back")
    with pytest.raises(ValueError), store.transaction() as tx:
        tx.active("Actor")
    store.close()


def test_migration_0004_flags_the_active_documents_of_an_older_file(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    docs: list[tuple[str, dict[str, Any]]] = [
        ("Scene", {"_id": "s1", "active": False}),
        ("Scene", {"_id": "s2", "active": True}),
        ("Combat", {"_id": "c1", "active": 1}),
        ("Combat", {"_id": "c2"}),
        ("Actor", {"_id": "a1", "active": True}),
    ]
    older_world_file(path, "0004", docs)
    store = WorldStore(path)  # applies 0004
    with store.transaction() as tx:
        assert [d["_id"] for d in tx.active("Scene")] == ["s2"]
        assert [d["_id"] for d in tx.active("Combat")] == ["c1"]
    store.close()


def test_named_documents_are_those_find_by_name_finds(tmp_path: Path) -> None:
    """`Tx.named` lists the documents `documents.find_by_name` would match over `all`, in the
    same order, over random committed, replaced, deleted, pending and rolled-back documents
    with names that only case folding equates (ß / SS), and names that are not strings."""
    store = WorldStore(tmp_path / "w.db")
    rng = random.Random(4)
    names: list[Any] = ["Aria", "aria", "ARIA", "Straße", "STRASSE", "strasse", None, 5, "5", ""]
    wanted = ["aria", "Strasse", "none", "5", "", "Ben"]
    for _round in range(30):
        with contextlib.suppress(RuntimeError), store.transaction() as tx:
            for _ in range(rng.randrange(1, 6)):
                collection = rng.choice(("User", "Actor", "Playlist"))
                doc_id = f"d{rng.randrange(12)}"
                if rng.random() < 0.25:
                    tx.delete(collection, doc_id)
                else:
                    doc: dict[str, Any] = {"_id": doc_id}
                    if rng.random() < 0.9:
                        doc["name"] = rng.choice(names)
                    tx.put(collection, doc)
                for collection in ("User", "Actor", "Playlist"):
                    for name in wanted:
                        expected = [d for d in tx.all(collection) if find_by_name([d], name)]
                        assert tx.named(collection, name) == expected
            if rng.random() < 0.2:
                raise RuntimeError("rolled back")
    with pytest.raises(ValueError), store.transaction() as tx:
        tx.named("Scene", "x")
    store.close()


def test_migration_0005_indexes_the_names_of_an_older_file(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    docs: list[tuple[str, dict[str, Any]]] = [
        ("Actor", {"_id": "a1", "name": "Straße"}),
        ("Actor", {"_id": "a2", "name": "Other"}),
        ("User", {"_id": "u1", "name": "GM"}),
        ("Item", {"_id": "i1", "name": "Strasse"}),
    ]
    older_world_file(path, "0005", docs)
    store = WorldStore(path)  # applies 0005
    with store.transaction() as tx:
        assert [d["_id"] for d in tx.named("Actor", "STRASSE")] == ["a1"]
        assert [d["_id"] for d in tx.named("User", "gm")] == ["u1"]
    store.close()
