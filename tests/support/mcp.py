"""Helpers and fixtures of the MCP server tests (the fixture `demo` offered by
tests/e2e/mcp/conftest.py): the embedded demo world on a real relay, and MCP client
sessions (the `mcp` SDK's own client) over stdio (`vttrelay mcp` spawned as a process) and over
streamable HTTP (the relay's `/mcp`).

- `demo` -> `Demo`: the relay with the demo world connected; `.key(scopes, name)` makes a key,
  `.agent_key` has every scope a tool needs (named "agent"), `.api(method, path, json, **query)`
  calls the REST API with it, `.snapshot()` reads what the changing tools could touch.
- `call(session, tool, **args)`: a tool's JSON answer (its structured content checked against
  it), failing the test on a tool error; `refused(session, tool, **args)`: a tool error's text.
- `OLDER_PROTOCOL`: marks a test that subscribes the older protocols' way (`resources/subscribe`).
- `open_session(transport, relay_url, key, on_message=None, errlog=sys.stderr,
  client_id=None)`: an async context manager yielding an initialized `ClientSession` over
  "stdio" (the process's stderr goes to `errlog`; `--client-id`) or "http" (`?clientId=`).
  Entered inside each test (the SDK's anyio task groups must be left by the task that entered
  them).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TextIO

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from tests.support.e2e import call_api

from vttrelay.mcp.tools import TOOLS
from vttrelay.relay.routes import DEFAULT_SCOPES

TRANSPORTS = ("stdio", "http")
# For the tests that speak the handshake protocol versions on purpose (clients of those still
# exist): the SDK's client deprecates `resources/subscribe` for the 2026-07-28 protocol only,
# whose `subscriptions/listen` has its own test.
OLDER_PROTOCOL = pytest.mark.filterwarnings(
    "ignore:resources/(un)?subscribe is removed as of 2026-07-28"
)
AGENT_SCOPES = tuple(
    sorted(
        {s for t in TOOLS for s in t.scopes}
        | set(DEFAULT_SCOPES)
        | {"events:subscribe", "clients:read", "roll:read", "entity:read"}
    )
)
PIP = "Actor.pipMonk000000001"
ELARA = "Actor.elaraWizard00001"


@dataclass
class Demo:
    relay: Any
    agent_key: str

    def key(self, scopes: tuple[str, ...], name: str = "") -> str:
        return str(self.relay.key(scopes, name=name, rate_per_minute=0))

    async def api(self, method: str, path: str, json: Any = None, **query: Any) -> Any:
        status, body = await call_api(self.relay, self.agent_key, method, path, json, **query)
        assert status == 200, (method, path, status, body)
        return body

    async def snapshot(self) -> dict[str, Any]:
        """Everything a changing tool could change: both actors' full documents, the chat and
        roll logs, encounters, the tokens."""
        return {
            "pip": (await self.api("GET", "/get", uuid=PIP))["data"],
            "elara": (await self.api("GET", "/get", uuid=ELARA))["data"],
            "chat": (await self.api("GET", "/chat", limit=50))["data"],
            "rolls": (await self.api("GET", "/rolls", limit=50)).get("data"),
            "encounters": (await self.api("GET", "/encounters"))["encounters"],
            "tokens": (await self.api("GET", "/canvas/tokens"))["data"],
        }


@pytest.fixture
async def demo(relay: Any, start_world: Any) -> Demo:
    await start_world(relay)
    return Demo(relay, str(relay.key(AGENT_SCOPES, name="agent", rate_per_minute=0)))


OnMessage = Callable[[Any], Awaitable[None]]


@contextlib.asynccontextmanager
async def open_session(
    transport: str,
    relay_url: str,
    key: str,
    on_message: OnMessage | None = None,
    errlog: TextIO = sys.stderr,
    client_id: str | None = None,
) -> AsyncIterator[ClientSession]:
    extra: dict[str, Any] = {"message_handler": on_message} if on_message else {}
    if transport == "stdio":
        world = ["--client-id", client_id] if client_id else []
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "vttrelay", "mcp", "--url", relay_url, *world],
            env={**os.environ, "VTTRELAY_API_KEY": key},
        )
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **extra) as session,
        ):
            await session.initialize()
            yield session
    else:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}, timeout=30) as http,
            streamable_http_client(
                f"{relay_url}/mcp" + (f"?clientId={client_id}" if client_id else ""),
                http_client=http,
            ) as (read, write),
            ClientSession(read, write, **extra) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, /, **args: Any) -> Any:
    """One tool call's JSON answer; fails the test on a tool error."""
    result = await session.call_tool(name, args)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, f"{name}: {text}"
    answer = json.loads(text)
    assert result.structured_content == (answer if isinstance(answer, dict) else {"result": answer})
    return answer


async def refused(session: ClientSession, name: str, /, **args: Any) -> str:
    """A tool error's text; fails the test if the call succeeded."""
    result = await session.call_tool(name, args)
    assert result.is_error, f"{name} should have failed"
    return str(result.content[0].text)  # type: ignore[union-attr]
