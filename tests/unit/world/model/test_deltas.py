"""Unlinked tokens' synthetic actors: the base actor plus the token's delta, and the delta that
a changed synthetic actor writes back (rules/deltas.py)."""

from __future__ import annotations

import copy
from typing import Any

from vttrelay.world.model.deltas import delta_between, synthetic_actor


def _base() -> dict[str, Any]:
    return {
        "_id": "goblin",
        "name": "Goblin",
        "type": "npc",
        "img": "goblin.webp",
        "system": {"attributes": {"hp": {"value": 7, "max": 7}, "ac": {"flat": 15}}},
        "items": [{"_id": "sword", "name": "Scimitar"}, {"_id": "bow", "name": "Shortbow"}],
        "effects": [],
        "flags": {},
        "_stats": {"modifiedTime": 1},
    }


def test_an_empty_delta_gives_the_base_and_leaves_it_untouched() -> None:
    base = _base()
    actor = synthetic_actor(base, {})
    assert actor == base and actor is not base
    actor["system"]["attributes"]["hp"]["value"] = 0
    assert base["system"]["attributes"]["hp"]["value"] == 7
    assert synthetic_actor(base, None) == base


def test_a_delta_merges_system_and_replaces_embedded_documents_by_id() -> None:
    base = _base()
    delta = {
        "name": "Goblin Boss",
        "system": {"attributes": {"hp": {"value": 2}}},
        "items": [
            {"_id": "sword", "name": "Notched Scimitar"},
            {"_id": "bow", "_tombstone": True},
            {"_id": "dagger", "name": "Dagger"},
        ],
        "effects": [{"_id": "dead", "statuses": ["dead"]}],
    }
    actor = synthetic_actor(base, delta)
    assert actor["name"] == "Goblin Boss"
    assert actor["system"]["attributes"] == {"hp": {"value": 2, "max": 7}, "ac": {"flat": 15}}
    assert [i["name"] for i in actor["items"]] == ["Notched Scimitar", "Dagger"]
    assert actor["effects"] == [{"_id": "dead", "statuses": ["dead"]}]
    assert base == _base()


def test_the_delta_holds_only_what_differs_and_rebuilds_the_actor() -> None:
    base = _base()
    actor = synthetic_actor(base, {})
    actor["system"]["attributes"]["hp"]["value"] = 0
    actor["items"] = [i for i in actor["items"] if i["_id"] != "bow"]
    actor["items"][0]["name"] = "Broken Scimitar"
    actor["effects"].append({"_id": "prone", "statuses": ["prone"]})
    actor["_stats"] = {"modifiedTime": 2}  # bookkeeping is not part of a delta
    delta = delta_between(base, actor)
    assert delta == {
        "system": {"attributes": {"hp": {"value": 0}}},
        "items": [
            {"_id": "sword", "name": "Broken Scimitar"},
            {"_id": "bow", "_tombstone": True},
        ],
        "effects": [{"_id": "prone", "statuses": ["prone"]}],
    }
    rebuilt = synthetic_actor(base, delta)
    assert {k: v for k, v in rebuilt.items() if k != "_stats"} == {
        k: v for k, v in actor.items() if k != "_stats"
    }


def test_writing_again_keeps_earlier_changes_and_drops_undone_ones() -> None:
    base = _base()
    first = synthetic_actor(base, {})
    first["system"]["attributes"]["hp"]["value"] = 3
    first["effects"].append({"_id": "prone", "statuses": ["prone"]})
    delta = delta_between(base, first)
    second = synthetic_actor(base, delta)
    second["effects"] = []  # the status ends; the damage stays
    second["system"]["attributes"].pop("ac")  # a removed key is recorded as `-=key`
    delta = delta_between(base, second)
    assert delta == {"system": {"attributes": {"hp": {"value": 3}, "-=ac": None}}}
    assert synthetic_actor(base, delta)["system"]["attributes"] == {"hp": {"value": 3, "max": 7}}


def test_the_base_changing_shows_through_where_the_delta_says_nothing() -> None:
    base = _base()
    delta = {"system": {"attributes": {"hp": {"value": 1}}}}
    changed = copy.deepcopy(base)
    changed["system"]["attributes"]["ac"]["flat"] = 17
    changed["system"]["attributes"]["hp"]["max"] = 9
    actor = synthetic_actor(changed, delta)
    assert actor["system"]["attributes"] == {"hp": {"value": 1, "max": 9}, "ac": {"flat": 17}}
