"""The request log: one line per request (method, path, status, milliseconds), cheap per request,
and what keeps every logged line one line: `escape` and `OneLineErrors`.

Two sinks with one method, `line(method, path, status, ms)`, both on the `vttrelay.access`
logger's level (INFO by default; `--log-level WARNING` turns the lines off):

- `LoggingAccessLog`, the default of `create_app`: one `logging` record per request, so whoever
  embeds the app (the tests' `caplog`, an application with its own handlers) sees the lines.
- `BufferedAccessLog`, what `vttrelay serve` uses: the line is formatted with an f-string in the
  CLI's log format (`LOG_FORMAT`, the timestamp formatted once per second), appended to a buffer,
  and the buffer is written with one `write()` `interval` seconds (0.05) after its first line, at
  once when it holds `max_bytes` (64 KiB), and at `close()`. A log record and an unbuffered
  write per request cost a fifth of a forwarded request's CPU (bench/RESULTS.md).
  Other log lines are written at once, so an access line may follow a later one by < interval.

A path is logged through `logged_path` (a pair or key request's code, a bearer secret, shows as
`{code}`). What a client sends is logged through `escape`: control characters (an encoded
newline in a path could otherwise forge log lines) become escapes such as `\\n`, and a long text
is cut at `MAX_LOGGED` characters. `OneLineErrors` wraps aiohttp's server logger: a malformed
request or a failing handler is one ERROR line (`describe_error`: type, escaped message, where it
was raised) and its traceback goes to DEBUG, not a traceback full of the request's bytes at
ERROR.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
import traceback
from collections.abc import MutableMapping
from typing import Any, NamedTuple, Protocol, TextIO

from aiohttp import web

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str) -> None:
    """Log lines to stderr in `LOG_FORMAT` from `level` (DEBUG, INFO, WARNING...) up."""
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO), format=LOG_FORMAT, stream=sys.stderr
    )
    logging.getLogger("yoyo").setLevel(logging.WARNING)


ACCESS_LOGGER = "vttrelay.access"
FLUSH_INTERVAL = 0.05
MAX_BUFFER = 64 * 1024

MAX_LOGGED = 2000  # characters of a client's text in one log line

access_logger = logging.getLogger(ACCESS_LOGGER)


def escape(text: str, limit: int = MAX_LOGGED) -> str:
    """`text` safe for one log line: non-printable characters escaped (`\\n`, `\\x1b`,
    `\\u2028`), at most `limit` characters of it. Printable text is returned as it is (fast)."""
    if len(text) <= limit and text.isprintable():  # nearly every path: no copy
        return text
    shown = text[:limit]
    cut = len(text) > limit
    if not shown.isprintable():
        escaped = "".join(_escape_char(c) for c in shown)
        shown, cut = escaped[:limit], cut or len(escaped) > limit
    return f"{shown}...({len(text)} characters)" if cut else shown


def _escape_char(char: str) -> str:
    return char if char.isprintable() else char.encode("unicode_escape").decode()


def describe_error(exc: BaseException) -> str:
    """One line for an exception: `Type: message (at file.py:line)`, the message escaped."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    if frames:
        where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})"
    return f"{type(exc).__name__}: {escape(str(exc), MAX_LOGGED // 2)}{where}"


class OneLineErrors(logging.LoggerAdapter):
    """A logger whose `exception()` writes one ERROR line (the message and `describe_error`)
    and the traceback at DEBUG only (for aiohttp's server logger, see the module docstring)."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger, {})

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        return msg, kwargs

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        exc = exc_info if isinstance(exc_info, BaseException) else None
        if exc is None:
            exc = sys.exc_info()[1]
        text = escape(str(msg) % args if args else str(msg))
        if exc is None:
            self.logger.error("%s", text)
            return
        self.logger.error("%s: %s", text, describe_error(exc))
        if self.logger.isEnabledFor(logging.DEBUG):
            self.logger.debug("%s", text, exc_info=exc)


SECRET_PATH_PARAMS = ("code",)  # path parts that are bearer secrets (a pair/key request's code)


def logged_path(request: web.BaseRequest) -> str:
    """The path a log line shows: the request's, with a path part that is a secret (the code of
    a pair or key request: whoever has it may collect the request's answer) as its name."""
    path = request.path
    match_info = getattr(request, "match_info", None)
    if match_info:
        for name in SECRET_PATH_PARAMS:
            value = match_info.get(name)
            if value:
                path = path.replace(value, "{" + name + "}")
    return path


class RequestRecord(NamedTuple):
    """The facts of one API call, built once by the relay's middleware and read by every sink
    that keeps them (the activity log, `activity.py`): never a secret, a body or a query."""

    at: float  # time.time() when it ended
    account: str  # the key's account ('' if the call named no known key)
    key_id: str
    key_name: str
    world: str  # the `clientId` it named ('' if none)
    method: str
    route: str  # the route-table path (`/get/{uuid}`)
    status: int
    ms: float
    peer: str  # the client's address


class AccessLog(Protocol):
    def line(self, method: str, path: str, status: int, ms: float) -> None: ...

    def close(self) -> None: ...


class LoggingAccessLog:
    """A `logging` record per request on `vttrelay.access` (INFO)."""

    def line(self, method: str, path: str, status: int, ms: float) -> None:
        access_logger.info("%s %s %d %.1fms", method, escape(path), status, ms)

    def close(self) -> None:
        pass


class BufferedAccessLog:
    """Lines as `logging.Formatter(LOG_FORMAT)` would write them, written to `stream` in batches."""

    def __init__(
        self, stream: TextIO, interval: float = FLUSH_INTERVAL, max_bytes: int = MAX_BUFFER
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.max_bytes = max_bytes
        self._lines: list[str] = []
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None
        self._second = -1
        self._stamp = ""
        self._prefix = f" INFO {ACCESS_LOGGER}: "

    def line(self, method: str, path: str, status: int, ms: float) -> None:
        if not access_logger.isEnabledFor(logging.INFO):
            return
        now = time.time()
        second = int(now)
        if second != self._second:
            # logging's default asctime: local time, "%Y-%m-%d %H:%M:%S,mmm"
            self._second = second
            self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        text = (
            f"{self._stamp},{int((now - second) * 1000):03d}{self._prefix}"
            f"{method} {escape(path)} {status} {ms:.1f}ms\n"
        )
        self._lines.append(text)
        self._size += len(text)
        if self._size >= self.max_bytes:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): write at once
                self.flush()
                return
            self._timer = loop.call_later(self.interval, self.flush)

    def flush(self) -> None:
        """Write the buffered lines with one write()."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._lines:
            return
        text = "".join(self._lines)
        self._lines.clear()
        self._size = 0
        with contextlib.suppress(OSError, ValueError):  # a closed stream loses the lines only
            self.stream.write(text)
            self.stream.flush()

    def close(self) -> None:
        self.flush()
