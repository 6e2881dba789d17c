"""The request log: one access line per request, built from the request's `RequestRecord` (the
same record the activity log keeps), cheap per request, and what keeps every logged line one
line: `escape` and `OneLineErrors`.

The relay's middleware builds one `RequestRecord` per request from what it has at hand (the key
object the key cache holds, the named world, method, path, route, status, time, the client's
address, a request number, the body's bytes) and hands it to the access log and, for an API
route, to the activity log (`activity.py`, which completes it in its writer thread). The access
line says (text):

    127.0.0.1 "GET /world-info" 200 312B 1.2ms key="my bot" world=fvtt_abc id=r17_3fa2b1c0

(`-` for no key or world; the key's name, or its id when it has none, never the key), or with
`--log-format json` one JSON object: `{"time", "level", "logger", "peer", "method", "path",
"status", "bytes", "ms", "key", "world", "requestId"}` (`logformat.py` writes the other log
lines as JSON objects too). The request id also ends the line of a request that failed (500).

Two sinks with one method, `record(rec)`, both on the `vttrelay.access` logger's level (INFO by
default; `--log-level WARNING` turns the lines off, and so does `--access-log off`):

- `LoggingAccessLog`, the default of `create_app`: one `logging` record per request, so whoever
  embeds the app (the tests' `caplog`, an application with its own handlers) sees the lines.
- `BufferedAccessLog`, what `vttrelay serve` uses: the records are appended to a buffer, and the
  buffer is formatted and written with one `write()` `interval` seconds (0.05) after its first
  record, at once when it holds `max_lines`, and at `close()`. A log record and an unbuffered
  write per request cost a fifth of a forwarded request's CPU (bench/RESULTS.md). Every other
  log line goes through the same buffer (`logformat.BufferedHandler`: appended, then the buffer
  written at once), so the lines are written in the order they were made.

A path is logged through `logged_path` (a pair or key request's code, a bearer secret, shows as
`{code}`). What a client sends is logged through `escape`: control characters (an encoded
newline in a path could otherwise forge log lines) become escapes such as `\\n`, and a long text
is cut at `MAX_LOGGED` characters. `OneLineErrors` wraps aiohttp's server logger: a malformed
request or a failing handler is one ERROR line (`describe_error`: type, escaped message, where it
was raised) and its traceback goes to DEBUG, not a traceback full of the request's bytes at
ERROR.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sys
import threading
import time
import traceback
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TextIO

import orjson
from aiohttp import web

from vttrelay.relay.timers import Later, Timer, loop_later

if TYPE_CHECKING:
    from vttrelay.relay.store import KeyRecord

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str, json: bool = False) -> None:
    """Log lines to stderr in `LOG_FORMAT` (or as JSON objects, `JsonFormatter`) from `level`
    (DEBUG, INFO, WARNING...) up."""
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO), format=LOG_FORMAT, stream=sys.stderr
    )
    if json:
        for handler in logging.getLogger().handlers:
            if type(handler) is logging.StreamHandler:
                handler.setFormatter(JsonFormatter())
    logging.getLogger("yoyo").setLevel(logging.WARNING)


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object on one line: `time` (UTC), `level`, `logger`,
    `message`, and `error` with the traceback when there is one (`--log-format json`)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": utc_stamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


ACCESS_LOGGER = "vttrelay.access"
FLUSH_INTERVAL = 0.05
MAX_LINES = 500  # records buffered before the buffer is written at once

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
    """One request's facts as the middleware has them at hand (a tuple: cheap to make), read by
    the access log and the activity log (which completes it in its writer thread: the key's
    account, id and name). Never a secret, a body or a query."""

    at: float  # time.time() when it ended
    key: KeyRecord | None  # the key it named, as the key cache holds it (None: no known key)
    account: str  # the account acting ("": the key's)
    world: str  # the `clientId` it named ("" if none)
    method: str
    path: str  # the path asked for (the access line)
    route: str | None  # the route-table path (`/get/{uuid}`); None: no API route (not recorded)
    status: int
    ms: float
    peer: str  # the client's address (behind a trusted proxy, the one it names)
    number: int  # this process's request counter (`request_id`)
    size: int  # bytes of the response body (a stream or socket: bytes sent, headers included)


_process = secrets.token_hex(4)  # per process (and per forked child), as core's request ids


def _new_process() -> None:
    global _process
    _process = secrets.token_hex(4)


os.register_at_fork(after_in_child=_new_process)


def request_id(number: int) -> str:
    """The id an access line shows for request `number` of this process: `r<number>_<random>`."""
    return f"r{number}_{_process}"


def _key_name(rec: RequestRecord) -> str:
    """The key's name, or its id when it has none ("": no known key)."""
    key = rec.key
    return "" if key is None else key.name or key.id


def text_line(rec: RequestRecord) -> str:
    """The access line's message in the text format (see the module docstring)."""
    key = "-"
    if rec.key is not None:
        named = rec.key.name
        key = '"' + escape(named, 200).replace('"', '\\"') + '"' if named else rec.key.id
    return (
        f'{rec.peer or "-"} "{rec.method} {escape(rec.path)}" {rec.status} {rec.size}B '
        f"{rec.ms:.1f}ms key={key} world={escape(rec.world, 200) or '-'} "
        f"id={request_id(rec.number)}"
    )


def utc_stamp(at: float) -> str:
    """`2026-11-27T06:50:00.123Z`: the time of a JSON log line."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


def json_line(rec: RequestRecord) -> str:
    """The access line as one JSON object (`--log-format json`), without its newline."""
    return orjson.dumps(
        {
            "time": utc_stamp(rec.at),
            "level": "INFO",
            "logger": ACCESS_LOGGER,
            "peer": rec.peer,
            "method": rec.method,
            "path": rec.path[:MAX_LOGGED],
            "status": rec.status,
            "bytes": rec.size,
            "ms": round(rec.ms, 1),
            "key": _key_name(rec) or None,
            "world": rec.world[:200] or None,
            "requestId": request_id(rec.number),
        }
    ).decode()


class AccessLog(Protocol):
    enabled: bool  # False: `record` need not be called (`--access-log off`)

    def record(self, rec: RequestRecord) -> None: ...

    def close(self) -> None: ...


class LoggingAccessLog:
    """A `logging` record per request on `vttrelay.access` (INFO), in the text format."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def record(self, rec: RequestRecord) -> None:
        if access_logger.isEnabledFor(logging.INFO):
            access_logger.info("%s", text_line(rec))

    def close(self) -> None:
        pass


class BufferedAccessLog:
    """Access records and other log lines, written to `stream` in order and in batches: access
    lines as `logging.Formatter(LOG_FORMAT)` would write them (or as JSON objects), formatted
    when the buffer is written. Safe from any thread: a line logged by another thread is
    appended under the lock and the buffer written at once (`line`)."""

    def __init__(
        self,
        stream: TextIO,
        interval: float = FLUSH_INTERVAL,
        max_lines: int = MAX_LINES,
        json: bool = False,
        enabled: bool = True,
        later: Later = loop_later,
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.later = later  # schedules the flush after `interval` (`relay.timers`)
        self.max_lines = max_lines
        self.json = json
        self.enabled = enabled  # access lines (other lines are written anyway)
        self._items: list[RequestRecord | str] = []
        self._lock = threading.Lock()
        self._timer: Timer | None = None
        self._second = -1
        self._stamp = ""
        self._prefix = f" INFO {ACCESS_LOGGER}: "

    def record(self, rec: RequestRecord) -> None:
        if not access_logger.isEnabledFor(logging.INFO):
            return
        with self._lock:
            items = self._items
            items.append(rec)
            full = len(items) >= self.max_lines
        if full:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = self.later(self.interval, self._on_timer)
            except RuntimeError:  # no loop (a synchronous caller): write at once
                self.flush()

    def line(self, text: str) -> None:
        """Another log line (formatted, without its newline): written after what is buffered,
        at once."""
        with self._lock:
            self._items.append(text)
        self.flush()

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def _text(self, item: RequestRecord | str) -> str:
        if isinstance(item, str):
            return item + "\n"
        if self.json:
            return json_line(item) + "\n"
        second = int(item.at)
        if second != self._second:
            # logging's default asctime: local time, "%Y-%m-%d %H:%M:%S,mmm"
            self._second = second
            self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        millis = int((item.at - second) * 1000)
        return f"{self._stamp},{millis:03d}{self._prefix}{text_line(item)}\n"

    def flush(self) -> None:
        """Format and write what is buffered with one write(), in order."""
        with self._lock:
            if not self._items:
                return
            items, self._items = self._items, []
            text = "".join([self._text(item) for item in items])
            with contextlib.suppress(OSError, ValueError):  # a closed stream loses the lines
                self.stream.write(text)
                self.stream.flush()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
