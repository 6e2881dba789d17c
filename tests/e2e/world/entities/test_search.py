"""GET /search (endpoints-beyond-seed §2) through a real relay and the embedded world: reply and
entry keys, filters, ranking, compendium entries, the userId and owner filters, the index kept
current by every write, and a generated world of 10,000 documents answered correctly."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from vttrelay.world.actions.table import standard_table
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.rules.search import score_match
from vttrelay.world.runtime.world import World

ENTRY_KEYS = [
    "documentType", "folder", "id", "name", "package", "packageName", "subType", "uuid", "icon",
    "journalLink", "tagline", "formattedMatch", "resultType",
]  # fmt: skip
MINIFIED_KEYS = ["uuid", "id", "name", "img", "documentType"]
ACTORS = [
    "Bandit", "Brann Stoneheart", "Corvin Ash", "Elara Quill", "Goblin", "Pip Tealeaf", "Wolf",
]  # fmt: skip


async def test_search_filters_and_shapes(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/search", filter="documentType:Actor", excludeCompendiums=True)
    assert status == 200 and list(body) == ["type", "requestId", "filter", "results"]
    assert body["type"] == "search-result" and body["filter"] == "documentType:Actor"
    names = [r["name"] for r in body["results"]]
    assert names[: len(ACTORS)] == ACTORS  # by name; the demo's second scene adds no actors
    elara = next(r for r in body["results"] if r["name"] == "Elara Quill")
    assert list(elara) == ENTRY_KEYS
    assert elara == {
        "documentType": "Actor",
        "folder": None,
        "id": "elaraWizard00001",
        "name": "Elara Quill",
        "package": None,
        "packageName": None,
        "subType": "character",
        "uuid": "Actor.elaraWizard00001",
        "icon": elara["icon"],
        "journalLink": "@UUID[Actor.elaraWizard00001]{Elara Quill}",
        "tagline": "Actors Directory",
        "formattedMatch": "Elara Quill",
        "resultType": "WorldEntity",
    }
    _, body = await api("GET", "/search", filter="Actor", excludeCompendiums=True)
    assert [r["name"] for r in body["results"]] == names  # a bare type is documentType
    _, body = await api("GET", "/search", filter="documentType:actor,subType:NPC")
    assert {r["name"] for r in body["results"] if r["resultType"] == "WorldEntity"} == {
        "Bandit",
        "Goblin",
        "Wolf",
    }
    assert all(r["subType"] == "npc" for r in body["results"])

    # ranking: exact, prefix, substring, word start, characters in order; then by name
    _, body = await api("GET", "/search", query="goblin")
    assert list(body) == ["type", "requestId", "query", "results"] and body["query"] == "goblin"
    first = body["results"][:2]
    assert {(r["name"], r["resultType"]) for r in first} == {
        ("Goblin", "WorldEntity"),
        ("Goblin", "CompendiumEntity"),
    }
    assert all(r["formattedMatch"] == "<strong>Goblin</strong>" for r in first)
    pack_goblin = next(r for r in first if r["resultType"] == "CompendiumEntity")
    assert pack_goblin["package"] == "dnd5e.monsters"
    assert pack_goblin["packageName"] == pack_goblin["tagline"] == "Monsters (SRD)"
    assert pack_goblin["uuid"].startswith("Compendium.dnd5e.monsters.Actor.")
    _, body = await api("GET", "/search", query="ela", excludeCompendiums=True)
    assert body["results"][0]["formattedMatch"] == "<strong>Ela</strong>ra Quill"
    _, body = await api("GET", "/search", query="quill", filter="documentType:Actor")
    assert [r["formattedMatch"] for r in body["results"]] == ["Elara <strong>Quill</strong>"]
    _, body = await api("GET", "/search", query="eqi", filter="Actor", excludeCompendiums=True)
    assert [r["name"] for r in body["results"]] == ["Elara Quill"]  # e..q..i in order
    assert body["results"][0]["formattedMatch"] == "Elara Quill"
    _, body = await api("GET", "/search", query="dagger", filter="package:dnd5e.items")
    assert [(r["name"], r["resultType"]) for r in body["results"]] == [
        ("Dagger", "CompendiumEntity")
    ]
    _, body = await api("GET", "/search", query="dagger", filter="resultType:WorldEntity")
    assert body["results"] == []  # daggers live inside actors, not in the world's item list
    _, body = await api("GET", "/search", filter="nonsense:1")
    assert body["results"] == []
    _, body = await api("GET", "/search", query="a", limit=3)
    assert len(body["results"]) == 3
    _, body = await api("GET", "/search", query="elara", minified=True)
    assert list(body["results"][0]) == MINIFIED_KEYS

    status, body = await api("GET", "/search")
    assert (status, body) == (400, {"error": "'query' or 'filter' is required"})
    status, body = await api("GET", "/search", query="x", userId="nobody")
    assert status == 400 and body["error"] == "User not found: nobody"

    # userId: OBSERVER+ full, LIMITED minified, NONE dropped; ownedByUserId: only what they own
    _, gm = await api("GET", "/search", filter="Actor", excludeCompendiums=True)
    _, ben = await api("GET", "/search", filter="Actor", excludeCompendiums=True, userId="Ben")
    assert len(ben["results"]) < len(gm["results"])
    by_name = {r["name"]: r for r in ben["results"]}
    assert set(by_name) == {"Brann Stoneheart", "Corvin Ash", "Elara Quill", "Pip Tealeaf"}
    assert list(by_name["Corvin Ash"]) == ENTRY_KEYS  # Ben owns Corvin
    assert list(by_name["Elara Quill"]) == MINIFIED_KEYS  # LIMITED
    _, owned = await api(
        "GET", "/search", filter="Actor", excludeCompendiums=True, ownedByUserId="aria"
    )
    assert [r["name"] for r in owned["results"]] == ["Brann Stoneheart", "Elara Quill"]


async def test_the_index_follows_every_write(world: EmbeddedWorld, api: Any) -> None:
    _, body = await api(
        "POST", "/create", {"entityType": "JournalEntry", "data": {"name": "Zq Log"}}
    )
    uuid = body["uuid"]
    _, found = await api("GET", "/search", query="zq log")
    assert [r["uuid"] for r in found["results"]] == [uuid]
    await api("PUT", "/update", {"data": {"name": "Xv Diary"}}, uuid=uuid)
    _, found = await api("GET", "/search", query="zq log")
    assert found["results"] == []
    _, found = await api("GET", "/search", query="xv diary")
    assert [r["name"] for r in found["results"]] == ["Xv Diary"]
    await api("DELETE", "/delete", uuid=uuid)
    _, found = await api("GET", "/search", query="xv diary")
    assert found["results"] == []


WORDS_A = ["Ancient", "Burning", "Cursed", "Dread", "Elven", "Frozen", "Gilded", "Hollow"]
WORDS_B = ["Sword", "Shield", "Tome", "Lantern", "Crown", "Ring", "Cloak", "Mirror"]
KINDS = [("Item", "loot"), ("Actor", "npc"), ("JournalEntry", "")]


def generated_world(data_dir: Path, count: int) -> list[dict[str, Any]]:
    """The demo world plus `count` generated documents, written through the store in one
    transaction. Returns the generated documents."""
    rng = random.Random(10_000)
    docs = []
    world = World.open(data_dir, actions=standard_table())
    with world.store.transaction() as tx:
        for n in range(count):
            kind, sub_type = KINDS[n % len(KINDS)]
            doc = {
                "_id": f"gen{n:013d}",
                "name": f"{rng.choice(WORDS_A)} {rng.choice(WORDS_B)} {n}",
                "type": sub_type,
                "img": "icons/svg/item-bag.svg",
                "folder": None,
                "ownership": {"default": 0},
            }
            if not sub_type:
                del doc["type"]
            tx.put(kind, doc)
            docs.append({**doc, "documentType": kind})
    world.close()
    return docs


def expected(docs: list[dict[str, Any]], query: str, kind: str | None, limit: int) -> list[str]:
    """The uuids the module's ranking gives, computed by brute force."""
    scored = []
    for doc in docs:
        if kind and doc["documentType"] != kind:
            continue
        score = score_match(doc["name"], query)
        if score:
            scored.append(
                (-score, doc["name"].lower(), doc["name"], f"{doc['documentType']}.{doc['_id']}")
            )
    return [s[3] for s in sorted(scored)[:limit]]


async def test_search_on_a_10000_document_world(
    relay: Any, start_world: Any, api: Any, tmp_path: Path
) -> None:
    began = time.perf_counter()
    docs = generated_world(tmp_path / "big", 10_000)
    built = time.perf_counter() - began
    await start_world(relay, data_dir=tmp_path / "big")
    timings = []
    for query, kind in (
        ("frozen crown", None),  # substring: the trigram index
        ("mirror 99", "Item"),
        ("ring 12", None),
        ("fcr", "Actor"),  # characters in order only: the LIKE scan
        ("zz", None),  # nothing
    ):
        params: dict[str, Any] = {"query": query, "excludeCompendiums": True, "limit": 200}
        if kind:
            params["filter"] = f"documentType:{kind}"
        started = time.perf_counter()
        status, body = await api("GET", "/search", **params)
        timings.append((query, (time.perf_counter() - started) * 1000))
        assert status == 200, body
        # (no demo-world name matches these queries, so the whole answer is generated documents)
        assert [r["uuid"] for r in body["results"]] == expected(docs, query, kind, 200), query
    started = time.perf_counter()
    status, body = await api("GET", "/search", filter="documentType:Item,subType:loot", limit=500)
    timings.append(("filter only", (time.perf_counter() - started) * 1000))
    assert len(body["results"]) == 500
    names = [r["name"] for r in body["results"]]
    assert names == sorted(names, key=lambda n: (n.lower(), n))
    print(f"\n10,000-document world built in {built:.2f} s; /search round trips (ms): {timings}")
