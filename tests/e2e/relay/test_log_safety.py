"""What a request can make the relay log (issue 9, low): a path with an encoded newline can't forge
request-log lines, and a bad request or a failing handler writes one escaped line, not a
traceback with the request's bytes in it."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import pytest

from vttrelay.relay import handlers as relay_handlers
from vttrelay.relay.accesslog import ACCESS_LOGGER


async def _raw(relay: Any, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    writer.write(data)
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


async def test_an_encoded_newline_in_the_path_is_one_escaped_line(
    relay: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    forged = "/x%0D%0A2026-01-01%2000:00:00,000%20INFO%20vttrelay.access:%20GET%20/admin%20200"
    answer = await _raw(
        relay, f"GET {forged} HTTP/1.1\r\nHost: r\r\nConnection: close\r\n\r\n".encode()
    )
    assert answer.startswith(b"HTTP/1.1 404")
    [line] = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER]
    assert "\n" not in line and "\r" not in line
    assert line.startswith(
        '127.0.0.1 "GET /x\\r\\n2026-01-01 00:00:00,000 INFO vttrelay.access: GET /admin'
    )


async def test_a_malformed_request_is_one_short_line(
    relay: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bad = b"GET /a HTTP/1.1\r\nHost: r\r\nX-Bad: " + b"\x01" * 8000 + b"\r\n\r\n"
    answer = await _raw(relay, bad)
    assert answer.split(b"\r\n")[0].endswith(b" 400 Bad Request")
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert len(records) == 1, [r.getMessage()[:200] for r in records]
    [record] = records
    assert record.exc_info is None and "Traceback" not in record.getMessage()
    assert "\n" not in record.getMessage() and len(record.getMessage()) < 2500


async def test_a_failing_handler_answers_500_json_and_logs_one_line(
    relay_factory: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_: Any) -> Any:
        raise RuntimeError("boom\n" + "x" * 100_000)

    monkeypatch.setitem(relay_handlers.HANDLERS, "health", broken)
    relay = await relay_factory()
    caplog.set_level(logging.INFO)
    answer = await relay.call("GET", "/api/health")
    assert (answer.status, answer.json()) == (500, {"error": "Internal server error"})
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and errors[0].exc_info is None
    message = errors[0].getMessage()
    failed = re.match(r"GET /api/health failed \((r\d+_\w{8})\): RuntimeError: boom\\n", message)
    assert failed, message
    assert len(message) < 2500
    access = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER]
    # the access line names the same request id as the error line
    assert access and access[-1].startswith('127.0.0.1 "GET /api/health" 500 ')
    assert access[-1].endswith(f" id={failed.group(1)}")
