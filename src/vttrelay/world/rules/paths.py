"""Dotted-path access to document data (`system.attributes.hp.value`), as the tabletop's
update objects use them. Pure helpers shared by the rules."""

from __future__ import annotations

from typing import Any


def get_path(obj: Any, path: str, default: Any = None) -> Any:
    """The value at a dotted path, or `default` when any step is missing."""
    current = obj
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return default
    return current


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted path, creating intermediate objects."""
    parts = path.split(".")
    current = obj
    for part in parts[:-1]:
        nxt = current.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            current[part] = nxt
        current = nxt
    current[parts[-1]] = value


def apply_update(doc: dict[str, Any], update: dict[str, Any]) -> None:
    """Apply an update object of dotted paths (the `_id` key, if any, only names the doc)."""
    for path, value in update.items():
        if path != "_id":
            set_path(doc, path, value)


def as_number(value: Any, default: float = 0) -> float:
    """A number from source data that may hold numbers, numeric strings, "" or null."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else default
        except ValueError:
            return default
    return default


def as_int(value: Any, default: int = 0) -> int:
    """An integer from source data (floors numeric values)."""
    number = as_number(value, default)
    return int(number // 1)
