"""Fixtures of the dashboard tests: `signin` (a signed-in browser-like HTTP session) and
`browser` (Debian's chromium through Playwright), defined with their helpers in
tests/support/dashboard.py.
"""

from __future__ import annotations

from tests.support.dashboard import browser, signin

__all__ = ["browser", "signin"]
