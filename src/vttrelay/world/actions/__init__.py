"""World actions: the registry, `ActionError`, and the dispatcher.

Every module in this package registers its handlers with `@action("<name>")`. A handler gets the
action context and the whole request frame and returns the reply body without `type` and
`requestId`; the dispatcher prepends those two. A synchronous handler runs inside one store
transaction: `ActionError` (or any other exception) rolls everything back and becomes an error
reply `{type, requestId, **error_extra, "error": text, **error_tail}` (`error_tail` holds the keys
the module puts after `error`, such as `"data": null`). A handler whose error replies echo
request values also registers an `error_shape(frame) -> (before, after)`: its keys go before
`error_extra` and after `error_tail`. An `ActionError(..., bare=True)` is just
`{type, requestId, "error": text}`. An async handler (execute-js) gets a
context without an open transaction and uses `ctx.transact(fn)` for its reads and writes.

An unexpected exception is logged once, as one line (type, message, innermost frames), and the
reply says what was wrong with the request (a number too large, data nested too deeply, a value
of the wrong shape), never the exception's own text. `unsendable_reply` is the same for a reply
that was built but can't be encoded (the agent's last check before sending).

Before any handler, an unknown `userId` (by id, then case-insensitive name) is answered with
`{"type", "requestId", "error": "User not found: <id>", "data": null}`.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vttrelay import protocol

if TYPE_CHECKING:
    from vttrelay.world.world import World

log = logging.getLogger(__name__)


class ActionError(Exception):
    """A clear, expected failure: its message is the reply's `error` text. `extra` holds reply
    keys that depend on the request and come before the action's `error_extra` (a macro's
    `uuid`)."""

    def __init__(
        self, message: str, extra: dict[str, Any] | None = None, *, bare: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
        self.bare = bare  # reply with type, requestId and error only


class UserNotFound(Exception):
    """The request's `userId` names no user."""

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self.ref = ref


ErrorShape = Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]


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
            **_head(frame),
            **before,
            **(extra or {}),
            **self.error_extra,
            "error": text,
            **self.error_tail,
            **after,
        }


ACTIONS: dict[str, ActionSpec] = {}


def action(
    name: str,
    *,
    error_extra: dict[str, Any] | None = None,
    error_tail: dict[str, Any] | None = None,
    resolve_user: bool = True,
    error_shape: ErrorShape | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a handler for the action `name` (sync or async). `resolve_user=False` for an
    action that never looks at `userId` (the module's get-status-effects)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in ACTIONS and ACTIONS[name].handler is not fn:
            raise ValueError(f"action {name!r} is registered twice")
        ACTIONS[name] = ActionSpec(
            name,
            fn,
            dict(error_extra or {}),
            inspect.iscoroutinefunction(fn),
            dict(error_tail or {}),
            resolve_user,
            error_shape,
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


async def dispatch(
    world: World, frame: dict[str, Any], deadline: float | None = None
) -> dict[str, Any]:
    """Run one request frame and build its reply frame (never raises). A sync handler past
    `deadline` (the world's monotonic clock) stops and commits nothing; an async one stops at
    its next `ctx.checkpoint()` past it."""
    name = frame.get("type")
    head = _head(frame)
    spec = ACTIONS.get(name) if isinstance(name, str) else None
    if spec is None:
        return {**head, "error": f"Unknown action: {name}"}
    user_ref = frame.get("userId") if spec.resolve_user else None
    try:
        if spec.is_async:
            user = world.resolve_user_ref(user_ref)
            check = world.checker(world.deadline() if deadline is None else deadline)
            ctx = world.context(None, user, check)
            body = await spec.handler(ctx, frame)
        else:
            body = world.run_action(user_ref, spec.handler, frame, deadline)
    except UserNotFound as exc:
        return {**head, "error": f"User not found: {exc.ref}", "data": None}
    except ActionError as exc:
        if exc.bare:
            return {**head, "error": exc.message}
        return spec.error_reply(frame, exc.message, exc.extra)
    except Exception as exc:  # rolled back (done); answer clearly instead of timing out
        return error_reply(frame, exc)
    return {**head, **body}


def _reason(exc: BaseException) -> str:
    """What was wrong with the request, judged from the exception it caused."""
    text = str(exc)
    if isinstance(exc, RecursionError) or "Recursion limit" in text:
        return "its data is nested too deeply"
    if isinstance(exc, OverflowError) or "64-bit" in text or "too large" in text:
        return "a number in it is too large"
    if "JSON serializable" in text or "valid UTF-8" in text or "key must be str" in text:
        return "it holds a value JSON cannot carry"  # orjson's JSONEncodeError is a TypeError
    if isinstance(exc, TypeError | ValueError | KeyError | IndexError | AttributeError):
        return "a parameter has a value of an unexpected type or shape"
    return "the world failed while carrying it out"


def one_line(exc: BaseException, frames: int = 5) -> str:
    """The exception as one log line: type, message (clipped), the innermost `frames` frames."""
    message = str(exc).replace("\n", "\\n")[:300]
    stack = traceback.extract_tb(exc.__traceback__)[-frames:]
    where = " <- ".join(
        f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in reversed(stack)
    )
    return f"{type(exc).__name__}: {message} at {where or '?'}"


def _failure(frame: dict[str, Any], text: str) -> dict[str, Any]:
    name = frame.get("type")
    spec = ACTIONS.get(name) if isinstance(name, str) else None
    if spec is None:
        return {**_head(frame), "error": text}
    return spec.error_reply(frame, text)


def error_reply(frame: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The reply to a request whose action raised unexpectedly (logged here, one line)."""
    name = frame.get("type")
    log.error("action %s (request %s) failed: %s", name, frame.get("requestId"), one_line(exc))
    return _failure(frame, f"Could not carry out {name}: {_reason(exc)}")


def unsendable_reply(frame: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The reply to a request whose reply was built but can't be encoded (logged, one line)."""
    name = frame.get("type")
    log.error(
        "reply to %s (request %s) can't be encoded: %s", name, frame.get("requestId"), one_line(exc)
    )
    return _failure(frame, f"The reply to {name} could not be sent: {_reason(exc)}")
