"""GET /search (action `search`, endpoints-beyond-seed §2): the world's documents by name, from
the store's FTS5 index (`Tx.search_index`), with the module's filter syntax, ranking and reply.

Compendium pack documents (`world/store/packs.py`, static data) are matched in memory and ranked
with the world's, unless `excludeCompendiums`; everyone may see them, only GMs own them.

A query is answered from the trigram index first (every name holding the query: exact, prefix,
substring and word matches); only when those do not fill `limit` are names holding the query's
characters in order (the lowest rank) looked up as well. The cut to `limit` comes before the
`userId` and `ownedByUserId` filters, as in the module.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.model import documents
from vttrelay.world.rules import search as rules
from vttrelay.world.rules.permissions import LIMITED, OBSERVER, OWNER, permission_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action
from vttrelay.world.store import packs
from vttrelay.world.store.sqlite import IndexEntry

DEFAULT_LIMIT: Final = 200
MAX_LIMIT: Final = 500
PUSHED_DOWN: Final = frozenset(("documentType", "subType"))  # filters the index query applies


def _limit(value: Any) -> int:
    """`min(parseInt(limit) or 200, 500)`; zero or negative means 200."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return DEFAULT_LIMIT
    return min(number, MAX_LIMIT) if number > 0 else DEFAULT_LIMIT


def _entry(row: IndexEntry, query: str | None, score: int) -> dict[str, Any]:
    uuid = f"{row.collection}.{row.id}"
    return {
        "documentType": row.collection,
        "folder": row.folder,
        "id": row.id,
        "name": row.name,
        "package": None,
        "packageName": None,
        "subType": row.sub_type,
        "uuid": uuid,
        "icon": row.img,
        "journalLink": rules.journal_link(uuid, row.name),
        "tagline": rules.TAGLINES.get(row.collection, ""),
        "formattedMatch": rules.formatted_match(row.name, query, score),
        "resultType": "WorldEntity",
    }


def _minified(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "uuid": entry["uuid"],
        "id": entry["id"],
        "name": entry["name"],
        "img": entry["icon"],
        "documentType": entry["documentType"],
    }


def _world_entries(
    ctx: ActionContext, query: str | None, filters: dict[str, str], limit: int
) -> list[tuple[int, dict[str, Any]]]:
    """(score, entry) of the world's documents from the index; with a query only matches,
    without one the first `limit` by name."""
    if filters.get("resultType", "WorldEntity").lower() != "worldentity" or "package" in filters:
        return []
    narrow: dict[str, Any] = {}
    if "documentType" in filters:
        match = [t for t in rules.TAGLINES if t.lower() == filters["documentType"].lower()]
        if not match:
            return []
        narrow["collection"] = match[0]
    if "subType" in filters:
        narrow["sub_type"] = filters["subType"]

    def keep(rows: list[IndexEntry], seen: set[str]) -> list[tuple[int, dict[str, Any]]]:
        out = []
        for row in rows:
            score = rules.score_match(row.name, query) if query else 0
            if (query and not score) or row.id in seen:
                continue
            entry = _entry(row, query, score)
            if rules.matches_filters(entry, filters):
                seen.add(row.id)
                out.append((score, entry))
        return out

    tx, seen = ctx.tx, set[str]()
    if not query:
        rows = tx.search_index(**narrow)
        if set(filters) <= PUSHED_DOWN:  # every filter is already applied by the index query
            rows = rows[:limit]
        return keep(rows, seen)[:limit]
    q = query.lower()
    if len(q) >= 3:
        found = keep(tx.search_index(match=q, **narrow), seen)
    else:
        found = keep(tx.search_index(like=f"%{rules.like_escape(q)}%", **narrow), seen)
    if len(found) < limit:  # then the names that only hold the query's characters in order
        found += keep(tx.search_index(like=rules.subsequence_pattern(q), **narrow), seen)
    return found


def _pack_entries(query: str | None, filters: dict[str, str]) -> list[tuple[int, dict[str, Any]]]:
    """(score, entry) of every compendium pack document that matches."""
    out = []
    for pack in packs.packs().values():
        for item in pack.index():
            name = str(item.get("name") or "")
            score = rules.score_match(name, query) if query else 0
            if query and not score:
                continue
            entry = {
                "documentType": pack.document_name,
                "folder": None,
                "id": item["_id"],
                "name": name,
                "package": pack.id,
                "packageName": pack.label,
                "subType": item.get("type") or "",
                "uuid": item["uuid"],
                "icon": item.get("img") or "",
                "journalLink": rules.journal_link(item["uuid"], name),
                "tagline": pack.label,
                "formattedMatch": rules.formatted_match(name, query, score),
                "resultType": "CompendiumEntity",
            }
            if rules.matches_filters(entry, filters):
                out.append((score, entry))
    return out


def ranked_entries(
    ctx: ActionContext,
    query: str | None,
    filters: dict[str, str],
    limit: int,
    *,
    compendiums: bool = True,
) -> list[dict[str, Any]]:
    """The best `limit` entries (world documents, then compendium documents unless excluded)
    for a query and filters: by score, then name (no permissions applied)."""
    found = _world_entries(ctx, query, filters, limit)
    if compendiums:
        found += _pack_entries(query, filters)
    found.sort(key=lambda se: (-se[0], se[1]["name"].lower(), se[1]["name"]))
    return [entry for _, entry in found[:limit]]


def _error_shape(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"query": frame.get("query")}, {"results": []}


@action("search", error_shape=_error_shape)
def search(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search the world's documents by name and filters."""
    query = params.get("query") if isinstance(params.get("query"), str) else None
    raw_filter = params.get("filter")
    filters = rules.parse_filter(raw_filter)
    entries = ranked_entries(
        ctx,
        query or None,
        filters,
        _limit(params.get("limit")),
        compendiums=params.get("excludeCompendiums") is not True,
    )
    minified = params.get("minified") is True
    owner_ref = params.get("ownedByUserId")
    owner = documents.find_user(ctx.tx, str(owner_ref)) if owner_ref else None
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in entries:
        if entry["uuid"] in seen:
            continue
        seen.add(entry["uuid"])
        doc = None
        in_pack = entry.get("resultType") == "CompendiumEntity"
        if (ctx.user is not None or owner is not None) and not in_pack:
            doc = ctx.tx.get(entry["documentType"], entry["id"])
        if ctx.user is not None and doc is not None:
            level = permission_level(ctx.user, doc)
            if level < LIMITED:
                continue
            if level < OBSERVER:
                entry = _minified(entry)
        if owner is not None and (
            (in_pack and not documents.is_gm(owner))
            or (not in_pack and (doc is None or permission_level(owner, doc) < OWNER))
        ):
            continue
        results.append(_minified(entry) if minified and "journalLink" in entry else entry)
    reply: dict[str, Any] = {}
    if "query" in params:
        reply["query"] = params["query"]
    if raw_filter is not None:
        reply["filter"] = raw_filter
    reply["results"] = results
    return reply
