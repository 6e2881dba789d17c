"""Pure rules of the entity routes and of /search: update merging, new documents, numeric
changes, moving items, kill, the filter syntax and the ranking."""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest

from vttrelay.world.rules import entities as rules
from vttrelay.world.rules import search


def ids() -> Any:
    numbers = count(1)
    return lambda: f"new{next(numbers):013d}"


def test_update_merges_like_the_tabletop() -> None:
    doc: dict[str, Any] = {
        "_id": "a",
        "name": "A",
        "system": {"hp": {"value": 5, "max": 10}, "list": [1, 2], "gone": 1},
        "items": [{"_id": "i1", "name": "Rope", "system": {"quantity": 1, "weight": 2}}],
        "effects": [],
    }
    rules.apply_document_update(
        doc,
        {
            "_id": "other",
            "system.hp.value": 7,
            "system": {"list": [3], "-=gone": None, "new": {"x": 1}},
            "items": [
                {"_id": "i1", "system.quantity": 4},
                {"name": "Torch"},
                {"_id": "keepMe0000000001", "name": "Chalk"},
            ],
            "flags.core.sheet": "x",
        },
        "Actor",
        ids(),
    )
    assert doc["_id"] == "a"
    assert doc["system"] == {"hp": {"value": 7, "max": 10}, "list": [3], "new": {"x": 1}}
    assert doc["items"][0] == {"_id": "i1", "name": "Rope", "system": {"quantity": 4, "weight": 2}}
    assert [(i["_id"], i["name"]) for i in doc["items"][1:]] == [
        ("new0000000000001", "Torch"),
        ("keepMe0000000001", "Chalk"),
    ]
    assert doc["flags"] == {"core": {"sheet": "x"}}


def test_new_documents_and_their_validation() -> None:
    assert rules.validate_new("Actor", {"type": "npc"}) == (
        "Actor validation errors:\n  name: may not be undefined"
    )
    assert rules.validate_new("Item", {"name": "x"}) == (
        "Item validation errors:\n  type: may not be undefined"
    )
    assert rules.validate_new("Item", {"name": "x", "type": "pony"}) == (
        '"pony" is not a valid type for the Item Document class'
    )
    assert rules.validate_new("Combat", {}) is None
    doc = rules.new_document(
        "Actor",
        {"name": "Hero", "type": "character", "system": {"currency": {"gp": 3}}},
        doc_id="hero000000000001",
        now_ms=5,
        user_id="u1",
        new_id=ids(),
    )
    assert doc["_id"] == "hero000000000001" and doc["ownership"] == {"default": 0, "u1": 3}
    assert doc["system"]["currency"]["gp"] == 3 and doc["system"]["attributes"]["hp"]["max"] == 10
    assert doc["prototypeToken"]["name"] == "Hero" and doc["_stats"]["createdTime"] == 5
    playlist = rules.new_document(
        "Playlist",
        {"name": "P", "sounds": [{"name": "S", "path": "a.ogg"}]},
        doc_id="p",
        now_ms=1,
        user_id=None,
        new_id=ids(),
    )
    assert playlist["sounds"][0]["name"] == "S" and "volume" in playlist["sounds"][0]


def test_change_number() -> None:
    doc: dict[str, Any] = {"a": {"n": 1, "s": "x", "b": True, "o": {}, "z": None}}
    assert rules.change_number(doc, "a.n", 2.5) == (1, 3.5)
    assert rules.change_number(doc, "a.n", 0.5) == (3.5, 4) and isinstance(doc["a"]["n"], int)
    for path, found in (("a.s", "string"), ("a.b", "boolean"), ("a.o", "object"),
                        ("a.z", "object"), ("a.missing", "undefined")):  # fmt: skip
        with pytest.raises(ValueError, match=f"Attribute {path} is not a number, found: {found}"):
            rules.change_number(doc, path, 1)


def test_items_between_actors() -> None:
    source: dict[str, Any] = {"items": [{"_id": "r", "name": "Rations", "system": {"quantity": 5}}]}
    target: dict[str, Any] = {"items": []}
    assert rules.held(source["items"][0]) == 5 and rules.held({"system": {}}) == 1
    rules.take_from_source(source, "r", 2)
    assert source["items"][0]["system"]["quantity"] == 3
    new_id, qty = rules.add_to_target(
        target, {"name": "Rations", "system": {"quantity": 5}}, 2, "n", 1
    )
    assert (new_id, qty, target["items"][0]["system"]["quantity"]) == ("n", 2, 2)
    assert rules.add_to_target(target, {"name": "Rations"}, 3, "m", 1) == ("n", 5)  # stacks
    assert rules.add_to_target(target, {"name": "rations"}, 1, "m", 1) == ("m", 1)  # exact name
    rules.take_from_source(source, "r", 3)
    assert source["items"] == []
    assert rules.remove_quantity(target, "n", 2) == 3
    assert rules.remove_quantity(target, "n", 3) == 0 and len(target["items"]) == 1
    assert rules.remove_quantity(target, "m", None) == 0 and target["items"] == []


def test_kill_rules() -> None:
    actor: dict[str, Any] = {
        "system": {"attributes": {"hp": {"value": 9, "max": 9}}},
        "effects": [],
    }
    assert rules.zero_hp(actor) and actor["system"]["attributes"]["hp"]["value"] == 0
    assert rules.zero_hp({"system": {"health": {"value": 3}}})
    assert not rules.zero_hp({"system": {}})
    dead = rules.defeated_status()
    assert dead is not None and dead.id == "dead"
    assert rules.toggle_status(actor, dead, effect_id="e1", now_ms=1)
    assert actor["effects"][0]["statuses"] == ["dead"] and actor["effects"][0]["name"] == "Dead"
    assert not rules.toggle_status(actor, dead, effect_id="e2", now_ms=1)  # a toggle
    assert actor["effects"] == []


def test_search_filter_syntax_and_matching() -> None:
    assert search.parse_filter("Actor") == {"documentType": "Actor"}
    assert search.parse_filter("documentType:Item, subType:weapon,bad,:x,y:") == {
        "documentType": "Item",
        "subType": "weapon",
    }
    assert search.parse_filter("folder:Folder.abc:ignored") == {"folder": "Folder.abc"}
    entry = {"documentType": "Item", "subType": "weapon", "folder": "abc", "package": None,
             "resultType": "WorldEntity", "name": "Dagger"}  # fmt: skip
    assert search.matches_filters(entry, {"documentType": "item", "name": "DAGGER"})
    assert search.matches_filters(entry, {"folder": "Folder.abc"})
    assert not search.matches_filters(entry, {"package": "dnd5e.items"})
    assert not search.matches_filters(entry, {"unknownKey": "x"})
    pack = {**entry, "package": "dnd5e.items", "resultType": "CompendiumEntity"}
    assert search.matches_filters(pack, {"package": "Compendium.dnd5e.items"})
    assert search.matches_filters(pack, {"resultType": "compendiumentity"})


def test_search_ranking_and_formatted_match() -> None:
    name = "Potion of Healing"
    cases = [("potion of healing", 100), ("pot", 80), ("of heal", 60), ("heal", 60),
             ("pohe", 20), ("xyz", 0)]  # fmt: skip
    for query, score in cases:
        assert search.score_match(name, query) == score, query
    # a word start is always a substring too, so (as in the module) it ranks as one
    assert search.score_match("Greater Healing", "heal") == search.CONTAINS
    assert search.formatted_match(name, "POTION OF HEALING", 100) == f"<strong>{name}</strong>"
    assert search.formatted_match(name, "pot", 80) == "<strong>Pot</strong>ion of Healing"
    assert search.formatted_match(name, "heal", 60) == "Potion of <strong>Heal</strong>ing"
    assert search.formatted_match(name, "pohe", 20) == name
    assert search.subsequence_pattern("a%_") == "%a%\\%%\\_%"
