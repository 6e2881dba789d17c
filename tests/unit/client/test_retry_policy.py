"""When the SDK retries a refused call (http.retry_wait) and which exception a status raises."""

from __future__ import annotations

from vttrelay.client import errors
from vttrelay.client.http import retry_wait


def test_retry_after_is_honoured_for_any_method_and_capped() -> None:
    assert retry_wait(429, {"retry-after": "2"}, "POST", 0, 60.0) == 2.0
    assert retry_wait(503, {"retry-after": "1"}, "DELETE", 0, 60.0) == 1.0
    assert retry_wait(429, {"retry-after": "600"}, "GET", 0, 30.0) == 30.0


def test_a_503_without_retry_after_is_retried_only_for_reads() -> None:
    # The world went away mid-call: a change may already have happened, a read is safe again.
    assert retry_wait(503, {}, "GET", 0, 60.0) == 0.5
    assert retry_wait(503, {}, "GET", 3, 60.0) == 4.0
    assert retry_wait(503, {}, "GET", 10, 5.0) == 5.0
    assert retry_wait(503, {}, "POST", 0, 60.0) is None


def test_other_statuses_are_not_retried() -> None:
    for status in (400, 401, 403, 404, 408, 413, 500):
        assert retry_wait(status, {"retry-after": "1"}, "GET", 0, 60.0) is None


def test_each_status_has_its_exception() -> None:
    body = {"error": "x"}
    expected = {
        400: errors.BadRequest,
        413: errors.BadRequest,
        401: errors.AuthError,
        403: errors.AuthError,
        404: errors.NotFound,
        408: errors.Timeout,
        429: errors.RateLimited,
        503: errors.WorldUnavailable,
        500: errors.VttRelayError,
    }
    for status, kind in expected.items():
        exc = errors.error_for(status, body, {"retry-after": "3"})
        assert type(exc) is kind and (exc.status, exc.body, exc.message) == (status, body, "x")
        assert exc.retry_after == 3.0
    assert errors.error_for(500, "plain text").message == "plain text"
    assert errors.error_for(429, {}, {"retry-after": "soon"}).retry_after is None
