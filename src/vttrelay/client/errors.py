"""The SDK's errors: one class per kind of refusal, each carrying the HTTP status and the
relay's documented JSON body (`{"error": "<text>", ...}`).

    VttRelayError              any status but 2xx (`.status`, `.body`, `.message`, `.headers`)
    ├── ConnectionFailed       no answer: the relay is down or unreachable, the connection broke,
    │                          or no reply within the client's timeout (`.status` 0)
    ├── BadRequest             400 (and 413: a value or body too large)
    ├── AuthError              401 (no key, unknown key) and 403 (missing scope, other world)
    ├── NotFound               404 (no such world, or nothing at that path)
    ├── Timeout                408 (the world did not answer within the route's timeout)
    ├── RateLimited            429 (`.retry_after`: seconds the relay asks us to wait)
    └── WorldUnavailable       503 (the world went away, or the relay is at its connection limit)

A world's own refusal (`{"error": "Invalid skill 'xyz'"}`, answered 400) is a `BadRequest` with
the world's reply as its body, byte for byte parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class VttRelayError(Exception):
    """The relay answered with a status other than 2xx."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers: Mapping[str, str] = headers or {}
        super().__init__(f"{status}: {self.message}")

    @property
    def message(self) -> str:
        """The body's `error` text (or the whole body when it has none)."""
        if isinstance(self.body, dict) and "error" in self.body:
            return str(self.body["error"])
        return str(self.body)

    @property
    def retry_after(self) -> float | None:
        """The `Retry-After` header in seconds, when the relay sent one."""
        value = self.headers.get("retry-after")
        try:
            return max(0.0, float(value)) if value is not None else None
        except ValueError:
            return None


class ConnectionFailed(VttRelayError):
    """The relay gave no answer: it is down or unreachable (refused, DNS, TLS), the connection
    broke, or no reply came within the client's `timeout`. `status` is 0 and `message` says
    what failed; the httpx exception is the `__cause__`. A call whose connection broke after it
    was sent may still have happened."""

    def __init__(self, reason: str) -> None:
        super().__init__(0, {"error": reason})


def connection_failed(url: object, exc: Exception) -> ConnectionFailed:
    """The `ConnectionFailed` for an httpx transport error of a call to `url`."""
    detail = str(exc) or type(exc).__name__
    return ConnectionFailed(f"No answer from the relay at {url}: {detail}")


class BadRequest(VttRelayError):
    """400: a parameter is missing or invalid, or the world refused the call; 413: too large."""


class AuthError(VttRelayError):
    """401: no key, unknown, disabled or expired key; 403: the key lacks a scope or a world."""


class NotFound(VttRelayError):
    """404: the world is not connected (`Invalid client ID`), or nothing at that path."""


class Timeout(VttRelayError):
    """408: the world did not answer in time (the call may still have happened)."""


class RateLimited(VttRelayError):
    """429: too many requests for this key; `retry_after` says how long to wait."""


class WorldUnavailable(VttRelayError):
    """503: the world disconnected before replying, or the relay refused the connection."""


_BY_STATUS: dict[int, type[VttRelayError]] = {
    400: BadRequest,
    413: BadRequest,
    401: AuthError,
    403: AuthError,
    404: NotFound,
    408: Timeout,
    429: RateLimited,
    503: WorldUnavailable,
}


def error_for(status: int, body: Any, headers: Mapping[str, str] | None = None) -> VttRelayError:
    """The exception for a refused call (`VttRelayError` itself for undocumented statuses)."""
    return _BY_STATUS.get(status, VttRelayError)(status, body, headers)
