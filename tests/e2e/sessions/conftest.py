"""Fixtures of the session tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from bench.procs import free_port


@pytest.fixture
async def foundry_port() -> AsyncIterator[int]:
    """A port for the fake Foundry server (it needs the relay's URL: the test starts it)."""
    yield free_port()
