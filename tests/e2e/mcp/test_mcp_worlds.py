"""A key over two worlds (issue 24): an agent's session lists the key's worlds, chooses one and
plays there; a tool called before any choice says so and lists the worlds instead of the relay's
raw `Multiple clients connected`; `vttrelay mcp --client-id` and `/mcp?clientId=` name the world
up front. Two embedded worlds on a real relay, through the `mcp` SDK's client over stdio and over
`/mcp`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from tests.support.e2e import CLIENT_ID, call_api
from tests.support.mcp import AGENT_SCOPES, OLDER_PROTOCOL, TRANSPORTS, call, open_session, refused

from vttrelay.world.actions.table import standard_table
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World

SECOND = "second-table"  # the second world's client id
SECOND_TITLE = "The Second Table"


def retitle(data_dir: Path, world_id: str, title: str) -> None:
    """Make the world in `data_dir` (seeded with the demo world) another world: its id and title."""
    world = World.open(data_dir, actions=standard_table())
    try:
        with world.store.transaction() as tx:
            meta = dict(documents.world_meta(tx))
            meta["world"] = {**(meta.get("world") or {}), "id": world_id, "title": title}
            documents.set_setting(tx, documents.SETTING_WORLD, meta)
    finally:
        world.close()


@pytest.fixture
async def two_worlds(relay: Any, start_world: Any, tmp_path: Path) -> str:
    """The demo world and a second one on the same account; a key over both (no world bound)."""
    await start_world(relay)
    second = tmp_path / "second-world"
    retitle(second, SECOND, SECOND_TITLE)
    await start_world(relay, data_dir=second, client_id=SECOND)
    return str(relay.key(AGENT_SCOPES, name="agent", rate_per_minute=0))


WORLDS = [
    {"id": SECOND, "name": SECOND_TITLE, "system": "dnd5e", "online": True},
    {"id": CLIENT_ID, "name": "vttrelay Demo World", "system": "dnd5e", "online": True},
]
LISTED = (
    f"'{SECOND_TITLE}' (id {SECOND}, dnd5e, online); "
    f"'vttrelay Demo World' (id {CLIENT_ID}, dnd5e, online)"
)


async def chat_of(relay: Any, key: str, client_id: str) -> list[str]:
    status, body = await call_api(relay, key, "GET", "/chat", clientId=client_id, limit=5)
    assert status == 200, body
    return [m.get("content") for m in body["data"]["messages"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_agent_chooses_one_of_the_keys_two_worlds(
    relay: Any, two_worlds: str, transport: str
) -> None:
    async with open_session(transport, relay.url, two_worlds) as session:
        # Nothing chosen: a tool says so and lists the worlds (not the relay's raw refusal).
        unchosen = await refused(session, "world_overview")
        assert unchosen == (
            "This API key reaches several worlds and this session has not chosen one: call "
            "choose_world with one of them (or start `vttrelay mcp --client-id ID`, or connect "
            f"to /mcp?clientId=ID). The worlds: {LISTED}"
        )
        assert "Multiple clients connected" not in unchosen
        listed = await call(session, "worlds")
        assert listed == {"worlds": WORLDS, "chosen": None}

        wrong = await refused(session, "choose_world", world="Third Table")
        assert wrong == f"No world 'Third Table' for this key; its worlds: {LISTED}"

        chosen = await call(session, "choose_world", world="the second table")  # any case
        assert chosen == {
            "chosen": WORLDS[0],
            "summary": f"This session now plays in '{SECOND_TITLE}' (id {SECOND}).",
        }
        assert (await call(session, "worlds"))["chosen"] == SECOND
        overview = await call(session, "world_overview")
        assert (overview["world"], overview["worldId"]) == (SECOND_TITLE, SECOND)
        await call(session, "send_chat", content=f"to the second table over {transport}")

        # and back to the demo world, by id: the choice holds for the calls that follow
        await call(session, "choose_world", world=CLIENT_ID)
        assert (await call(session, "world_overview"))["worldId"] == "vttrelay-demo"
        await call(session, "send_chat", content=f"to the demo world over {transport}")

    second, demo = (
        await chat_of(relay, two_worlds, SECOND),
        await chat_of(relay, two_worlds, CLIENT_ID),
    )
    assert f"to the second table over {transport}" in second
    assert f"to the demo world over {transport}" not in second
    assert f"to the demo world over {transport}" in demo
    assert f"to the second table over {transport}" not in demo


@pytest.mark.parametrize("transport", TRANSPORTS)
@OLDER_PROTOCOL
async def test_the_world_named_when_connecting_is_the_sessions(
    relay: Any, two_worlds: str, transport: str
) -> None:
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    async with open_session(
        transport, relay.url, two_worlds, on_message, client_id=SECOND
    ) as session:
        assert (await call(session, "worlds"))["chosen"] == SECOND
        assert (await call(session, "world_overview"))["world"] == SECOND_TITLE
        scene = await call(session, "scene_tokens")
        assert scene["tokens"]  # the second world's own demo scene
        # the chat events followed are the session's world's
        await session.subscribe_resource("vtt://events/chat")
        status, _ = await call_api(
            relay, two_worlds, "POST", "/chat", {"content": "at the demo table"}, clientId=CLIENT_ID
        )
        assert status == 200
        await call(session, "send_chat", content="at the second table")
        for _ in range(200):
            if updates:
                break
            await asyncio.sleep(0.02)
        contents = (await session.read_resource("vtt://events/chat")).contents[0]
        events = json.loads(contents.text)["events"]  # type: ignore[union-attr]
        assert [e["data"]["text"] for e in events] == ["at the second table"]
        await session.unsubscribe_resource("vtt://events/chat")

        await call(session, "choose_world", world="vttrelay Demo World")
        assert (await call(session, "world_overview"))["world"] == "vttrelay Demo World"


async def test_a_key_bound_to_one_world_needs_no_choice(relay: Any, two_worlds: str) -> None:
    bound = str(relay.key(AGENT_SCOPES, client_ids=[SECOND], rate_per_minute=0))
    async with open_session("http", relay.url, bound) as session:
        assert (await call(session, "world_overview"))["world"] == SECOND_TITLE
        listed = await call(session, "worlds")
        assert listed == {"worlds": [WORLDS[0]], "chosen": None}


async def mcp_refuses(relay: Any, key: str, client_id: str) -> str:
    """`vttrelay mcp --client-id` run with `key`: the last line it printed before exiting 1."""
    run = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "vttrelay", "mcp", "--url", relay.url, "--client-id", client_id],
        env={**os.environ, "VTTRELAY_API_KEY": key},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stderr
    return run.stderr.strip().splitlines()[-1]


async def test_a_world_the_key_cannot_reach_is_refused_at_the_door(
    relay: Any, two_worlds: str
) -> None:
    # vttrelay mcp: checked against the key's worlds before it serves
    assert await mcp_refuses(relay, two_worlds, "nowhere") == (
        f"vttrelay mcp: no world 'nowhere' for this key; its worlds: {LISTED}"
    )
    bound = str(relay.key(AGENT_SCOPES, client_ids=[CLIENT_ID], rate_per_minute=0))
    assert await mcp_refuses(relay, bound, SECOND) == (
        f"vttrelay mcp: the key may not reach world '{SECOND}'; its worlds: {CLIENT_ID}"
    )
    # /mcp: an id off the pattern is refused before anything runs
    async with httpx.AsyncClient() as http:
        reply = await http.post(
            f"{relay.url}/mcp",
            params={"clientId": "no such world!"},
            headers={"authorization": f"Bearer {two_worlds}"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert (reply.status_code, reply.json()) == (400, {"error": "Invalid client ID"})
