"""Chat actions in-process on a real SQLite world: shapes, filters, whispers, permissions."""

from __future__ import annotations

from typing import Any

from tests.support.world import Clock, call

from vttrelay.world.runtime.world import World

MESSAGE_KEYS = [
    "id",
    "uuid",
    "content",
    "speaker",
    "timestamp",
    "whisper",
    "type",
    "author",
    "flavor",
    "isRoll",
    "rolls",
    "flags",
]


async def _send(world: World, clock: Clock, **params: Any) -> dict[str, Any]:
    clock.now += 1000
    reply = await call(world, "chat-send", **params)
    assert "error" not in reply, reply
    return reply["data"]


async def test_send_reply_shape(world: World, clock: Clock) -> None:
    reply = await call(world, "chat-send", content="Hello!", flavor="Test Message")
    assert list(reply) == ["type", "requestId", "success", "data"]
    msg = reply["data"]
    assert list(msg) == MESSAGE_KEYS
    assert msg["uuid"] == f"ChatMessage.{msg['id']}" and len(msg["id"]) == 16
    assert msg["speaker"] == {"scene": None, "actor": None, "token": None}
    assert msg["author"] == {"id": "gmUser0000000001", "name": "Gamemaster"}
    assert (msg["type"], msg["flavor"], msg["whisper"], msg["isRoll"], msg["rolls"]) == (
        "base",
        "Test Message",
        [],
        False,
        [],
    )
    assert msg["flags"] == {"vttrelay": {"chatType": 0}}
    assert msg["timestamp"] >= clock.now


async def test_speaker_alias_author_and_chat_types(world: World, clock: Clock) -> None:
    by_actor = await _send(world, clock, content="I cast!", speaker="elaraWizard00001")
    assert by_actor["speaker"] == {
        "scene": "sceneTavern00001",
        "actor": "elaraWizard00001",
        "token": "tokElara00000001",
        "alias": "Elara Quill",
    }
    assert by_actor["flags"]["vttrelay"]["chatType"] == 1
    by_uuid = await _send(world, clock, content="x", speaker="Actor.corvinWarlock001", alias="C")
    assert by_uuid["speaker"]["actor"] == "corvinWarlock001" and by_uuid["speaker"]["alias"] == "C"
    unknown = await _send(world, clock, content="x", speaker="Actor.nope")
    assert unknown["speaker"] == {"scene": None, "actor": None, "token": None}
    emote = await _send(world, clock, content="waves", chatType=2, userId="Ben")
    assert emote["flags"]["vttrelay"]["chatType"] == 2
    assert emote["author"] == {"id": "playerBen0000001", "name": "Ben"}
    bad = await call(world, "chat-send", content="x", chatType=7)
    assert bad["success"] is False and "chatType" in bad["error"]
    missing = await call(world, "chat-send")
    assert missing == {
        "type": "chat-send-result",
        "requestId": "chat-send_1",
        "success": False,
        "error": "content is required",
    }


async def test_list_newest_first_paging_and_filters(world: World, clock: Clock) -> None:
    ids = [(await _send(world, clock, content=f"m{i}"))["id"] for i in range(12)]
    await _send(world, clock, content="ic", speaker="pipMonk000000001")
    reply = await call(world, "chat-messages")
    assert list(reply) == ["type", "requestId", "success", "data"]
    data = reply["data"]
    assert (data["total"], data["offset"], data["limit"]) == (13, 0, 10)
    assert [m["content"] for m in data["messages"][:3]] == ["ic", "m11", "m10"]
    assert all(list(m) == MESSAGE_KEYS for m in data["messages"])
    page = (await call(world, "chat-messages", limit=3, offset=11))["data"]
    assert [m["id"] for m in page["messages"]] == [ids[1], ids[0]]
    assert (page["limit"], page["offset"], page["total"]) == (3, 11, 13)
    ic = (await call(world, "chat-messages", chatType=1))["data"]
    assert [m["content"] for m in ic["messages"]] == ["ic"] and ic["total"] == 1
    assert (await call(world, "chat-messages", chatType=0))["data"]["total"] == 12
    assert (await call(world, "chat-messages", chatType=4))["data"]["total"] == 0
    for speaker in ("Pip Tealeaf", "pipMonk000000001", "Actor.pipMonk000000001"):
        found = (await call(world, "chat-messages", speaker=speaker))["data"]
        assert [m["content"] for m in found["messages"]] == ["ic"], speaker
    assert (await call(world, "chat-messages", speaker="Nobody"))["data"]["total"] == 0


async def test_whispers_visible_only_to_recipients_author_and_gm(
    world: World, clock: Clock
) -> None:
    await _send(world, clock, content="public")
    await _send(world, clock, content="to aria", whisper=["playerAria000001"])
    await _send(world, clock, content="ben to gm", whisper=["gmUser0000000001"], userId="Ben")
    whisper = (await call(world, "chat-messages", userId="Aria"))["data"]
    assert [m["content"] for m in whisper["messages"]] == ["to aria", "public"]
    assert whisper["total"] == 2
    ben = (await call(world, "chat-messages", userId="playerBen0000001"))["data"]
    assert [m["content"] for m in ben["messages"]] == ["ben to gm", "public"]
    gm = (await call(world, "chat-messages", userId="Gamemaster"))["data"]
    assert gm["total"] == 3
    assert (await call(world, "chat-messages"))["data"]["total"] == 3
    w = (await call(world, "chat-messages", chatType=3))["data"]
    assert w["total"] == 2
    bad = await call(world, "chat-send", content="x", whisper=["ghost"])
    assert bad["success"] is False and "ghost" in bad["error"]


async def test_delete_permissions_and_flush(world: World, clock: Clock) -> None:
    gm_msg = await _send(world, clock, content="gm")
    ben_msg = await _send(world, clock, content="ben", userId="Ben")
    denied = await call(world, "chat-delete", messageId=gm_msg["id"], userId="Ben")
    assert denied == {
        "type": "chat-delete-result",
        "requestId": "chat-delete_1",
        "success": False,
        "error": "User 'Ben' does not have permission to delete this message",
    }
    ok = await call(world, "chat-delete", messageId=ben_msg["id"], userId="Ben")
    assert ok == {
        "type": "chat-delete-result",
        "requestId": "chat-delete_1",
        "success": True,
        "data": {"messageId": ben_msg["id"]},
    }
    gone = await call(world, "chat-delete", messageId=ben_msg["id"])
    assert gone["error"] == f"Chat message not found: {ben_msg['id']}"
    assert gone["success"] is False
    refused = await call(world, "chat-flush", userId="Aria")
    assert refused["error"] == "User 'Aria' must be a GM to flush chat messages"
    assert (await call(world, "chat-messages"))["data"]["total"] == 1
    flushed = await call(world, "chat-flush", userId="gmUser0000000001")
    assert flushed["data"] == {"message": "All chat messages have been deleted"}
    assert flushed["success"] is True
    assert (await call(world, "chat-messages"))["data"]["total"] == 0


async def test_chat_events_only_for_subscribers(world: World, clock: Clock) -> None:
    sent: list[dict[str, Any]] = world.sent  # type: ignore[attr-defined]
    await _send(world, clock, content="quiet")
    assert sent == []
    world.set_subscription("chat-events", 1)
    msg = await _send(world, clock, content="loud")
    await call(world, "chat-delete", messageId=msg["id"])
    assert sent == [
        {"type": "chat-event", "data": {"eventType": "create", "data": msg}},
        {"type": "chat-event", "data": {"eventType": "delete", "data": {"id": msg["id"]}}},
    ]
