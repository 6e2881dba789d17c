"""MCP sessions are capped per key, in total and in rate (issue 20 item 7): one key with only
`world:info` can no longer fill the relay's session table and lock every other account out."""

from __future__ import annotations

import json
from typing import Any

from vttrelay.mcp.aiohttp_asgi import TOO_MANY_SESSIONS

from .test_mcp_resources_and_http import INIT as INITIALIZE
from .test_mcp_resources_and_http import MCP_HEADERS as HEADERS

INIT = json.dumps(INITIALIZE).encode()


async def _open(relay: Any, key: str) -> tuple[int, Any, str]:
    """Open one MCP session with `key`: (status, JSON error or None, session id)."""
    got = await relay.call("POST", "/mcp", data=INIT, headers={**HEADERS, "x-api-key": key})
    error = (
        got.json() if got.headers.get("content-type", "").startswith("application/json") else None
    )
    return got.status, error, got.headers.get("mcp-session-id", "")


async def test_sessions_are_capped_per_key_and_in_total(relay_factory: Any) -> None:
    relay = await relay_factory(
        mcp_max_sessions=5, mcp_sessions_per_key=3, mcp_sessions_per_minute=0
    )
    greedy = relay.key(("world:info",), rate_per_minute=0)
    opened = [await _open(relay, greedy) for _ in range(3)]
    assert [status for status, _, _ in opened] == [200] * 3
    assert await _open(relay, greedy) == (429, {"error": TOO_MANY_SESSIONS}, "")
    other = relay.key(("world:info",), account="other", rate_per_minute=0)
    assert [(await _open(relay, other))[0] for _ in range(2)] == [200, 200]
    third = relay.key(("world:info",), account="third", rate_per_minute=0)
    status, _, _ = await _open(relay, third)
    assert status == 503  # the table is full: the SDK's "Too many open sessions"
    # a session the greedy key ends makes room for it again
    session = opened[0][2]
    headers = {**HEADERS, "x-api-key": greedy, "mcp-session-id": session}
    ended = await relay.call("DELETE", "/mcp", headers=headers)
    assert ended.status == 200
    assert (await _open(relay, greedy))[0] == 200


async def test_new_sessions_are_rate_limited_per_key(relay_factory: Any) -> None:
    relay = await relay_factory(
        mcp_max_sessions=100, mcp_sessions_per_key=100, mcp_sessions_per_minute=2
    )
    key = relay.key(("world:info",), rate_per_minute=0)
    assert [(await _open(relay, key))[0] for _ in range(2)] == [200, 200]
    assert await _open(relay, key) == (429, {"error": TOO_MANY_SESSIONS}, "")
    other = relay.key(("world:info",), rate_per_minute=0)
    assert (await _open(relay, other))[0] == 200


async def test_sessions_are_capped_per_account_over_its_keys(relay_factory: Any) -> None:
    relay = await relay_factory(
        mcp_max_sessions=100,
        mcp_sessions_per_key=3,
        mcp_sessions_per_account=4,
        mcp_sessions_per_minute=0,
    )
    first, second = (relay.key(("world:info",), account="many", rate_per_minute=0) for _ in "ab")
    assert [(await _open(relay, first))[0] for _ in range(3)] == [200] * 3
    assert (await _open(relay, second))[0] == 200
    assert await _open(relay, second) == (429, {"error": TOO_MANY_SESSIONS}, "")
    elsewhere = relay.key(("world:info",), account="other", rate_per_minute=0)
    assert (await _open(relay, elsewhere))[0] == 200
