"""Seed a fresh world from the content files in the package: `content/world.json` (users, scenes,
settings, world/system/module metadata), every `content/actors/*.json` (one actor, or a list
of actors, per file, with their items and effects), `content/macros.json` (the demo macros) and
`content/playlists.json` (playlists with their sounds, completed from
`content/document-defaults.json`).

Documents get Foundry-like defaults where the content leaves them out (`_stats`, `flags`,
`folder`, `sort`, `ownership`, and the 11 keys of every embedded item).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import orjson

from vttrelay.world.model import defaults, documents
from vttrelay.world.model.collections import COLLECTIONS, INTERNAL_COLLECTIONS
from vttrelay.world.model.ids import new_id
from vttrelay.world.store.sqlite import Tx, WorldStore

CONTENT_DIR: Final = Path(__file__).parents[1] / "content"
# The keys of every embedded item once `prepare_actor` has filled its defaults.
ITEM_KEYS: Final = (
    "_id",
    "_stats",
    "effects",
    "flags",
    "folder",
    "img",
    "name",
    "ownership",
    "sort",
    "system",
    "type",
)


def load_world_content(content_dir: Path = CONTENT_DIR) -> dict[str, Any]:
    data = orjson.loads((content_dir / "world.json").read_bytes())
    if not isinstance(data, dict):
        raise ValueError("world.json must hold an object")
    return data


def load_actor_content(content_dir: Path = CONTENT_DIR) -> list[dict[str, Any]]:
    """Every actor of `content/actors/*.json`, files in name order."""
    actors: list[dict[str, Any]] = []
    for path in sorted((content_dir / "actors").glob("*.json")):
        data = orjson.loads(path.read_bytes())
        for actor in data if isinstance(data, list) else [data]:
            if not isinstance(actor, dict) or not actor.get("_id"):
                raise ValueError(f"{path.name}: every actor needs an _id")
            actors.append(actor)
    return actors


def load_list(path: Path) -> list[dict[str, Any]]:
    """A content file holding a list of documents, each with its `_id`; [] if there is none."""
    if not path.exists():
        return []
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, list) or not all(isinstance(d, dict) and d.get("_id") for d in data):
        raise ValueError(f"{path.name}: a list of documents, each with an _id")
    return data


def _base(doc: dict[str, Any], now: int, sort: int) -> dict[str, Any]:
    doc.setdefault("_stats", documents.new_stats(now))
    doc.setdefault("flags", {})
    doc.setdefault("folder", None)
    doc.setdefault("sort", sort)
    return doc


def prepare_actor(actor: dict[str, Any], now: int) -> dict[str, Any]:
    """Fill the defaults of an actor and its embedded items and effects."""
    _base(actor, now, 0)
    actor.setdefault("ownership", {"default": 0})
    actor.setdefault("effects", [])
    actor.setdefault("items", [])
    for n, item in enumerate(actor["items"]):
        _base(item, now, (n + 1) * 100000)
        item.setdefault("effects", [])
        item.setdefault("img", "icons/svg/item-bag.svg")
        item.setdefault("ownership", {"default": 0})
        item.setdefault("system", {})
    for effect in actor["effects"]:
        effect.setdefault("_stats", documents.new_stats(now))
    return actor


def seed_into(
    tx: Tx,
    content_dir: Path = CONTENT_DIR,
    now: int | None = None,
    new_id: Callable[[], str] = new_id,
) -> None:
    """Write the demo world's documents into an open transaction (created at `now`, default
    the present; the ids the content lacks from `new_id`)."""
    now = int(time.time() * 1000) if now is None else now
    content = load_world_content(content_dir)
    meta = {k: content[k] for k in ("world", "system", "foundryVersion", "modules") if k in content}
    documents.set_setting(tx, documents.SETTING_WORLD, meta, new_id)
    for key, value in (content.get("settings") or {}).items():
        documents.set_setting(tx, key, value, new_id)
    for user in content.get("users") or ():
        tx.put("User", _base(dict(user), now, 0))
    for scene in content.get("scenes") or ():
        tx.put("Scene", _base(dict(scene), now, 0))
    for actor in load_actor_content(content_dir):
        tx.put("Actor", prepare_actor(actor, now))
    for macro in load_list(content_dir / "macros.json"):
        tx.put("Macro", _base(macro, now, 0))
    for playlist in load_list(content_dir / "playlists.json"):
        playlist = defaults.with_defaults("Playlist", playlist, new_id)
        tx.put("Playlist", _base(playlist, now, 0))


def seed(
    store: WorldStore,
    content_dir: Path = CONTENT_DIR,
    now: int | None = None,
    new_id: Callable[[], str] = new_id,
) -> None:
    """Seed the demo world into a store (in one transaction; `now` and `new_id` as
    `seed_into`)."""
    with store.transaction() as tx:
        seed_into(tx, content_dir, now, new_id)


def reset(store: WorldStore, content_dir: Path = CONTENT_DIR) -> None:
    """Forget every document and seed the demo world again, in one transaction."""
    with store.transaction() as tx:
        for collection in (*COLLECTIONS, *INTERNAL_COLLECTIONS):
            for doc in tx.all(collection):
                tx.delete(collection, doc["_id"])
        seed_into(tx, content_dir)
