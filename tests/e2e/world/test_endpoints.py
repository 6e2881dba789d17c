"""Every chat and utility endpoint through a real relay and the real world over a WebSocket:
key sets of world-behaviour §4-5, status codes, permission gates with a player userId."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID

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
USER_KEYS = ["id", "name", "role", "isGM", "active", "color", "avatar"]
TOKEN = "Scene.sceneTavern00001.Token."


async def test_chat_endpoints(relay: Any, start_world: Any, api: Any) -> None:
    await start_world(relay)
    status, body = await api(relay, "POST", "/chat", {"content": "Hello!", "flavor": "Test"})
    assert status == 200
    assert list(body) == ["type", "requestId", "success", "data"]
    assert body["type"] == "chat-send-result" and body["requestId"].startswith("chat-send_")
    first = body["data"]
    assert list(first) == MESSAGE_KEYS
    assert first["author"] == {"id": "gmUser0000000001", "name": "Gamemaster"}
    assert first["speaker"] == {"scene": None, "actor": None, "token": None}

    status, body = await api(
        relay,
        "POST",
        "/chat",
        {"content": "psst", "whisper": ["playerAria000001"], "userId": "Ben"},
    )
    assert status == 200 and body["data"]["flags"]["vttrelay"]["chatType"] == 3
    whisper = body["data"]
    status, body = await api(
        relay, "POST", "/chat", {"content": "hi all", "speaker": "brannFighter0001"}
    )
    assert body["data"]["speaker"]["alias"] == "Brann Stoneheart"

    status, body = await api(relay, "GET", "/chat")
    assert status == 200 and list(body) == ["type", "requestId", "success", "data"]
    assert list(body["data"]) == ["messages", "total", "offset", "limit"]
    assert (body["data"]["total"], body["data"]["offset"], body["data"]["limit"]) == (3, 0, 10)
    assert [m["content"] for m in body["data"]["messages"]] == ["hi all", "psst", "Hello!"]
    assert all(list(m) == MESSAGE_KEYS for m in body["data"]["messages"])

    # filters: limit/offset, chatType numbers, speaker; whisper visibility per user
    _, body = await api(relay, "GET", "/chat", limit=1, offset=1)
    assert [m["content"] for m in body["data"]["messages"]] == ["psst"]
    _, body = await api(relay, "GET", "/chat", chatType=1)
    assert [m["content"] for m in body["data"]["messages"]] == ["hi all"]
    _, body = await api(relay, "GET", "/chat", speaker="Brann Stoneheart")
    assert body["data"]["total"] == 1
    for user, seen in (("Aria", 3), ("Ben", 3), ("playerAria000001", 3), ("Gamemaster", 3)):
        _, body = await api(relay, "GET", "/chat", userId=user)
        assert body["data"]["total"] == seen, user
    status, body = await api(
        relay, "POST", "/chat", {"content": "gm only", "whisper": ["gmUser0000000001"]}
    )
    _, body = await api(relay, "GET", "/chat", userId="Aria")
    assert "gm only" not in [m["content"] for m in body["data"]["messages"]]
    _, body = await api(relay, "GET", "/chat", userId="Gamemaster")
    assert "gm only" in [m["content"] for m in body["data"]["messages"]]

    # delete: author or GM
    status, body = await api(relay, "DELETE", f"/chat/{first['id']}", userId="Aria")
    assert status == 400
    assert body == {
        "type": "chat-delete-result",
        "requestId": body["requestId"],
        "success": False,
        "error": "User 'Aria' does not have permission to delete this message",
    }
    status, body = await api(relay, "DELETE", f"/chat/{whisper['id']}", userId="Ben")
    assert status == 200 and body["data"] == {"messageId": whisper["id"]}
    assert body["success"] is True
    status, body = await api(relay, "DELETE", f"/chat/{whisper['id']}")
    assert status == 400 and body["error"] == f"Chat message not found: {whisper['id']}"

    status, body = await api(relay, "DELETE", "/chat", userId="Ben")
    assert status == 400 and body["error"] == "User 'Ben' must be a GM to flush chat messages"
    status, body = await api(relay, "DELETE", "/chat")
    assert status == 200
    assert list(body) == ["type", "requestId", "success", "data"]
    assert body["data"] == {"message": "All chat messages have been deleted"}
    _, body = await api(relay, "GET", "/chat")
    assert body["data"]["total"] == 0


async def test_utility_endpoints(relay: Any, start_world: Any, api: Any) -> None:
    await start_world(relay)
    status, body = await api(relay, "POST", "/select", {"name": "Wolf", "overwrite": True})
    assert status == 200
    assert list(body) == ["type", "requestId", "success", "count", "message", "selected"]
    assert (body["count"], body["message"], body["selected"]) == (
        1,
        "1 entities selected",
        [TOKEN + "tokWolf000000001"],
    )
    status, body = await api(relay, "POST", "/select", {"uuids": [TOKEN + "tokPip0000000001"]})
    assert body["selected"] == [TOKEN + "tokPip0000000001"]
    status, body = await api(relay, "GET", "/selected")
    assert status == 200 and list(body) == ["type", "requestId", "success", "selected"]
    assert body["selected"] == [
        {
            "tokenUuid": TOKEN + "tokWolf000000001",
            "actorUuid": TOKEN + "tokWolf000000001.Actor.wolfNpc000000001",
        },
        {"tokenUuid": TOKEN + "tokPip0000000001", "actorUuid": "Actor.pipMonk000000001"},
    ]
    status, body = await api(relay, "POST", "/select", {"all": True, "overwrite": True})
    assert body["count"] == 7
    status, body = await api(relay, "POST", "/select", {"name": "Nobody"})
    assert status == 400 and body["error"] == "No matching entities found"
    assert body["success"] is False

    status, body = await api(relay, "GET", "/players")
    assert status == 200 and list(body) == ["type", "requestId", "users"]
    assert all(list(u) == USER_KEYS for u in body["users"])
    assert [(u["name"], u["role"], u["active"]) for u in body["users"]] == [
        ("Gamemaster", 4, True),
        ("Aria", 1, False),
        ("Ben", 1, False),
    ]

    status, body = await api(relay, "GET", "/world-info")
    assert status == 200 and list(body) == ["type", "requestId", "data"]
    data = body["data"]
    assert list(data) == ["world", "system", "foundryVersion", "modules", "users", "activeScene"]
    assert data["world"] == {"id": "vttrelay-demo", "title": "vttrelay Demo World"}
    assert data["activeScene"] == {"id": "sceneTavern00001", "name": "The Yawning Portal"}

    # the world connected with the module's metadata query
    status, body = await api(relay, "GET", "/clients")
    assert status == 200
    (client,) = body["clients"]
    assert client["clientId"] == CLIENT_ID and client["isOnline"] is True
    assert (client["worldId"], client["worldTitle"]) == ("vttrelay-demo", "vttrelay Demo World")
    assert (client["systemId"], client["foundryVersion"]) == ("dnd5e", "14.363")


async def test_permission_gates_with_a_player(relay: Any, start_world: Any, api: Any) -> None:
    await start_world(relay)
    status, body = await api(relay, "POST", "/select", {"all": True, "userId": "Aria"})
    assert (status, body["error"]) == (400, "User 'Aria' must be a GM to select tokens")
    status, body = await api(relay, "GET", "/selected", userId="playerBen0000001")
    assert (status, body["error"]) == (400, "User 'Ben' must be a GM to get selected tokens")
    status, body = await api(relay, "GET", "/players", userId="Ben")
    assert (status, body["users"]) == (200, [])
    status, body = await api(relay, "GET", "/world-info", userId="Ben")
    assert status == 200 and len(body["data"]["users"]) == 3
    for method, path, payload in (
        ("GET", "/chat", None),
        ("POST", "/chat", {"content": "x", "userId": "Mallory"}),
        ("GET", "/players", None),
        ("GET", "/world-info", None),
        ("GET", "/selected", None),
    ):
        query = {"userId": "Mallory"} if payload is None else {}
        status, body = await api(relay, method, path, payload, **query)
        assert status == 400, path
        assert body == {
            "type": body["type"],
            "requestId": body["requestId"],
            "error": "User not found: Mallory",
            "data": None,
        }, path
