"""The action table is a value: `@action` only marks a handler, a table is built from the
handlers or modules it is given, a name in it twice is refused, and importing a module that
marks handlers registers nothing anywhere."""

from __future__ import annotations

import types
from typing import Any

import pytest

from vttrelay.world.actions import chat
from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.table import ActionSpec, ActionTable, action, spec_of


@action("test-one", error_extra={"success": False})
def _one(ctx: Any, frame: dict[str, Any]) -> dict[str, Any]:
    return {"data": 1}


@action("test-two")
async def _two(ctx: Any, frame: dict[str, Any]) -> dict[str, Any]:
    return {"data": 2}


def test_marking_registers_nothing() -> None:
    spec = spec_of(_one)
    assert spec is not None and spec.name == "test-one" and spec.handler is _one
    assert spec.error_extra == {"success": False} and not spec.is_async
    assert spec_of(_two) is not None and spec_of(_two).is_async  # type: ignore[union-attr]
    assert "test-one" not in standard_table() and "test-two" not in standard_table()


def test_a_table_of_handlers_and_specs() -> None:
    other = ActionSpec("test-three", _one)
    table = ActionTable.of(_one, _two, other)
    assert list(table) == ["test-one", "test-two", "test-three"] and len(table) == 3
    assert table.get("test-three") is other and table.get("nope") is None
    assert table.get(None) is None
    with pytest.raises(TypeError):
        table.specs["x"] = other  # type: ignore[index]


def test_a_name_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'test-one' is in the table twice"):
        ActionTable.of(_one, ActionSpec("test-one", _two))
    with pytest.raises(ValueError, match="twice"):
        ActionTable.of(_one).extended(ActionTable.of(ActionSpec("test-one", _two)))
    with pytest.raises(ValueError, match="not an @action handler"):
        ActionTable.of(len)


def test_a_table_of_modules_takes_their_own_handlers_only() -> None:
    module = types.ModuleType("vttrelay_test_actions")
    module.own = action("test-own")(_named("vttrelay_test_actions"))  # type: ignore[attr-defined]
    module.imported = _one  # type: ignore[attr-defined]  # defined elsewhere: not taken
    assert list(ActionTable.from_modules(module)) == ["test-own"]
    table = ActionTable.from_modules(chat)
    assert "chat-send" in table and all(
        table.specs[name].handler.__module__ == chat.__name__ for name in table
    )


def test_the_standard_table_is_built_anew_and_extended_without_changing_it() -> None:
    first, second = standard_table(), standard_table()
    assert first is not second and list(first) == list(second)
    assert {"chat-send", "get-actor-details", "scene-screenshot", "execute-js"} <= set(first)
    bigger = first.extended(ActionTable.of(_one))
    assert "test-one" in bigger and "test-one" not in first


def _named(module: str) -> Any:
    def handler(ctx: Any, frame: dict[str, Any]) -> dict[str, Any]:
        return {}

    handler.__module__ = module
    return handler


def test_the_standard_table_has_every_handler_of_the_actions_package() -> None:
    """A new action module must be named in `actions.table` (nothing registers itself)."""
    import importlib
    import pkgutil

    import vttrelay.world.actions as package

    marked = {
        spec.name
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
        for value in vars(importlib.import_module(info.name)).values()
        if (spec := spec_of(value)) is not None
    }
    assert marked and marked == set(standard_table())
