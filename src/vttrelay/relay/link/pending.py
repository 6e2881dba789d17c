"""Requests awaiting a world's reply: the reply as it came, its fast path, and how they fail.

Requests to a world are correlated by `requestId` only (DESIGN §6 item 4): a request waits on a
future in its world's `pending` map (`session.WorldSession`, or the Redis directory's map for a
world held by another instance), any frame carrying a pending `requestId` resolves it, its timer
fails it with `TimeoutError` (`expire_reply`), and a world that goes away fails all of its
pending requests at once with `WorldGone`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson


class WorldGone(Exception):
    """The world disconnected before replying."""


class Reply:
    """A world's answer to a request: the frame's exact bytes, whether it is an error (a
    top-level string `error`: the reply becomes a 400) and the parsed frame, parsed on first
    use when the fast path (`peek_reply`) resolved it without parsing."""

    __slots__ = ("_frame", "is_error", "raw")

    def __init__(
        self, raw: bytes, frame: dict[str, Any] | None = None, is_error: bool | None = None
    ) -> None:
        self.raw = raw
        self._frame = frame
        if is_error is None:
            is_error = isinstance(self.frame.get("error"), str)
        self.is_error = is_error

    @property
    def frame(self) -> dict[str, Any]:
        if self._frame is None:
            try:
                parsed = orjson.loads(self.raw)
            except orjson.JSONDecodeError:
                parsed = None
            self._frame = parsed if isinstance(parsed, dict) else {}
        return self._frame


Pending = dict[str, "asyncio.Future[Reply]"]
"""A world's requests awaiting their reply, by `requestId`."""


def expire_reply(future: asyncio.Future[Reply]) -> None:
    """A request's timer ran out: its awaiting caller gets `TimeoutError` (unless answered)."""
    if not future.done():
        future.set_exception(TimeoutError())


def fail_all(pending: Pending) -> None:
    """The world went away: every request still waiting fails with `WorldGone`, at once."""
    for future in pending.values():
        if not future.done():
            future.set_exception(WorldGone())
    pending.clear()


# Replies at least this long skip the parse when they can (bench.micro: orjson parses a 400-byte
# reply in ~1.4 us, less than peek_reply's checks; a 2.6 KB one in ~9 us, twice their cost).
FAST_PATH_MIN_BYTES = 1024
_HEAD = b'{"type":"'
_REQUEST_ID = b',"requestId":"'


def peek_reply(raw: bytes) -> tuple[str, bool] | None:
    """(requestId, may be an error) read without parsing, or None: parse the frame instead.

    Only for frames that begin `{"type":"<type>","requestId":"<id>"` with no escape in either
    string (the module's and our world's key order; anchored at the start, so both keys are
    top-level). The second value is False only when neither `"error"` nor a `\\u` escape (which
    could spell the key) occurs anywhere in the frame: then the frame has no top-level `error`
    and is not a 400. True means: parse it to decide. A second `"requestId"` (the parse would
    take the last) gives None. The rest of the frame is not validated as JSON.
    """
    if not raw.startswith(_HEAD):
        return None
    type_end = raw.find(b'"', 9)
    if type_end < 0 or raw.find(b"\\", 9, type_end) >= 0:
        return None
    if not raw.startswith(_REQUEST_ID, type_end + 1):
        return None
    id_start = type_end + 1 + len(_REQUEST_ID)
    id_end = raw.find(b'"', id_start)
    if id_end < 0 or raw.find(b"\\", id_start, id_end) >= 0 or not raw.rstrip().endswith(b"}"):
        return None
    try:
        request_id = raw[id_start:id_end].decode()
    except UnicodeDecodeError:
        return None
    # a backslash (memchr, fast) before the slower two-byte search for \u
    if b'"error"' in raw or (raw.find(b"\\") >= 0 and b"\\u" in raw):
        return request_id, True  # parsed in full, which also settles a second requestId
    if raw.find(b'"requestId"', id_end) >= 0:  # a second one (the last would win): parse
        return None
    return request_id, False
