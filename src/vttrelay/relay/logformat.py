"""The relay's other log lines in the access log's stream and format (`vttrelay serve
--log-format text|json`): `BufferedHandler` sends every `logging` record through the
`accesslog.BufferedAccessLog` that holds the access lines, so all lines reach stderr in the order
they were made, in the text format or as JSON objects (`accesslog.JsonFormatter`).
`route_logging` puts the handler in place of the root logger's stderr handlers.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from vttrelay.relay.accesslog import LOG_FORMAT, BufferedAccessLog, JsonFormatter


class BufferedHandler(logging.Handler):
    """Writes each record through `sink` (after the access lines buffered before it)."""

    def __init__(self, sink: BufferedAccessLog, formatter: logging.Formatter) -> None:
        super().__init__()
        self.sink = sink
        self.setFormatter(formatter)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # as logging's handlers do: a broken record is reported, not raised
            self.handleError(record)
            return
        self.sink.line(text)


def formatter(json: bool) -> logging.Formatter:
    return JsonFormatter() if json else logging.Formatter(LOG_FORMAT)


def route_logging(sink: BufferedAccessLog) -> Callable[[], None]:
    """Send the root logger's records through `sink` (in its format) instead of its stderr
    handlers; returns what puts those handlers back."""
    root = logging.getLogger()
    replaced = [
        h
        for h in root.handlers
        if type(h) is logging.StreamHandler and h.stream in (sys.stderr, sink.stream)
    ]
    handler = BufferedHandler(sink, formatter(sink.json))
    for h in replaced:
        root.removeHandler(h)
    root.addHandler(handler)

    def restore() -> None:
        root.removeHandler(handler)
        for h in replaced:
            root.addHandler(h)

    return restore


__all__ = ["BufferedHandler", "formatter", "route_logging"]
