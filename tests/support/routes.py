"""Route-table helpers for the tests: `route(method, path)` finds an entry of the route table."""

from __future__ import annotations

from vttrelay.relay.routes import ROUTES, Route


def route(method: str, path: str) -> Route:
    """The route table's entry for `method` and `path` (StopIteration if there is none)."""
    return next(r for r in ROUTES if (r.method, r.path) == (method, path))
