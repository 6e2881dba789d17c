"""Helpers for the world's in-process tests (the `world` fixture of tests/unit/world/conftest.py):
`call` sends the world one request frame as the relay would; `get_actor` and `chat` read what
it stored, `edited_actor` changes an actor directly; `item_of` is an actor's item by name;
`Clock` is a settable clock; `older_world_file` writes a store file as an older version left
it, for the migrations' tests."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from yoyo import get_backend, read_migrations

from vttrelay.world.runtime.world import World
from vttrelay.world.store.sqlite import MIGRATIONS_DIR


def older_world_file(path: Path, before: str, docs: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Write a world store file at `path` migrated only up to migration `before` (e.g. "0004"),
    holding `docs` (collection, document) as stored then: the next `WorldStore(path)` applies the
    later migrations, whose backfills a test then checks."""
    backend = get_backend(f"sqlite:///{path}")
    older = read_migrations(str(MIGRATIONS_DIR)).filter(lambda m: m.id < before)
    with backend.lock():
        backend.apply_migrations(backend.to_apply(older))
    backend.connection.close()
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO documents (collection, id, data) VALUES (?, ?, ?)",
            [(c, d["_id"], orjson.dumps(d)) for c, d in docs],
        )
    conn.close()


class Clock:
    """A settable clock in milliseconds."""

    def __init__(self, start: int = 1_782_956_929_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


async def call(world: World, action: str, **params: Any) -> dict[str, Any]:
    """Send one request frame as the relay would and return the reply frame."""
    frame = {"type": action, "requestId": f"{action}_1", "data": {}, **params}
    return await world.handle(frame)


def get_actor(world: World, actor_id: str) -> dict[str, Any]:
    """The stored actor (it must exist)."""
    with world.store.transaction() as tx:
        actor = tx.get("Actor", actor_id)
    assert actor is not None
    return actor


@contextmanager
def edited_actor(world: World, actor_id: str) -> Iterator[dict[str, Any]]:
    """The stored actor, to change in the `with` block; stored again when the block ends."""
    with world.store.transaction() as tx:
        actor = tx.get("Actor", actor_id)
        assert actor is not None
        yield actor
        tx.put("Actor", actor)


def chat(world: World) -> list[dict[str, Any]]:
    """Every chat message of the world."""
    with world.store.transaction() as tx:
        return tx.all("ChatMessage")


def item_of(actor: dict[str, Any], name: str) -> dict[str, Any]:
    """The actor's (first) item of this name."""
    return next(i for i in actor["items"] if i["name"] == name)
