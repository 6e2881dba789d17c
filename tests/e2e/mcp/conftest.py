"""Fixtures for the MCP server tests: `demo` (the relay with the demo world connected), defined
with the MCP client helpers in tests/support/mcp.py.
"""

from __future__ import annotations

from tests.support.mcp import demo

__all__ = ["demo"]
