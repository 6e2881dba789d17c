"""Pure structure rules: `types` parsing, folder trees and deletion order."""

from __future__ import annotations

from typing import Any

from vttrelay.world.rules import structure as rules


def _folder(fid: str, name: str, parent: str | None = None) -> dict[str, Any]:
    return rules.new_folder(fid, name, "Actor", parent, 0)


def test_parse_types() -> None:
    assert rules.parse_types(None) == rules.FOLDER_TYPES
    assert rules.parse_types("") == rules.FOLDER_TYPES
    assert rules.parse_types("Actor, Item") == ("Actor", "Item")
    assert rules.parse_types('["Actor"]') == ('["Actor"]',)  # the module: matches nothing
    assert rules.parse_types(["Actor"]) == ("Actor",)  # a real list over /ws/api


def test_subtree_depth_same_names_and_entities() -> None:
    folders = [
        _folder("a", "A"),
        _folder("b", "B", "a"),
        _folder("c", "B", "a"),  # same name as its sibling: overwrites it, as in the module
        _folder("d", "D", "c"),
    ]
    held = {"a": [{"id": "x"}]}

    def contents(folder: dict[str, Any]) -> list[dict[str, Any]]:
        return held.get(folder["_id"], [])

    tree = rules.subtree(folders, None, contents, 5)
    assert list(tree) == ["A"]
    assert tree["A"]["entities"] == [{"id": "x"}]
    assert tree["A"]["B"]["id"] == "c" and tree["A"]["B"]["D"]["uuid"] == "Folder.d"
    assert "B" not in rules.subtree(folders, None, contents, 1)["A"]
    assert [f["_id"] for f in rules.descendants(folders, "a")] == ["b", "d", "c"]


def test_folder_of_reads_ids_and_uuids() -> None:
    assert rules.folder_of({"folder": "abc"}) == "abc"
    assert rules.folder_of({"folder": "Folder.abc"}) == "abc"
    assert rules.folder_of({"folder": None}) is None and rules.folder_of({}) is None
