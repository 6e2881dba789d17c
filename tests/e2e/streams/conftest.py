"""Fixtures for the event stream tests: `sse`, `api_ws` and `sub_counts` (defined, with the
readers they return, in tests/support/streams.py).
"""

from __future__ import annotations

from tests.support.streams import api_ws, sse, sub_counts

__all__ = ["api_ws", "sse", "sub_counts"]
