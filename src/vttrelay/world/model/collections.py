"""The world's top-level collections, the uuid prefix of compendium documents, and the key of
name lookups."""

from __future__ import annotations

from typing import Any, Final

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
# The first segment of a compendium document's uuid (`Compendium.<pack>.<Type>.<id>`).
COMPENDIUM: Final = "Compendium"


def name_key(doc: dict[str, Any]) -> str:
    """What a case-insensitive name lookup compares (`documents.find_by_name`)."""
    return str(doc.get("name", "")).casefold()
