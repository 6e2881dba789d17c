"""POST /roll, GET /rolls and GET /lastroll through a real relay and the embedded world over real
sockets: reply shapes, the relay's and the world's errors, scopes, chat, and the roll stream."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, api_for, eventually

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld

ELARA = "Actor.elaraWizard00001"


async def test_roll_then_rolls_and_lastroll(world: EmbeddedWorld, api: Any) -> None:
    status, first = await api("POST", "/roll", {"formula": "1d6 + 2"})
    assert status == 200, first
    assert list(first) == ["type", "requestId", "success", "data"]
    assert first["type"] == "roll-result" and first["requestId"].startswith("roll_")
    status, body = await api(
        "POST",
        "/roll",
        {"formula": "2d20kh", "flavor": "Test Roll", "createChatMessage": True, "target": "x"},
    )
    assert status == 200, body
    data = body["data"]
    assert list(data) == ["id", "chatMessageCreated", "roll"]
    assert data["chatMessageCreated"] is True
    roll = data["roll"]
    assert list(roll) == ["formula", "total", "isCritical", "isFumble", "dice", "timestamp"]
    assert roll["formula"] == "2d20kh" and len(roll["dice"][0]["results"]) == 2
    assert sorted(r["active"] for r in roll["dice"][0]["results"]) == [False, True]
    assert roll["total"] == max(r["result"] for r in roll["dice"][0]["results"])

    status, listed = await api("GET", "/rolls", limit=20)
    assert status == 200 and list(listed) == ["type", "requestId", "data"]
    assert listed["type"] == "rolls-result"
    entries = listed["data"]
    # newest first: the manual entry, the chat message's roll, then the first /roll
    assert [e["id"] for e in entries][0] == data["id"] and entries[-1]["id"] == first["data"]["id"]
    assert len(entries) == 3
    assert entries[0]["messageId"] == data["id"] and entries[0]["flavor"] == "Test Roll"
    assert entries[-1]["messageId"] is None and entries[-1]["user"] is None
    status, last = await api("GET", "/lastroll")
    assert status == 200 and last["type"] == "last-roll-result"
    assert last["data"] == entries[0] and last["data"]["rollTotal"] == roll["total"]
    status, one = await api("GET", "/rolls", limit=1)
    assert [e["id"] for e in one["data"]] == [data["id"]]

    status, chat = await api("GET", "/chat")
    [message] = chat["data"]["messages"]
    assert message["isRoll"] is True and message["flavor"] == "Test Roll"
    assert message["content"] == str(roll["total"]) and message["rolls"][0]["formula"] == "2d20kh"


async def test_roll_errors(world: EmbeddedWorld, api: Any, relay: Any) -> None:
    for body, error in (
        ({}, "'formula' is required"),
        ({"formula": 5}, "'formula' must be a string"),
        ({"formula": "1d6", "whisper": "Aria"}, "'whisper' must be a valid array"),
        (
            {"formula": "1d6", "createChatMessage": "yes"},
            "'createChatMessage' must be a valid boolean",
        ),
    ):
        status, reply = await api("POST", "/roll", body)
        assert (status, reply) == (400, {"error": error})
    status, reply = await api("POST", "/roll", {"formula": "1d6 + goblin"})
    assert status == 400 and list(reply) == ["type", "requestId", "success", "error"]
    assert reply["success"] is False and reply["error"].startswith("Failed to roll formula: ")
    status, reply = await api("POST", "/roll", {"formula": "1d6", "userId": "nobody-xyz"})
    assert status == 400 and reply["error"] == "User not found: nobody-xyz"
    assert reply["data"] is None
    for path in ("/rolls", "/lastroll"):
        status, reply = await api("GET", path, userId="nobody-xyz")
        assert status == 400 and reply["error"] == "User not found: nobody-xyz"
    status, reply = await api("GET", "/rolls", limit="many")
    assert (status, reply) == (400, {"error": "'limit' must be a valid number"})
    status, reply = await api("GET", "/lastroll")
    assert status == 200 and reply["data"] is None  # none of the failed calls left a roll

    read_only = api_for(relay, DEFAULT_SCOPES)
    status, reply = await read_only("POST", "/roll", {"formula": "1d6"})
    assert (status, reply) == (403, {"error": "API key lacks required scope: roll:execute"})
    assert (await read_only("GET", "/rolls"))[0] == 200
    no_reads = api_for(relay, ("roll:execute",))
    status, reply = await no_reads("GET", "/lastroll")
    assert (status, reply) == (403, {"error": "API key lacks required scope: roll:read"})


async def test_a_player_rolls_and_reads_rolls(world: EmbeddedWorld, api: Any) -> None:
    """Rolls have no gate: any user may roll and read the list (the module only checks that the
    user exists); a player's speaker and chat author are kept."""
    status, body = await api(
        "POST",
        "/roll",
        {"formula": "1d20", "speaker": ELARA, "createChatMessage": True, "userId": "Aria"},
    )
    assert status == 200, body
    status, last = await api("GET", "/lastroll", userId="Ben")
    assert status == 200 and last["data"]["speaker"]["actor"] == "elaraWizard00001"
    status, rolls = await api("GET", "/rolls", userId="Ben")
    assert rolls["data"][1]["user"] == {"id": "playerAria000001", "name": "Aria"}


async def test_every_roll_reaches_the_roll_stream_once(
    relay: Any, world: EmbeddedWorld, api: Any, sse: Any
) -> None:
    key = relay.key(("events:subscribe",))
    stream = await sse(relay, "/rolls/subscribe", key, clientId=CLIENT_ID)
    assert (await stream.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("roll-events") == 1)

    _, plain = await api("POST", "/roll", {"formula": "3d6", "flavor": "plain"})
    _, posted = await api("POST", "/roll", {"formula": "1d8", "createChatMessage": True})
    _, check = await api("POST", "/dnd5e/skill-check", {"actorUuid": ELARA, "skill": "arc"})
    events = await stream.events(3)
    assert [e.name for e in events] == ["roll", "roll", "roll"]
    assert events[0].data["id"] == plain["data"]["id"] and events[0].data["flavor"] == "plain"
    assert events[0].data["rollTotal"] == plain["data"]["roll"]["total"]
    assert events[1].data["rollTotal"] == posted["data"]["roll"]["total"]
    assert events[1].data["user"]["name"] == "Gamemaster"  # the chat message's roll
    assert events[2].data["rollTotal"] == check["data"]["total"]
    assert await stream.nothing_more(0.2)


async def test_rolls_over_the_client_websocket(
    relay: Any, world: EmbeddedWorld, api_ws: Any
) -> None:
    socket = await api_ws(relay, relay.key(("roll:execute", "roll:read")), clientId=CLIENT_ID)
    assert {"roll", "rolls", "last-roll"} <= set(socket.hello["supportedTypes"])
    await socket.send({"type": "roll", "requestId": "r1", "formula": "1d4"})
    reply = await socket.recv_until("roll-result")
    assert reply["requestId"] == "r1" and reply["success"] is True
    await socket.send({"type": "last-roll", "requestId": "r2"})
    last = await socket.recv_until("last-roll-result")
    assert last["data"]["id"] == reply["data"]["id"]
