"""Pure rules of GET /search (endpoints-beyond-seed §2): the filter syntax, matching an entry
against the filters, the ranking of a name against the query, and `formattedMatch`."""

from __future__ import annotations

from typing import Any, Final

# Ranks of a name against the query (the module's scoreMatch).
EXACT, PREFIX, CONTAINS, WORD_PREFIX, SUBSEQUENCE = 100, 80, 60, 40, 20

TAGLINES: Final = {
    "Actor": "Actors Directory",
    "Item": "Items Directory",
    "Scene": "Scenes Directory",
    "JournalEntry": "Journal Directory",
    "RollTable": "Roll Tables Directory",
    "Cards": "Cards Directory",
    "Macro": "Macros Directory",
    "Playlist": "Playlists Directory",
}


def parse_filter(text: object) -> dict[str, str]:
    """`Actor` -> {documentType: Actor}; `a:b,c:d` -> {a: b, c: d}. Only the text up to a
    second `:` of a part is kept; parts without `:` or with an empty side are ignored."""
    if not isinstance(text, str) or not text:
        return {}
    if ":" not in text:
        return {"documentType": text}
    out: dict[str, str] = {}
    for part in text.split(","):
        pieces = part.split(":")
        if len(pieces) < 2:
            continue
        key, value = pieces[0].strip(), pieces[1].strip()
        if key and value:
            out[key] = value
    return out


def _eq(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def matches_filters(entry: dict[str, Any], filters: dict[str, str]) -> bool:
    """True if the search entry matches every filter (the module's matchesAllFilters)."""
    for key, value in filters.items():
        if key == "resultType":
            if not _eq(str(entry.get("resultType", "")), value):
                return False
        elif key == "package":
            pack = entry.get("package")
            if not isinstance(pack, str) or not (
                _eq(pack, value) or _eq(f"Compendium.{pack}", value)
            ):
                return False
        elif key == "folder":
            folder = entry.get("folder")
            if not isinstance(folder, str) or not (
                folder == value or f"Folder.{folder}" == value or value == f"Folder.{folder}"
            ):
                return False
        else:
            if key not in entry or entry[key] is None:
                return False
            actual = entry[key]
            if isinstance(actual, str) and not _eq(actual, value):
                return False
    return True


def _is_subsequence(query: str, name: str) -> bool:
    it = iter(name)
    return all(ch in it for ch in query)


def score_match(name: str, query: str) -> int:
    """100 exact, 80 prefix, 60 substring, 40 a word starts with it, 20 all characters in
    order, 0 no match (case-insensitive)."""
    n, q = name.lower(), query.lower()
    if n == q:
        return EXACT
    if n.startswith(q):
        return PREFIX
    if q in n:
        return CONTAINS
    if any(word.startswith(q) for word in n.split()):
        return WORD_PREFIX
    if _is_subsequence(q, n):
        return SUBSEQUENCE
    return 0


def formatted_match(name: str, query: str | None, score: int) -> str:
    """The name with the matched part in `<strong>` (exact, prefix, substring); else plain."""
    if not query:
        return name
    if score == EXACT:
        return f"<strong>{name}</strong>"
    if score == PREFIX:
        return f"<strong>{name[: len(query)]}</strong>{name[len(query) :]}"
    if score == CONTAINS:
        start = name.lower().find(query.lower())
        end = start + len(query)
        return f"{name[:start]}<strong>{name[start:end]}</strong>{name[end:]}"
    return name


def like_escape(text: str) -> str:
    """`text` with LIKE's wildcards escaped (escape character `\\`)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def subsequence_pattern(query: str) -> str:
    """A LIKE pattern matching names that hold the query's characters in order."""
    return "%" + "%".join(like_escape(ch) for ch in query.lower()) + "%"


def journal_link(uuid: str, name: str) -> str:
    return f"@UUID[{uuid}]{{{name}}}"
