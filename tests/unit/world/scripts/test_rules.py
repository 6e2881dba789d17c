"""Pure helpers of the execute-js action: the tabletop's update semantics, the notice, limits."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.actions.scripts import (
    apply_update,
    expand_update,
    limits_from,
    merge_into,
    modifies_module_settings,
    notice_content,
)
from vttrelay.world.errors import HostError
from vttrelay.world.scripts.sandbox import DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_LIMIT


def test_expand_update_turns_dotted_keys_into_objects() -> None:
    assert expand_update({"system.hp.value": 3, "system.hp.max": 9, "name": "A"}) == {
        "system": {"hp": {"value": 3, "max": 9}},
        "name": "A",
    }
    assert expand_update({"system": {"a.b": 1}, "system.c": 2}) == {
        "system": {"a": {"b": 1}, "c": 2}
    }
    with pytest.raises(HostError):
        expand_update({"": 1})


def test_merge_into_merges_objects_replaces_values_and_deletes() -> None:
    doc: dict[str, Any] = {"system": {"hp": {"value": 1, "max": 9}, "tags": [1]}, "flags": {"x": 1}}
    merge_into(doc, {"system": {"hp": {"value": 5}, "tags": [2, 3]}, "flags": {"-=x": None}})
    assert doc == {"system": {"hp": {"value": 5, "max": 9}, "tags": [2, 3]}, "flags": {}}


def test_apply_update_copies_values() -> None:
    doc: dict[str, Any] = {"_id": "a", "name": "A", "system": {}}
    changes: dict[str, Any] = {"system.list": [1, 2], "_id": "a"}
    apply_update(doc, changes)
    changes["system.list"].append(3)
    assert doc == {"_id": "a", "name": "A", "system": {"list": [1, 2]}}


@pytest.mark.parametrize(
    "changes",
    [
        {"_id": "b"},
        {"type": "npc"},
        {"items": []},
        {"-=effects": None},
        {"_stats": {}},
        {"name": 3},
    ],
)
def test_apply_update_refuses_fixed_keys(changes: dict[str, Any]) -> None:
    doc = {"_id": "a", "name": "A", "type": "character", "items": [], "effects": []}
    with pytest.raises(HostError):
        apply_update(doc, changes)
    assert doc == {"_id": "a", "name": "A", "type": "character", "items": [], "effects": []}


def test_notice_content() -> None:
    assert notice_content("return 1") == "<b>⚠ REST API execute-js:</b> <code>return 1</code>"
    assert notice_content("a<b>c") == "<b>⚠ REST API execute-js:</b> <code>a&lt;b>c</code>"
    exact = "x" * 100
    assert notice_content(exact).endswith(f"<code>{exact}</code>")
    assert notice_content(exact + "y").endswith(f"<code>{exact}</code>…")


def test_module_settings_pattern_needs_both_parts() -> None:
    assert modifies_module_settings('game.settings.set("foundry-rest-api", "x", 1)')
    assert not modifies_module_settings('game.settings.set("core", "rollMode", "x")')
    assert not modifies_module_settings('game.settings.get("foundry-rest-api", "wsRelayUrl")')


def test_limits_from_settings() -> None:
    default = limits_from(None, None)
    assert (default.time_limit, default.memory_limit) == (DEFAULT_TIME_LIMIT, DEFAULT_MEMORY_LIMIT)
    custom = limits_from(2, 16)
    assert (custom.time_limit, custom.memory_limit) == (2.0, 16 * 1024 * 1024)
    clamped = limits_from(10_000, 0)
    assert (clamped.time_limit, clamped.memory_limit) == (15.0, 1024 * 1024)
    assert limits_from(True, "64").time_limit == DEFAULT_TIME_LIMIT
