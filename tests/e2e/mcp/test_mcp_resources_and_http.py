"""MCP resources (the world, actors, scenes, followed event streams) over both transports, and
what `/mcp` on the relay checks: the API key, sessions bound to the key that opened them, the
log line with the key's name; and GET /api/key, which `vttrelay mcp` reads at start."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from tests.support.e2e import call_api
from tests.support.mcp import OLDER_PROTOCOL, PIP, TRANSPORTS, Demo, open_session

from vttrelay.mcp.tools import TOOLS
from vttrelay.relay.forward import CORS_HEADERS
from vttrelay.relay.routes import DEFAULT_SCOPES

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("transport", TRANSPORTS)
@OLDER_PROTOCOL
async def test_resources_are_readable_and_chat_events_update_a_subscribed_one(
    demo: Demo, transport: str
) -> None:
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    async with open_session(transport, demo.relay.url, demo.agent_key, on_message) as session:
        listed = {str(r.uri): r.name for r in (await session.list_resources()).resources}
        assert listed["vtt://world"] == "world"
        assert listed["vtt://actors/pipMonk000000001"] == "actor: Pip Tealeaf"
        assert listed["vtt://scenes/sceneTavern00001"] == "scene: The Yawning Portal"
        assert {"vtt://events/chat", "vtt://events/rolls"} <= set(listed)
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["vtt://actors/{id}", "vtt://scenes/{id}"]

        async def read(uri: str) -> Any:
            contents = (await session.read_resource(uri)).contents[0]
            return json.loads(contents.text)  # type: ignore[union-attr]

        assert (await read("vtt://world"))["world"] == "vttrelay Demo World"
        pip = await read("vtt://actors/pipMonk000000001")
        assert (pip["uuid"], pip["name"], pip["hp"]) == (PIP, "Pip Tealeaf", "24/24")
        scene = await read("vtt://scenes/sceneTavern00001")
        assert scene["name"] == "The Yawning Portal"
        assert "Pip Tealeaf" in {t["name"] for t in scene["tokens"]}
        assert (await read("vtt://events/chat")) == {"following": False, "events": []}

        await session.subscribe_resource("vtt://events/chat")
        await demo.api("POST", "/chat", {"content": "A goblin appears!", "alias": "DM"})
        for _ in range(200):
            if updates:
                break
            await asyncio.sleep(0.02)
        assert updates == ["vtt://events/chat"]
        events = await read("vtt://events/chat")
        assert events["following"] is True
        seen = [(e["event"], e["data"]["speaker"], e["data"]["text"]) for e in events["events"]]
        assert seen == [("chat-create", "DM", "A goblin appears!")]
        await session.unsubscribe_resource("vtt://events/chat")
        assert (await read("vtt://events/chat"))["following"] is False


async def test_mcp_endpoint_needs_a_valid_key(demo: Demo) -> None:
    body = json.dumps(INIT).encode()
    for key, error in ((None, "API key is required"), ("nope", "Invalid API key")):
        headers = dict(MCP_HEADERS) | ({"x-api-key": key} if key else {})
        answer = await demo.relay.call("POST", "/mcp", data=body, headers=headers)
        assert (answer.status, answer.json()) == (401, {"error": error})


async def test_a_session_belongs_to_the_key_that_opened_it(demo: Demo) -> None:
    body = json.dumps(INIT).encode()
    opened = await demo.relay.call(
        "POST", "/mcp", data=body, headers={**MCP_HEADERS, "x-api-key": demo.agent_key}
    )
    assert opened.status == 200
    assert all(opened.headers[name] == value for name, value in CORS_HEADERS.items())
    session_id = opened.headers["mcp-session-id"]
    other = demo.key(DEFAULT_SCOPES, name="other")
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    headers = {**MCP_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"}
    stolen = await demo.relay.call(
        "POST", "/mcp", data=ping, headers={**headers, "x-api-key": other}
    )
    assert stolen.status == 404
    own = await demo.relay.call(
        "POST", "/mcp", data=ping, headers={**headers, "x-api-key": demo.agent_key}
    )
    assert own.status in (200, 202)


async def test_tool_calls_are_logged_with_the_key_name(
    demo: Demo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vttrelay.mcp")
    async with open_session("http", demo.relay.url, demo.agent_key) as session:
        await session.call_tool("actor_summary", {"actor": PIP})
        await session.call_tool("change_hp", {"actor": PIP, "amount": -1, "dry_run": True})
    lines = [r.getMessage() for r in caplog.records if r.name == "vttrelay.mcp"]
    assert any(line.startswith("tool actor_summary by key 'agent': ok") for line in lines), lines
    assert any(line.startswith("tool change_hp (dry run) by key 'agent': ok") for line in lines), (
        lines
    )


async def test_vttrelay_mcp_logs_each_call_with_the_key_name(demo: Demo, tmp_path: Path) -> None:
    with (tmp_path / "stderr.log").open("w+") as errlog:
        async with open_session("stdio", demo.relay.url, demo.agent_key, errlog=errlog) as session:
            await session.call_tool("roll_check", {"actor": PIP, "kind": "save", "ability": "wis"})
        errlog.seek(0)
        logged = errlog.read()
    assert "MCP server on stdio for" in logged and "key 'agent'" in logged
    assert "vttrelay.mcp: tool roll_check by key 'agent': ok" in logged
    assert "httpx" not in logged  # per-request client lines are off at the default level


async def test_api_key_tells_a_key_what_it_may_do(demo: Demo) -> None:
    key = demo.relay.key(("dnd5e", "chat:read"), name="bot", user_id="playerAria000001")
    status, body = await call_api(demo.relay, key, "GET", "/api/key")
    assert status == 200
    assert {k: body[k] for k in ("name", "scopes", "userId", "clientIds")} == {
        "name": "bot",
        "scopes": ["dnd5e", "chat:read"],
        "userId": "playerAria000001",
        "clientIds": [],
    }
    assert "secret" not in json.dumps(body) and key not in json.dumps(body)
    answer = await demo.relay.call("GET", "/api/key")
    assert (answer.status, answer.json()) == (401, {"error": "API key is required"})


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_2026_client_listens_for_chat_events(demo: Demo, transport: str) -> None:
    """The 2026-07-28 protocol has no resources/subscribe: a `subscriptions/listen` stream names
    the resources; it follows the relay's chat stream while it is open."""
    server: Any
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            server = StdioServerParameters(
                command=sys.executable,
                args=["-m", "vttrelay", "mcp", "--url", demo.relay.url],
                env={**os.environ, "VTTRELAY_API_KEY": demo.agent_key},
            )
        else:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"x-api-key": demo.agent_key}, timeout=30)
            )
            server = streamable_http_client(f"{demo.relay.url}/mcp", http_client=http)
        client = await stack.enter_async_context(Client(server, mode="auto"))
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        tools = await client.list_tools()
        assert len(tools.tools) == len(TOOLS)
        async with client.listen(resource_subscriptions=["vtt://events/chat"]) as sub:
            await demo.api("POST", "/chat", {"content": "Initiative!", "alias": "DM"})
            event = await asyncio.wait_for(anext(aiter(sub)), 10)
            assert event == ResourceUpdated(uri="vtt://events/chat")
        recent = json.loads((await client.read_resource("vtt://events/chat")).contents[0].text)  # type: ignore[union-attr]
        assert recent["events"][0]["text"] == "Initiative!"


async def test_an_open_mcp_stream_does_not_hold_the_relay_at_shutdown(demo: Demo) -> None:
    """A client's standalone GET stream ends when the relay stops (the session manager stops
    first), instead of keeping the relay in its shutdown wait."""
    headers = {**MCP_HEADERS, "x-api-key": demo.agent_key}
    opened = await demo.relay.call("POST", "/mcp", data=json.dumps(INIT).encode(), headers=headers)
    session_headers = {
        "x-api-key": demo.agent_key,
        "accept": "text/event-stream",
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-06-18",
    }
    async with aiohttp.ClientSession() as http:
        stream = await http.get(f"{demo.relay.url}/mcp", headers=session_headers)
        assert stream.status == 200
        started = time.monotonic()
        await demo.relay.stop()
        assert time.monotonic() - started < 1.5  # the test relay would wait 2 s for requests
        with contextlib.suppress(aiohttp.ClientPayloadError):
            await asyncio.wait_for(stream.read(), 2)  # the stream has ended


async def test_vttrelay_mcp_says_why_it_cannot_start(demo: Demo) -> None:
    async def run(url: str, key: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vttrelay", "mcp", "--url", url,
            env={**os.environ, "VTTRELAY_API_KEY": key},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        return proc.returncode or 0, err.decode()

    code, err = await run(demo.relay.url, "not-a-key")
    assert code == 1 and "vttrelay mcp: the relay refused the key: 401: Invalid API key" in err
    code, err = await run("http://127.0.0.1:9", demo.agent_key)
    assert code == 1 and "vttrelay mcp: cannot reach the relay at http://127.0.0.1:9" in err
