"""The access log: its line (text and JSON) from a `RequestRecord`, the same layout `logging`
would write, written in batches and in order with the other log lines."""

from __future__ import annotations

import io
import logging
import re
import time

import orjson
import pytest
from tests.support.clock import FakeClock
from tests.support.keys import key_record

from vttrelay.relay.accesslog import (
    ACCESS_LOGGER,
    LOG_FORMAT,
    BufferedAccessLog,
    JsonFormatter,
    OneLineErrors,
    RequestRecord,
    escape,
    request_id,
    text_line,
)
from vttrelay.relay.logformat import BufferedHandler
from vttrelay.relay.store import KeyRecord


@pytest.fixture(autouse=True)
def _access_at_info() -> object:
    logger = logging.getLogger(ACCESS_LOGGER)
    before = logger.level
    logger.setLevel(logging.INFO)
    yield
    logger.setLevel(before)


def rec(
    method: str = "GET",
    path: str = "/chat",
    status: int = 200,
    ms: float = 3.14159,
    *,
    key: KeyRecord | None = None,
    world: str = "",
    at: float | None = None,
    number: int = 7,
    size: int = 312,
) -> RequestRecord:
    return RequestRecord(
        time.time() if at is None else at,
        key,
        "",
        world,
        method,
        path,
        None,
        status,
        ms,
        "203.0.113.5",
        number,
        size,
    )


async def test_line_is_what_logging_writes_and_arrives_after_the_interval() -> None:
    out = io.StringIO()
    clock = FakeClock()
    sink = BufferedAccessLog(out, interval=0.5, later=clock.call_later)
    started = time.time()
    sink.record(rec(key=key_record(name="my bot"), world="fvtt_abc"))
    sink.record(rec("POST", "/dnd5e/skill-check", 400, 12.05, number=8, size=0))
    clock.advance(0.49)
    assert out.getvalue() == ""  # buffered
    clock.advance(0.01)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    message = text_line(rec(key=key_record(name="my bot"), world="fvtt_abc"))
    assert message == (
        f'203.0.113.5 "GET /chat" 200 312B 3.1ms key="my bot" world=fvtt_abc id={request_id(7)}'
    )
    record = logging.LogRecord(ACCESS_LOGGER, logging.INFO, "", 0, message, (), None)
    record.created = started
    expected = logging.Formatter(LOG_FORMAT).format(record)
    # the same layout as logging's (timestamp with milliseconds, level, logger name, message)
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert re.fullmatch(stamp + r" INFO vttrelay\.access: .*", lines[0])
    assert lines[0][23:] == expected[23:]
    assert abs(time.mktime(time.strptime(lines[0][:19], "%Y-%m-%d %H:%M:%S")) - started) < 2
    assert lines[1].endswith(
        f' INFO vttrelay.access: 203.0.113.5 "POST /dnd5e/skill-check" 400 0B 12.1ms key=- '
        f"world=- id={request_id(8)}"
    )
    assert re.fullmatch(r"r8_[0-9a-f]{8}", request_id(8))


async def test_json_lines_and_other_lines_in_the_order_they_were_made() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out, interval=60, json=True)
    logger = logging.getLogger("vttrelay.test.order")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(BufferedHandler(sink, JsonFormatter()))
    try:
        sink.record(rec(key=key_record(name='a "quoted" bot'), world="w1", at=1_700_000_000.25))
        logger.info("world connected: %s", "w1")  # written at once, after the buffered line
        assert len(out.getvalue().splitlines()) == 2
        sink.record(rec("POST", "/chat", 201, 1.0))
        sink.close()
    finally:
        logger.handlers.clear()
        logger.propagate = True
    first, second, third = (orjson.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "time": "2023-11-14T22:13:20.250Z",
        "level": "INFO",
        "logger": "vttrelay.access",
        "peer": "203.0.113.5",
        "method": "GET",
        "path": "/chat",
        "status": 200,
        "bytes": 312,
        "ms": 3.1,
        "key": 'a "quoted" bot',
        "world": "w1",
        "requestId": request_id(7),
    }
    assert (second["logger"], second["level"], second["message"]) == (
        "vttrelay.test.order",
        "INFO",
        "world connected: w1",
    )
    assert (third["method"], third["status"], third["key"], third["world"]) == (
        "POST",
        201,
        None,
        None,
    )


async def test_a_full_buffer_is_written_at_once_in_one_write() -> None:
    writes: list[str] = []

    class Stream(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

    sink = BufferedAccessLog(Stream(), interval=60, max_lines=15)
    for _ in range(20):  # the 15th line fills the buffer
        sink.record(rec("GET", "/players", 200, 1.0))
    assert len(writes) == 1 and writes[0].count("\n") == 15
    sink.close()
    assert len(writes) == 2 and writes[1].count("\n") == 5


async def test_close_flushes_and_the_level_turns_lines_off() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out, interval=60)
    sink.record(rec("GET", "/a", 200, 1.0))
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.WARNING)
    sink.record(rec("GET", "/b", 200, 1.0))
    sink.close()
    assert '"GET /a" 200 312B 1.0ms' in out.getvalue() and "/b" not in out.getvalue()


def test_without_a_loop_lines_are_written_at_once_and_a_closed_stream_is_harmless() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out)
    sink.record(rec("GET", "/x", 404, 0.04))
    assert '"GET /x" 404 312B 0.0ms' in out.getvalue()
    out.close()
    sink.record(rec("GET", "/y", 200, 1.0))  # the write fails quietly


def test_what_is_logged_is_escaped_and_capped() -> None:
    assert escape("/chat") == "/chat"
    assert escape("/x\nINFO forged\r\x1b[31m\u2028") == "/x\\nINFO forged\\r\\x1b[31m\\u2028"
    assert escape("/é ü") == "/é ü"  # printable text stays as it is
    long = escape("/" + "a" * 5000)
    assert len(long) < 2100 and long.endswith("...(5001 characters)")


async def test_a_path_with_a_newline_is_one_line() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out)
    forged = "/x\n2026-01-01 00:00:00,000 INFO vttrelay.access: GET /admin 200"
    sink.record(rec("GET", forged, 404, 1.0, world="w\nINFO forged"))
    sink.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert '"GET /x\\n2026-01-01 00:00:00,000 INFO vttrelay.access: GET /admin 200" 404' in lines[0]
    assert "world=w\\nINFO forged" in lines[0]


def test_an_error_is_one_escaped_line_and_its_traceback_only_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors = OneLineErrors(logging.getLogger("vttrelay.test.errors"))
    caplog.set_level(logging.INFO, logger="vttrelay.test.errors")
    try:
        raise ValueError("bad header:\n" + "\x01" * 50_000)
    except ValueError as exc:
        errors.exception("Error handling request from %s", "127.0.0.1", exc_info=exc)
    [record] = caplog.records
    text = record.getMessage()
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert "\n" not in text and len(text) < 2500
    assert text.startswith("Error handling request from 127.0.0.1: ValueError: bad header:\\n")
    assert "test_accesslog.py" in text  # where it was raised
    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="vttrelay.test.errors")
    try:
        raise KeyError("k")
    except KeyError:
        errors.exception("failed")
    assert [r.levelno for r in caplog.records] == [logging.ERROR, logging.DEBUG]
    assert caplog.records[1].exc_info is not None
