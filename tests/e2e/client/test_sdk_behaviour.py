"""The typed SDK over a real relay and the embedded world: typed groups, the error hierarchy,
retries that honour the relay's Retry-After, and streams resumed with Last-Event-ID."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from tests.support.e2e import CLIENT_ID

from vttrelay.client import (
    AsyncClient,
    AuthError,
    BadRequest,
    Client,
    NotFound,
    RateLimited,
    StreamEvent,
    Timeout,
    VttRelayError,
    WorldUnavailable,
)
from vttrelay.client.types import ChatEventData, ChatMessage, Gap, StreamError, conforms
from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES

PIP = "Actor.pipMonk000000001"
WORLD_INFO_RATE = "Too many API requests, please slow down"


@pytest.fixture
async def demo(relay: Any, start_world: Any) -> tuple[Any, str]:
    await start_world(relay)
    return relay, relay.key(ALL_SCOPES, rate_per_minute=0)


async def test_groups_send_snake_case_arguments_under_their_wire_names(demo: Any) -> None:
    relay, key = demo
    async with AsyncClient(relay.url, key, client_id=CLIENT_ID) as sdk:
        check = await sdk.dnd5e.skill_check(PIP, "ste", advantage=True, create_chat_message=False)
        data = check["data"]
        assert data["skill"] == "ste" and data["formula"].startswith("2d20kh")
        sent = await sdk.chat.send("Roll for initiative!", alias="Narrator")
        page = await sdk.chat.messages(limit=1)
        assert page["data"]["messages"][0]["id"] == sent["data"]["id"]
        assert page["data"]["messages"][0]["speaker"].get("alias") == "Narrator"
        pip = await sdk.entities.get(uuid=PIP)
        assert pip["data"]["name"] == "Pip Tealeaf"
        details = await sdk.dnd5e.get_actor_details(PIP, ["stats"])
        assert details["data"]["stats"]["name"] == "Pip Tealeaf"  # a JSON array in the query

    def sync_calls() -> Any:
        with Client(relay.url, key) as sdk:
            rolled = sdk.rolls.roll("4d6kh3", create_chat_message=False)
            return rolled, sdk.rolls.last()

    rolled, last = await asyncio.to_thread(sync_calls)
    dice = rolled["data"]["roll"]["dice"][0]["results"]
    assert len(dice) == 4 and sum(not d["active"] for d in dice) == 1  # the dropped die
    assert last["data"]["id"] == rolled["data"]["id"]


async def test_refusals_raise_their_class_with_status_and_documented_body(demo: Any) -> None:
    relay, key = demo
    async with AsyncClient(relay.url, key) as sdk:
        with pytest.raises(BadRequest) as invalid:
            await sdk.dnd5e.skill_check(PIP, "xyz")  # type: ignore[arg-type] # what types forbid
        assert invalid.value.status == 400
        assert invalid.value.body["type"] == "skill-check-result"  # the world's own reply
        assert invalid.value.message.startswith("Invalid skill 'xyz'")
        with pytest.raises(BadRequest) as missing:
            await sdk.call("modify-experience", actorUuid=PIP)
        assert missing.value.body == {"error": "'amount' is required"}
        with pytest.raises(NotFound) as unknown_world:
            await sdk.utility.world_info(client_id="no-such-world")
        assert (unknown_world.value.status, unknown_world.value.message) == (
            404,
            "Invalid client ID",
        )
    async with AsyncClient(relay.url, "not-a-key") as stranger:
        with pytest.raises(AuthError) as refused:
            await stranger.utility.players()
        assert (refused.value.status, refused.value.body) == (401, {"error": "Invalid API key"})
    async with AsyncClient(relay.url, relay.key(("chat:read",))) as reader:
        with pytest.raises(AuthError) as scope:
            await reader.dnd5e.skill_check(PIP, "ste")
        assert (scope.value.status, scope.value.message) == (
            403,
            "API key lacks required scope: dnd5e",
        )
        assert isinstance(scope.value, VttRelayError)


def _recorder(statuses: list[int]) -> dict[str, Any]:
    async def record(response: httpx.Response) -> None:
        statuses.append(response.status_code)

    return {"event_hooks": {"response": [record]}}


async def test_a_rate_limited_call_waits_retry_after_then_succeeds(demo: Any) -> None:
    relay, _ = demo
    key = relay.key(DEFAULT_SCOPES, rate_per_minute=30)  # Retry-After: 2 s once spent
    async with AsyncClient(relay.url, key, retries=0) as impatient:
        for _ in range(100):  # spend the burst
            try:
                await impatient.utility.players()
            except RateLimited as exc:
                assert exc.status == 429 and exc.body == {"error": WORLD_INFO_RATE}
                assert exc.retry_after == 2.0
                break
        else:
            raise AssertionError("never rate limited")
    statuses: list[int] = []
    async with AsyncClient(relay.url, key, **_recorder(statuses)) as patient:
        started = time.monotonic()
        players = await patient.utility.players()
        waited = time.monotonic() - started
    assert players["type"] == "players-result"
    assert statuses == [429, 200]
    assert 1.9 <= waited < 6  # Retry-After honoured, not a blind backoff


async def test_retries_are_bounded(demo: Any) -> None:
    relay, _ = demo
    key = relay.key(DEFAULT_SCOPES, rate_per_minute=1)  # Retry-After: 60 s
    statuses: list[int] = []
    async with AsyncClient(
        relay.url, key, retries=2, max_retry_wait=0.05, **_recorder(statuses)
    ) as sdk:
        await sdk.utility.players()
        with pytest.raises(RateLimited) as limited:
            await sdk.chat.send("not sent: the key is out of calls")
    assert statuses == [200, 429, 429, 429]  # the first try and two retries, a POST included
    assert limited.value.retry_after == 60.0


async def _next(events: Any, timeout: float = 5.0) -> StreamEvent[ChatEventData]:
    event: StreamEvent[ChatEventData] = await asyncio.wait_for(anext(events), timeout)
    return event


async def test_a_stream_resumes_after_its_last_event_id(demo: Any) -> None:
    relay, key = demo
    async with AsyncClient(relay.url, key) as sdk:
        events = sdk.streams.chat(client_id=CLIENT_ID)
        assert (await _next(events)).event == "connected"
        await sdk.chat.send("one")
        first = await _next(events)
        await events.aclose()  # the bot goes away...
        await sdk.chat.send("two")  # ...and misses these
        await sdk.chat.send("three")

        resumed = sdk.streams.chat(client_id=CLIENT_ID, last_event_id=first.id)
        seen = [await _next(resumed) for _ in range(3)]
        await resumed.aclose()
    created = [e for e in seen if e.event == "chat-create"]
    assert [e.data["content"] for e in created] == ["two", "three"]  # type: ignore[typeddict-item]
    for event in created:
        assert conforms(event.data, ChatMessage) == []
    assert len({first.id, *(e.id for e in created)}) == 3

    def sync_resume() -> list[Any]:
        with Client(relay.url, key) as sync:
            stream = sync.streams.chat(client_id=CLIENT_ID, last_event_id=first.id)
            got = [next(stream) for _ in range(3)]
            stream.close()
            return got

    again = await asyncio.to_thread(sync_resume)
    assert [e.data["content"] for e in again if e.event == "chat-create"] == ["two", "three"]


async def test_a_world_that_does_not_answer_or_leaves_raises_timeout_or_unavailable(
    relay_factory: Any,
) -> None:
    relay = await relay_factory(timeout_override=0.3)
    silent = await relay.world("silent", handler=lambda frame: None)
    key = relay.key(ALL_SCOPES)
    statuses: list[int] = []
    async with AsyncClient(relay.url, key, **_recorder(statuses)) as sdk:
        with pytest.raises(Timeout) as late:
            await sdk.utility.world_info(client_id="silent")
        assert (late.value.status, late.value.body) == (408, {"error": "Request timed out"})
        await silent.close()

        async def leave(frame: dict[str, Any]) -> None:
            await leaving.close()  # goes away instead of answering

        leaving = await relay.world("leaving", handler=leave)
        statuses.clear()
        with pytest.raises(WorldUnavailable) as gone:
            await sdk.chat.send("lost", client_id="leaving")
        assert gone.value.body == {"error": "World disconnected before replying"}
        assert statuses == [503]  # a change is not retried: it may have happened
    assert gone.value.retry_after is None


async def test_a_read_is_retried_when_its_world_leaves_and_comes_back(relay_factory: Any) -> None:
    relay = await relay_factory()

    async def leave_and_return(frame: dict[str, Any]) -> None:
        await first.close()
        await relay.world("flaky")  # back at once; the default handler answers

    first = await relay.world("flaky", handler=leave_and_return)
    statuses: list[int] = []
    async with AsyncClient(relay.url, relay.key(ALL_SCOPES), **_recorder(statuses)) as sdk:
        info = await sdk.utility.world_info(client_id="flaky")
    assert statuses == [503, 200]  # the GET was sent again after a backoff
    assert info["type"] == "world-info-result"


async def test_a_stream_outlives_a_relay_restart_and_reconnects_with_last_event_id(
    relay_factory: Any, start_world: Any, tmp_path: Any
) -> None:
    data = tmp_path / "relay-data"
    first = await relay_factory(data_dir=data)
    await start_world(first)  # reconnects by itself when the relay comes back
    key = first.key(ALL_SCOPES, rate_per_minute=0)
    asked: list[str | None] = []

    async def record(request: httpx.Request) -> None:
        if request.url.path == "/chat/subscribe":
            asked.append(request.headers.get("last-event-id"))

    async with AsyncClient(first.url, key, event_hooks={"request": [record]}) as sdk:
        events = sdk.streams.chat(client_id=CLIENT_ID)
        assert (await _next(events)).event == "connected"
        await sdk.chat.send("before the restart")
        before = await _next(events)
        assert before.event == "chat-create"

        await first.stop()
        await relay_factory(data_dir=data, port=first.port)
        again = await _next(events, timeout=20)  # reconnected after a backoff
        assert again.event == "connected"
        gap = await _next(events)  # the new relay never had the events before its start
        assert gap.event == "gap" and conforms(gap.data, Gap) == []
        await sdk.chat.send("after the restart")
        after = await _next(events)
        await events.aclose()
    assert after.event == "chat-create"
    assert after.data["content"] == "after the restart"  # type: ignore[typeddict-item]
    assert asked[0] is None and asked[-1] == before.id  # the reopened stream asked to resume


async def test_a_stream_the_relay_keeps_refusing_ends_after_its_reconnects(
    relay_factory: Any, start_world: Any
) -> None:
    relay = await relay_factory(max_streams_per_channel=1)
    await start_world(relay)
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    async with AsyncClient(relay.url, key) as sdk:
        holding = sdk.streams.chat(client_id=CLIENT_ID)
        assert (await _next(holding)).event == "connected"
        refused = sdk.streams.chat(client_id=CLIENT_ID, reconnects=1)
        seen = [event async for event in refused]  # ends: no retry loop without progress
        await holding.aclose()
    errors = [e for e in seen if e.event == "error"]
    assert len(errors) == 2  # the first try and one reconnect
    assert errors[0].data == {"error": "Too many SSE connections"}
    assert conforms(errors[0].data, StreamError) == []
