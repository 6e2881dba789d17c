"""The action table: which handler answers which action, and the shape of its error replies.

A handler gets the action context and the whole request frame and returns the reply body without
`type` and `requestId` (the dispatcher prepends those two). `@action("<name>", ...)` only marks
a handler with its `ActionSpec`; nothing is registered by importing a module. An `ActionTable` is
a value built when a world starts (`actions.table.standard_table()`), from the modules it names;
a test builds its own (`ActionTable.of(handler, ...)`, `table.extended(other)`).

Error replies are `{type, requestId, **before, **extra, **error_extra, "error": text,
**error_tail, **after}`: `error_tail` holds the keys the module puts after `error` (such as
`"data": null`), `error_shape(frame) -> (before, after)` the keys of an action whose error
replies echo request values, `extra` those an `ActionError` carries (a macro's `uuid`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

from vttrelay import protocol

ErrorShape = Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]
SPEC_ATTRIBUTE = "__world_action__"  # where `@action` puts a handler's spec


def reply_head(frame: dict[str, Any]) -> dict[str, Any]:
    """`{type: <action>-result, requestId}`: the first keys of every reply."""
    name = frame.get("type")
    return {
        "type": protocol.result_type(str(name)),
        "requestId": frame.get("requestId"),
    }


@dataclass(frozen=True)
class ActionSpec:
    name: str
    handler: Callable[..., Any]
    error_extra: dict[str, Any] = field(default_factory=dict)
    is_async: bool = False
    error_tail: dict[str, Any] = field(default_factory=dict)
    resolve_user: bool = True  # False: the action ignores `userId` (no "User not found")
    error_shape: ErrorShape | None = None

    def error_reply(
        self, frame: dict[str, Any], text: str, extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """This action's error reply frame for a request frame."""
        before, after = self.error_shape(frame) if self.error_shape else ({}, {})
        return {
            **reply_head(frame),
            **before,
            **(extra or {}),
            **self.error_extra,
            "error": text,
            **self.error_tail,
            **after,
        }


def action(
    name: str,
    *,
    error_extra: dict[str, Any] | None = None,
    error_tail: dict[str, Any] | None = None,
    resolve_user: bool = True,
    error_shape: ErrorShape | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a handler (sync or async) as the one of action `name`. `resolve_user=False` for an
    action that never looks at `userId` (the module's get-status-effects)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        spec = ActionSpec(
            name,
            fn,
            dict(error_extra or {}),
            inspect.iscoroutinefunction(fn),
            dict(error_tail or {}),
            resolve_user,
            error_shape,
        )
        setattr(fn, SPEC_ATTRIBUTE, spec)
        return fn

    return mark


def spec_of(handler: Callable[..., Any]) -> ActionSpec | None:
    """The spec `@action` gave a handler, or None."""
    spec = getattr(handler, SPEC_ATTRIBUTE, None)
    return spec if isinstance(spec, ActionSpec) else None


@dataclass(frozen=True)
class ActionTable:
    """Action name -> spec; immutable."""

    specs: Mapping[str, ActionSpec]

    @classmethod
    def of(cls, *entries: ActionSpec | Callable[..., Any]) -> ActionTable:
        """A table of these specs and `@action` handlers; a name given twice is an error."""
        specs: dict[str, ActionSpec] = {}
        for entry in entries:
            spec = entry if isinstance(entry, ActionSpec) else spec_of(entry)
            if spec is None:
                raise ValueError(f"{entry!r} is not an @action handler")
            if spec.name in specs and specs[spec.name].handler is not spec.handler:
                raise ValueError(f"action {spec.name!r} is in the table twice")
            specs[spec.name] = spec
        return cls(MappingProxyType(specs))

    @classmethod
    def from_modules(cls, *modules: ModuleType) -> ActionTable:
        """The `@action` handlers defined in these modules (not those they import)."""
        return cls.of(
            *(
                value
                for module in modules
                for value in vars(module).values()
                if spec_of(value) is not None and value.__module__ == module.__name__
            )
        )

    def extended(self, other: ActionTable) -> ActionTable:
        """This table and `other` (a name in both is an error)."""
        return ActionTable.of(*self.specs.values(), *other.specs.values())

    def get(self, name: object) -> ActionSpec | None:
        return self.specs.get(name) if isinstance(name, str) else None

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)
