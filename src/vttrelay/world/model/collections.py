"""The world's top-level collections, and what the model asks of whatever holds the documents.

`Documents` is the reading and writing the model's functions (`documents.py`) and the rules
need: the store's open transaction (`store.Tx`) is one; the model never imports the store.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

# Every top-level document type the world holds (the tabletop's world collections).
COLLECTIONS: Final = (
    "User",
    "Actor",
    "Scene",
    "ChatMessage",
    "Combat",
    "Setting",
    "Item",
    "JournalEntry",
    "Macro",
    "RollTable",
    "Playlist",
    "Folder",
    "Cards",
)
# The world's own records that are no tabletop document: never listed, searched or resolved by
# uuid (a user's password hash, which the tabletop keeps on its server, out of clients' reach).
INTERNAL_COLLECTIONS: Final = ("UserCredential",)


def name_key(doc: dict[str, Any]) -> str:
    """What a case-insensitive name lookup compares (`documents.find_by_name`)."""
    return str(doc.get("name", "")).casefold()


class Documents(Protocol):
    """Documents by collection: private copies out, whole documents in."""

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None: ...

    def all(self, collection: str) -> list[dict[str, Any]]: ...

    def active(self, collection: str) -> list[dict[str, Any]]: ...

    def named(self, collection: str, name: str) -> list[dict[str, Any]]: ...

    def put(self, collection: str, doc: dict[str, Any]) -> None: ...

    def delete(self, collection: str, doc_id: str) -> None: ...
