"""The buffered request log: the same line `logging` would write, written in batches."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import time

import pytest

from vttrelay.relay.accesslog import (
    ACCESS_LOGGER,
    LOG_FORMAT,
    BufferedAccessLog,
    OneLineErrors,
    escape,
)


@pytest.fixture(autouse=True)
def _access_at_info() -> object:
    logger = logging.getLogger(ACCESS_LOGGER)
    before = logger.level
    logger.setLevel(logging.INFO)
    yield
    logger.setLevel(before)


async def test_line_is_what_logging_writes_and_arrives_after_the_interval() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out, interval=0.02)
    started = time.time()
    sink.line("GET", "/chat", 200, 3.14159)
    sink.line("POST", "/dnd5e/skill-check", 400, 12.05)
    assert out.getvalue() == ""  # buffered
    await asyncio.sleep(0.1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    record = logging.LogRecord(ACCESS_LOGGER, logging.INFO, "", 0, "GET /chat 200 3.1ms", (), None)
    record.created = started
    expected = logging.Formatter(LOG_FORMAT).format(record)
    # the same layout as logging's (timestamp with milliseconds, level, logger name, message)
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert re.fullmatch(stamp + r" INFO vttrelay\.access: GET /chat 200 3\.1ms", lines[0])
    assert lines[0][23:] == expected[23:]
    assert abs(time.mktime(time.strptime(lines[0][:19], "%Y-%m-%d %H:%M:%S")) - started) < 2
    assert lines[1].endswith(" INFO vttrelay.access: POST /dnd5e/skill-check 400 12.1ms")


async def test_a_full_buffer_is_written_at_once_in_one_write() -> None:
    writes: list[str] = []

    class Stream(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

    sink = BufferedAccessLog(Stream(), interval=60, max_bytes=1000)
    for _ in range(20):  # 69 bytes a line: the 15th line fills the buffer
        sink.line("GET", "/players", 200, 1.0)
    assert len(writes) == 1 and writes[0].count("\n") == 15
    sink.close()
    assert len(writes) == 2 and writes[1].count("\n") == 5


async def test_close_flushes_and_the_level_turns_lines_off() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out, interval=60)
    sink.line("GET", "/a", 200, 1.0)
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.WARNING)
    sink.line("GET", "/b", 200, 1.0)
    sink.close()
    assert out.getvalue().endswith("GET /a 200 1.0ms\n") and "/b" not in out.getvalue()


def test_without_a_loop_lines_are_written_at_once_and_a_closed_stream_is_harmless() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out)
    sink.line("GET", "/x", 404, 0.04)
    assert out.getvalue().endswith("GET /x 404 0.0ms\n")
    out.close()
    sink.line("GET", "/y", 200, 1.0)  # the write fails quietly


def test_what_is_logged_is_escaped_and_capped() -> None:
    assert escape("/chat") == "/chat"
    assert escape("/x\nINFO forged\r\x1b[31m\u2028") == "/x\\nINFO forged\\r\\x1b[31m\\u2028"
    assert escape("/é ü") == "/é ü"  # printable text stays as it is
    long = escape("/" + "a" * 5000)
    assert len(long) < 2100 and long.endswith("...(5001 characters)")


async def test_a_path_with_a_newline_is_one_line() -> None:
    out = io.StringIO()
    sink = BufferedAccessLog(out)
    sink.line("GET", "/x\n2026-01-01 00:00:00,000 INFO vttrelay.access: GET /admin 200", 404, 1.0)
    sink.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "/x\\n2026-01-01 00:00:00,000 INFO vttrelay.access: GET /admin 200 404 1.0ms"
    )


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
