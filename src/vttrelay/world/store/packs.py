"""Compendium packs: read-only collections of documents shipped with the package as data files
(`content/packs/*.json`), the same for every embedded world, as a system's packs are in the
tabletop.

A pack file is `{"id": "dnd5e.items", "label": "Items (SRD)", "type": "Item", "system",
"license", "documents": [...]}`; its documents have the shape of world documents (an Actor
embeds its items). Packs are loaded once per process. A pack document's uuid is
`Compendium.<pack id>.<Type>.<id>` (the tabletop's form); `Compendium.<pack id>.<id>` (the
older form some clients build) names the same document. Documents handed out are copies.
The store's transactions resolve such uuids with `resolve` (`Tx.compendium`, which
`documents.resolve_uuid` asks for every `Compendium.` uuid).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import orjson

from vttrelay.world.model import documents
from vttrelay.world.model.collections import COMPENDIUM
from vttrelay.world.model.documents import Documents, Resolved

PACKS_DIR: Final = Path(__file__).parents[1] / "content" / "packs"


@dataclass(frozen=True)
class Pack:
    """One compendium pack. `document_name` is the type of its documents (`Item`, `Actor`)."""

    id: str
    label: str
    document_name: str
    system: str
    documents: tuple[dict[str, Any], ...]

    @property
    def uuid(self) -> str:
        return f"{COMPENDIUM}.{self.id}"

    def doc_uuid(self, doc_id: str) -> str:
        return f"{COMPENDIUM}.{self.id}.{self.document_name}.{doc_id}"

    def get(self, doc_id: str) -> dict[str, Any] | None:
        """A copy of the document with this id, or None."""
        for doc in self.documents:
            if doc.get("_id") == doc_id:
                return copy.deepcopy(doc)
        return None

    def index(self) -> list[dict[str, Any]]:
        """The pack's index, as the tabletop keeps it: `{_id, name, type, img, uuid}` per
        document (`type` is the document's own type, e.g. `weapon` or `npc`)."""
        return [
            {
                "_id": doc["_id"],
                "name": doc.get("name", ""),
                "type": doc.get("type", self.document_name),
                "img": doc.get("img"),
                "uuid": self.doc_uuid(doc["_id"]),
            }
            for doc in self.documents
        ]


def load_pack(path: Path) -> Pack:
    """Read one pack file; ValueError if it is not a well-formed pack."""
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: a pack file holds an object")
    docs = data.get("documents")
    if not isinstance(docs, list) or not all(isinstance(d, dict) and d.get("_id") for d in docs):
        raise ValueError(f"{path.name}: every pack document needs an _id")
    for key in ("id", "label", "type"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"{path.name}: '{key}' must be a non-empty string")
    return Pack(
        id=data["id"],
        label=data["label"],
        document_name=data["type"],
        system=str(data.get("system", "")),
        documents=tuple(docs),
    )


@lru_cache(maxsize=1)
def packs() -> dict[str, Pack]:
    """Every pack of the package, by id, in file-name order."""
    out: dict[str, Pack] = {}
    for path in sorted(PACKS_DIR.glob("*.json")):
        pack = load_pack(path)
        out[pack.id] = pack
    return out


def split_uuid(uuid: str) -> tuple[Pack, str, list[tuple[str, str]]] | None:
    """`Compendium.<scope>.<name>.<Type>.<id>[.<Type>.<id>...]` (or `...<name>.<id>`) ->
    (pack, document id, embedded steps); None when it names no pack document."""
    parts = uuid.split(".")
    if len(parts) < 4 or parts[0] != COMPENDIUM or not all(parts):
        return None
    pack = packs().get(f"{parts[1]}.{parts[2]}")
    if pack is None:
        return None
    rest = parts[3:]
    if len(rest) == 1:
        return pack, rest[0], []
    if len(rest) % 2 or rest[0] != pack.document_name:
        return None
    steps = list(zip(rest[2::2], rest[3::2], strict=True))
    return pack, rest[1], steps


# Compendium uuids -------------------------------------------------------------------------------

# Who may see a pack's documents: every player observes them (the tabletop's default pack
# ownership), GMs own them; pack documents are read-only whatever the level.
PACK_OWNERSHIP: Final = {"default": 2}


def resolve(tx: Documents, uuid: str) -> Resolved | None:
    """A compendium uuid (with any embedded steps: `...Actor.<id>.Item.<id>`) to a read-only
    copy of its document (`Resolved.pack` set); None when it names nothing."""
    found = split_uuid(uuid)
    if found is None:
        return None
    pack, doc_id, steps = found
    doc = pack.get(doc_id)
    if doc is None:
        return None
    doc["ownership"] = dict(PACK_OWNERSHIP)
    name = pack.document_name
    return documents.resolve_within(tx, Resolved(name, uuid, doc, name, doc, pack=pack.id), steps)
