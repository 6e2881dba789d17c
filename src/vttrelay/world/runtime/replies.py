"""The replies to requests that failed unexpectedly, and the encoding of every reply.

An unexpected exception is logged once, as one line (type, message, innermost frames), and the
reply says what was wrong with the request (a number too large, data nested too deeply, a value
of the wrong shape), never the exception's own text. `unsendable_reply` is the same for a reply
that was built but can't be encoded: `encode_reply` answers with it instead (a number past 64
bits, nesting past orjson's limit), so one request can't stop the world (issue 9).
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

import orjson

from vttrelay.world.runtime.table import ActionTable, reply_head

log = logging.getLogger(__name__)


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


def _failure(actions: ActionTable, frame: dict[str, Any], text: str) -> dict[str, Any]:
    spec = actions.get(frame.get("type"))
    if spec is None:
        return {**reply_head(frame), "error": text}
    return spec.error_reply(frame, text)


def error_reply(actions: ActionTable, frame: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The reply to a request whose action raised unexpectedly (logged here, one line)."""
    name = frame.get("type")
    log.error("action %s (request %s) failed: %s", name, frame.get("requestId"), one_line(exc))
    return _failure(actions, frame, f"Could not carry out {name}: {_reason(exc)}")


def unsendable_reply(
    actions: ActionTable, frame: dict[str, Any], exc: BaseException
) -> dict[str, Any]:
    """The reply to a request whose reply was built but can't be encoded (logged, one line)."""
    name = frame.get("type")
    log.error(
        "reply to %s (request %s) can't be encoded: %s", name, frame.get("requestId"), one_line(exc)
    )
    return _failure(actions, frame, f"The reply to {name} could not be sent: {_reason(exc)}")


def encode_reply(
    actions: ActionTable, frame: dict[str, Any], reply: dict[str, Any]
) -> tuple[str, bytes] | None:
    """(reply type, JSON) of a request's reply; a reply that can't be encoded becomes the error
    reply `unsendable_reply`; None when not even that can be (its requestId itself)."""
    try:
        return str(reply.get("type")), orjson.dumps(reply)
    except (orjson.JSONEncodeError, TypeError) as exc:
        reply = unsendable_reply(actions, frame, exc)
    try:
        return str(reply.get("type")), orjson.dumps(reply)
    except (orjson.JSONEncodeError, TypeError):  # its requestId itself: nobody to answer
        return None
