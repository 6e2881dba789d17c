"""The Python client against a real relay and the real embedded world, over real sockets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID

from vttrelay.client import AsyncClient, Client, RelayError
from vttrelay.relay.routes import DEFAULT_SCOPES

PIP = "Actor.pipMonk000000001"


@pytest.fixture
async def demo(relay: Any, start_world: Any) -> tuple[Any, str]:
    """The relay with the embedded demo world connected, and a key for it."""
    await start_world(relay)
    return relay, relay.key(scopes=(*DEFAULT_SCOPES, "chat:write"))


async def test_async_client_calls_places_parameters_and_raises_errors(demo: Any) -> None:
    relay, key = demo
    async with AsyncClient(relay.url, key) as client:
        details = await client.call("get-actor-details", actorUuid=PIP, details=["stats"])
        assert details["data"]["stats"]["name"] == "Pip Tealeaf"
        check = await client.call(
            "skill-check", actorUuid=PIP, skill="ste", createChatMessage=False
        )
        assert check["type"] == "skill-check-result"
        assert check["data"]["formula"].startswith("1d20")

        with pytest.raises(RelayError) as bad:
            await client.call("skill-check", actorUuid=PIP, skill="xyz")
        assert bad.value.status == 400
        assert bad.value.body["error"].startswith("Invalid skill 'xyz'")
        with pytest.raises(RelayError) as missing:
            await client.call("modify-experience", actorUuid=PIP)
        assert (missing.value.status, missing.value.body) == (
            400,
            {"error": "'amount' is required"},
        )

    async with AsyncClient(relay.url, "not-a-key") as stranger:
        with pytest.raises(RelayError) as refused:
            await stranger.call("players")
        assert (refused.value.status, refused.value.body) == (401, {"error": "Invalid API key"})


async def test_async_client_streams_chat_events(demo: Any) -> None:
    relay, key = demo
    async with AsyncClient(relay.url, key) as client:
        events = client.subscribe("/chat/subscribe", clientId=CLIENT_ID)
        first = await anext(events)
        assert (first.event, first.data) == ("connected", {"clientId": CLIENT_ID})
        await client.call("chat-send", content="Roll for initiative!", alias="Narrator")
        created = await asyncio.wait_for(anext(events), 5)
        assert created.event == "chat-create"
        assert created.data["content"] == "Roll for initiative!"
        assert created.data["speaker"]["alias"] == "Narrator"
        assert created.id
        await events.aclose()


async def test_sync_client_from_a_thread(demo: Any) -> None:
    relay, key = demo

    def use_sync_client() -> tuple[Any, Any]:
        with Client(relay.url, key) as client:
            sent = client.call("POST /chat", content="hello from the sync client")
            listed = client.call("GET /chat", limit=1)
            return sent, listed

    sent, listed = await asyncio.to_thread(use_sync_client)
    assert sent["success"] is True
    assert listed["data"]["limit"] == 1
    assert listed["data"]["messages"][0]["id"] == sent["data"]["id"]


async def test_sync_client_streams_from_a_thread(demo: Any) -> None:
    relay, key = demo
    opened = asyncio.Event()
    loop = asyncio.get_running_loop()

    def listen() -> list[Any]:
        seen = []
        with Client(relay.url, key) as client:
            for event in client.subscribe("/chat/subscribe", clientId=CLIENT_ID):
                seen.append(event)
                if event.event == "connected":
                    loop.call_soon_threadsafe(opened.set)
                if len(seen) == 2:
                    break
        return seen

    listener = asyncio.create_task(asyncio.to_thread(listen))
    await asyncio.wait_for(opened.wait(), 5)
    async with AsyncClient(relay.url, key) as client:
        await client.call("chat-send", content="seen by the sync stream")
    connected, created = await asyncio.wait_for(listener, 5)
    assert connected.event == "connected"
    assert (created.event, created.data["content"]) == ("chat-create", "seen by the sync stream")
