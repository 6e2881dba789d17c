"""How large the world lets a document grow: at most `MAX_EMBEDDED` entries in any embedded
collection (a scene's walls, lights or tokens, an actor's items, a playlist's sounds) and at most
`MAX_DOCUMENT_BYTES` of JSON per document.

The world checks every document a transaction wrote before it commits (`World`), whichever
action or script wrote it, so no route can grow a list past its bound. A document already past a
bound (written before these bounds existed) may still change as long as the change does not make
it larger there: a scene holding 20,000 walls can be repaired by deleting walls, and its tokens
moved meanwhile, but it takes no new wall. Pure functions over plain data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

MAX_EMBEDDED: Final = 10_000  # entries of one embedded collection of a document
MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024  # JSON bytes of one stored document
# A document of fewer bytes can't hold MAX_EMBEDDED + 1 entries (each takes at least "{}," ),
# so it needs no parsing to be checked.
MIN_BYTES_PAST_EMBEDDED: Final = 3 * (MAX_EMBEDDED + 1)


def _count(doc: Mapping[str, Any] | None, key: str) -> int:
    entries = doc.get(key) if doc is not None else None
    return len(entries) if isinstance(entries, list) else 0


def embedded_problem(
    document_name: str,
    embedded_keys: tuple[str, ...],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any],
) -> str | None:
    """The error for a change that leaves one of the document's embedded collections
    (`embedded_keys`, e.g. a Scene's `walls`) past MAX_EMBEDDED entries and larger than it was
    before (`before` is None for a new document), or None."""
    for key in embedded_keys:
        count = _count(after, key)
        if count > MAX_EMBEDDED and count > _count(before, key):
            return (
                f"{document_name} validation errors:\n  {key}: at most {MAX_EMBEDDED} "
                f"documents (this change would make {count})"
            )
    return None


def size_problem(document_name: str, before_bytes: int, after_bytes: int) -> str | None:
    """The error for a change that leaves the document past MAX_DOCUMENT_BYTES of JSON and
    larger than it was (`before_bytes` 0 for a new document), or None."""
    if after_bytes > MAX_DOCUMENT_BYTES and after_bytes > before_bytes:
        return (
            f"{document_name} is too large: at most {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB "
            f"of data per document (this change would make {after_bytes} bytes)"
        )
    return None
