"""Event streams fed by the real embedded world (not a double): what its actions emit reaches
subscribers named, unwrapped and filtered as documented, and the world emits only for channels
the relay switched on."""

from __future__ import annotations

from typing import Any

import orjson
from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

ELARA = "Actor.elaraWizard00001"  # Aria's wizard in the demo world
ARIA = "playerAria000001"


async def test_world_actions_reach_filtered_streams(
    relay: Any, world: EmbeddedWorld, sse: Any
) -> None:
    key = relay.key((*DEFAULT_SCOPES, "chat:write"), rate_per_minute=0)
    await eventually(lambda: bool(relay.state.registry.get(CLIENT_ID).users))  # its player-list
    assert world.world.subscriptions.get("chat-events", 0) == 0
    everything = await sse(relay, "/chat/subscribe", key, clientId=CLIENT_ID)
    ben_emotes = await sse(relay, "/chat/subscribe", key, clientId=CLIENT_ID, type=2, userId="ben")
    as_ben = await sse(relay, "/chat/subscribe", key, clientId=CLIENT_ID, userId="Ben")
    rolls = await sse(relay, "/rolls/subscribe", key, clientId=CLIENT_ID, userId="Aria")
    actor = await sse(relay, "/actor/subscribe", key, clientId=CLIENT_ID, actorUuid=ELARA)
    for stream in (everything, ben_emotes, as_ben, rolls, actor):
        assert (await stream.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("chat-events") == 3)
    await eventually(lambda: world.world.subscriptions.get("actor-events") == 1)

    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = await relay.call("POST", path, key=key, json=body, params={"clientId": CLIENT_ID})
        assert answer.status == 200, answer.body
        reply: dict[str, Any] = orjson.loads(answer.body)
        return reply

    emote = (await post("/chat", {"content": "waves", "chatType": 2}))["data"]
    secret = (await post("/chat", {"content": "psst", "whisper": [ARIA]}))["data"]
    removed = await relay.call(
        "DELETE", f"/chat/{secret['id']}", key=key, params={"clientId": CLIENT_ID}
    )
    assert removed.status == 200, removed.body

    seen = await everything.events(3)
    assert [(e.name, e.data["id"]) for e in seen] == [
        ("chat-create", emote["id"]),
        ("chat-create", secret["id"]),
        ("chat-delete", secret["id"]),
    ]
    assert seen[0].data == emote  # the bare message, exactly as the world serialized it
    assert seen[0].data["flags"]["vttrelay"]["chatType"] == 2
    assert seen[2].data == {"id": secret["id"]}
    assert [e.data["id"] for e in [await ben_emotes.event()]] == [emote["id"]]
    assert [e.data["id"] for e in [await as_ben.event()]] == [emote["id"]]  # no whisper to Aria
    assert await as_ben.nothing_more(0.2) and await ben_emotes.nothing_more(0.05)

    # a roll made as Aria reaches her roll stream, and a change to her actor its actor stream
    check = await post(
        "/dnd5e/skill-check",
        {"actorUuid": ELARA, "skill": "prc", "userId": "Aria"},
    )
    roll = await rolls.event()
    assert roll.name == "roll"
    assert roll.data["user"]["id"] == ARIA
    assert roll.data["rollTotal"] == check["data"]["total"]
    await post("/dnd5e/modify-experience", {"actorUuid": ELARA, "amount": 10})
    update = await actor.event()
    assert update.name == "actor-update" and update.data["actorUuid"] == ELARA

    # the world stops emitting a channel once nobody listens
    rolls.close()
    relay.state.streams.hub.settings.sweep_interval = 0.05
    relay.state.streams.hub.settings.subscription_linger = 0.1
    await eventually(lambda: world.world.subscriptions.get("roll-events") == 0)


async def test_the_world_keeps_emitting_for_a_client_that_reconnects_in_time(
    relay: Any, world: EmbeddedWorld, sse: Any
) -> None:
    """The real world emits only while its channel is on: the grace period after the last
    subscriber leaves keeps it on, so a reconnect with Last-Event-ID loses nothing."""
    key = relay.key((*DEFAULT_SCOPES, "chat:write"), rate_per_minute=0)
    hub = relay.state.streams.hub
    hub.settings.sweep_interval = 0.05
    first = await sse(relay, "/chat/subscribe", key, clientId=CLIENT_ID)
    assert (await first.event()).id == "0"
    await eventually(lambda: world.world.subscriptions.get("chat-events") == 1)
    first.close()
    await eventually(lambda: hub.count(CLIENT_ID, "chat-events") == 0)

    async def say(text: str) -> str:
        answer = await relay.call(
            "POST", "/chat", key=key, json={"content": text}, params={"clientId": CLIENT_ID}
        )
        assert answer.status == 200, answer.body
        message_id: str = orjson.loads(answer.body)["data"]["id"]
        return message_id

    said = [await say(f"while away {i}") for i in range(3)]
    await eventually(lambda: hub.events.last_id(CLIENT_ID, "chat-events") == 3)
    back = await sse(
        relay, "/chat/subscribe", key, headers={"Last-Event-ID": "0"}, clientId=CLIENT_ID
    )
    assert (await back.event()).name == "connected"
    assert [e.data["id"] for e in await back.events(3)] == said

    hub.settings.subscription_linger = 0.1
    back.close()
    await eventually(lambda: world.world.subscriptions.get("chat-events") == 0)
    await say("nobody listens")
    assert hub.events.last_id(CLIENT_ID, "chat-events") == 3  # the world did not emit it


async def test_entity_routes_fire_hooks_for_every_document_type(
    relay: Any, world: EmbeddedWorld, sse: Any
) -> None:
    key = relay.key((*DEFAULT_SCOPES, "entity:write"), rate_per_minute=0)
    wanted = "createJournalEntry,updateItem,deleteJournalEntry,createActiveEffect,updateActor"
    hooks = await sse(relay, "/hooks/subscribe", key, clientId=CLIENT_ID, hooks=wanted)
    assert (await hooks.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("hooks", 0) == 1)

    async def call(method: str, path: str, body: Any = None, **query: str) -> dict[str, Any]:
        answer = await relay.call(
            method, path, key=key, json=body, params={"clientId": CLIENT_ID, **query}
        )
        assert answer.status == 200, answer.body
        reply: dict[str, Any] = orjson.loads(answer.body)
        return reply

    journal = await call("POST", "/create", {"entityType": "JournalEntry", "data": {"name": "Log"}})
    dagger = f"{ELARA}.Item.o7Hk4IMxG5vKZS34"
    await call("PUT", "/update", {"data": {"name": "Sharp Dagger"}}, uuid=dagger)
    await call("POST", "/kill", uuid=ELARA)  # HP 0 (updateActor) and the dead status effect
    await call("DELETE", "/delete", uuid=journal["uuid"])
    seen = await hooks.events(5)
    assert [e.name for e in seen] == [
        "createJournalEntry",
        "updateItem",
        "updateActor",
        "createActiveEffect",
        "deleteJournalEntry",
    ]
    assert seen[0].data["args"][0]["name"] == "Log"
    assert seen[1].data["args"][1] == {"name": "Sharp Dagger", "_id": "o7Hk4IMxG5vKZS34"}
    assert seen[3].data["args"][0]["statuses"] == ["dead"]
    assert seen[4].data["args"][-2]["documentName"] == "JournalEntry"
