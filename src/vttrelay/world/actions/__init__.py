"""World actions: the registry, `ActionError`, and the dispatcher.

Every module in this package registers its handlers with `@action("<name>")`. A handler gets the
action context and the whole request frame and returns the reply body without `type` and
`requestId`; the dispatcher prepends those two. A synchronous handler runs inside one store
transaction: `ActionError` (or any other exception) rolls everything back and becomes an error
reply `{type, requestId, **error_extra, "error": text, **error_tail}` (`error_tail` holds the keys
the module puts after `error`, such as `"data": null`). An async handler (execute-js) gets a
context without an open transaction and uses `ctx.transact(fn)` for its reads and writes.

Before any handler, an unknown `userId` (by id, then case-insensitive name) is answered with
`{"type", "requestId", "error": "User not found: <id>", "data": null}`.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vttrelay import protocol

if TYPE_CHECKING:
    from vttrelay.world.world import World

log = logging.getLogger(__name__)


class ActionError(Exception):
    """A clear, expected failure: its message is the reply's `error` text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UserNotFound(Exception):
    """The request's `userId` names no user."""

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self.ref = ref


@dataclass(frozen=True)
class ActionSpec:
    name: str
    handler: Callable[..., Any]
    error_extra: dict[str, Any] = field(default_factory=dict)
    is_async: bool = False
    error_tail: dict[str, Any] = field(default_factory=dict)


ACTIONS: dict[str, ActionSpec] = {}


def action(
    name: str,
    *,
    error_extra: dict[str, Any] | None = None,
    error_tail: dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a handler for the action `name` (sync or async)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in ACTIONS and ACTIONS[name].handler is not fn:
            raise ValueError(f"action {name!r} is registered twice")
        ACTIONS[name] = ActionSpec(
            name,
            fn,
            dict(error_extra or {}),
            inspect.iscoroutinefunction(fn),
            dict(error_tail or {}),
        )
        return fn

    return register


def load_actions() -> dict[str, ActionSpec]:
    """Import every module of this package, so that all handlers are registered."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return ACTIONS


def _head(frame: dict[str, Any]) -> dict[str, Any]:
    name = frame.get("type")
    return {
        "type": protocol.result_type(str(name)),
        "requestId": frame.get("requestId"),
    }


async def dispatch(world: World, frame: dict[str, Any]) -> dict[str, Any]:
    """Run one request frame and build its reply frame (never raises)."""
    name = frame.get("type")
    head = _head(frame)
    spec = ACTIONS.get(name) if isinstance(name, str) else None
    if spec is None:
        return {**head, "error": f"Unknown action: {name}"}
    try:
        if spec.is_async:
            user = world.resolve_user_ref(frame.get("userId"))
            ctx = world.context(None, user)
            body = await spec.handler(ctx, frame)
        else:
            body = world.run_action(frame.get("userId"), spec.handler, frame)
    except UserNotFound as exc:
        return {**head, "error": f"User not found: {exc.ref}", "data": None}
    except ActionError as exc:
        return {**head, **spec.error_extra, "error": exc.message, **spec.error_tail}
    except Exception as exc:  # a bug: roll back (done) and answer clearly instead of timing out
        log.exception("action %s failed", name)
        text = f"Internal error in {name}: {exc}"
        return {**head, **spec.error_extra, "error": text, **spec.error_tail}
    return {**head, **body}
