"""POST /roll, GET /rolls and /lastroll in-process over the real SQLite demo world, and the pure
roll rules: the module's critical/fumble test, list entries, the 20-entry list, `limit`."""

from __future__ import annotations

import random
import re

from tests.support.world import call, chat

from vttrelay.world.rules import rolls as rules
from vttrelay.world.rules.dice import Dice, ScriptedRandom
from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
GOBLIN_TOKEN = "Scene.sceneTavern00001.Token.tokGoblin0000001"
ROLL_KEYS = ["formula", "total", "isCritical", "isFumble", "dice", "timestamp"]
ENTRY_KEYS = [
    "id",
    "messageId",
    "user",
    "speaker",
    "flavor",
    "rollTotal",
    "formula",
    "isCritical",
    "isFumble",
    "dice",
    "timestamp",
]


def _roll(formula: str, faces: list[int]) -> tuple[bool, bool]:
    return rules.critical_and_fumble(Dice(ScriptedRandom(faces)).roll(formula))


def test_critical_and_fumble_as_the_module_tests_them() -> None:
    assert _roll("1d20 + 5", [20]) == (True, False)
    assert _roll("1d20 + 5", [1]) == (False, True)
    assert _roll("1d20 + 5", [10]) == (False, False)
    # any result equal to the first term's faces, dropped ones too
    assert _roll("2d20kl", [20, 4]) == (True, False)
    assert _roll("1d8 + 1d20", [3, 8]) == (True, False)  # 8 on the d20 matches d8's faces
    assert _roll("1d8 + 1d20", [3, 20]) == (False, False)
    # a formula that starts with a number is never critical; fumbles count anywhere
    assert _roll("5 + 1d20", [20]) == (False, False)
    assert _roll("5 + 1d6", [1]) == (False, True)
    assert _roll("4d6kh3", [1, 6, 6, 6]) == (True, True)


def test_recent_list_keeps_twenty_newest_first_and_replaces_by_id() -> None:
    recent: list[dict[str, object]] = []
    for n in range(25):
        rules.add_recent(recent, {"id": f"r{n}", "rollTotal": n})
    assert [e["id"] for e in recent] == [f"r{n}" for n in range(24, 4, -1)]
    rules.add_recent(recent, {"id": "r10", "rollTotal": 99})
    assert len(recent) == 20 and recent[14] == {"id": "r10", "rollTotal": 99}


def test_list_limit_is_the_modules_slice() -> None:
    assert rules.list_limit(None) == 20 and rules.list_limit(0) == 20
    assert rules.list_limit(3) == 3 and rules.list_limit(2.7) == 2 and rules.list_limit("5") == 5
    assert rules.list_limit(-2) == -2 and rules.list_limit(50) == 50  # [:50] of 20 is 20
    assert rules.list_limit("x") == 20


def test_manual_roll_id() -> None:
    assert re.fullmatch(
        r"manual_1782956918692_[0-9a-z]{11}", rules.manual_roll_id(1782956918692, random.Random())
    )


async def test_roll_reply_without_chat(world: World, faces: ScriptedRandom) -> None:
    faces.faces += [3, 7]
    reply = await call(world, "roll", formula="2d20kh", flavor="Test Roll")
    assert list(reply) == ["type", "requestId", "success", "data"]
    assert reply["type"] == "roll-result" and reply["success"] is True
    data = reply["data"]
    assert list(data) == ["id", "chatMessageCreated", "roll"]
    assert data["id"].startswith("manual_") and data["chatMessageCreated"] is False
    assert list(data["roll"]) == ROLL_KEYS
    assert data["roll"]["formula"] == "2d20kh" and data["roll"]["total"] == 7
    assert data["roll"]["dice"] == [
        {"faces": 20, "results": [{"result": 3, "active": False}, {"result": 7, "active": True}]}
    ]
    assert chat(world) == []
    last = await call(world, "last-roll")
    assert list(last) == ["type", "requestId", "data"] and last["type"] == "last-roll-result"
    entry = last["data"]
    assert list(entry) == ENTRY_KEYS
    assert entry["id"] == data["id"] and entry["messageId"] is None and entry["user"] is None
    assert entry["speaker"] == {} and entry["flavor"] == "Test Roll" and entry["rollTotal"] == 7
    assert world.sent == []  # type: ignore[attr-defined]  # no roll subscriber: no event


async def test_roll_with_chat_speaker_and_whisper(world: World, faces: ScriptedRandom) -> None:
    world.set_subscription("roll-events", 1)
    faces.faces += [20]
    reply = await call(
        world,
        "roll",
        formula="1d20 + 2",
        createChatMessage=True,
        speaker=ELARA,
        whisper=["Aria"],
        flavor="Stealth",
    )
    data = reply["data"]
    assert data["chatMessageCreated"] is True and data["roll"]["isCritical"] is True
    [message] = chat(world)
    assert message["content"] == "22" and message["flavor"] == "Stealth"
    assert message["whisper"] == ["playerAria000001"]
    assert message["speaker"] == {
        "scene": "sceneTavern00001",
        "actor": "elaraWizard00001",
        "token": "tokElara00000001",
        "alias": "Elara Quill",
    }
    assert message["rolls"][0]["total"] == 22
    recent = (await call(world, "rolls"))["data"]
    # the chat message's roll first, then the manual entry on top (the module, subscribed)
    assert [e["id"] for e in recent] == [data["id"], message["_id"]]
    assert recent[0]["messageId"] == data["id"] and recent[0]["speaker"]["alias"] == "Elara Quill"
    assert recent[1]["user"] == {"id": "gmUser0000000001", "name": "Gamemaster"}
    events = [f for f in world.sent if f["type"] == "roll-data"]  # type: ignore[attr-defined]
    assert [e["data"]["id"] for e in events] == [message["_id"]]  # the roll goes out once


async def test_roll_speakers(world: World) -> None:
    token = (await call(world, "roll", formula="1", speaker=GOBLIN_TOKEN))["data"]["id"]
    entry = (await call(world, "last-roll"))["data"]
    assert entry["id"] == token
    assert entry["speaker"] == {
        "token": "tokGoblin0000001",
        "actor": "goblinNpc0000001",
        "scene": "sceneTavern00001",
        "alias": "Goblin",
    }
    await call(world, "roll", formula="1", speaker="Actor.nobody0000000001")
    assert (await call(world, "last-roll"))["data"]["speaker"] == {}


async def test_roll_errors_change_nothing(world: World) -> None:
    reply = await call(world, "roll", formula="1d20 + banana", createChatMessage=True)
    assert list(reply) == ["type", "requestId", "success", "error"]
    assert reply["success"] is False
    assert reply["error"].startswith("Failed to roll formula: ")
    reply = await call(world, "roll", formula="1d6", createChatMessage=True, whisper=["Nobody"])
    assert reply["error"] == "Failed to create chat message: unknown whisper recipient 'Nobody'"
    assert chat(world) == [] and (await call(world, "last-roll"))["data"] is None
    reply = await call(world, "roll", formula="1d6", userId="nobody")
    assert reply == {
        "type": "roll-result",
        "requestId": "roll_1",
        "error": "User not found: nobody",
        "data": None,
    }


async def test_dnd5e_rolls_join_the_list_and_limit(world: World) -> None:
    for _ in range(3):
        await call(world, "roll", formula="1d4")
    check = await call(world, "skill-check", actorUuid=ELARA, skill="arc", userId="Aria")
    recent = (await call(world, "rolls", limit=2))["data"]
    assert len(recent) == 2
    assert recent[0]["rollTotal"] == check["data"]["total"]
    assert recent[0]["user"] == {"id": "playerAria000001", "name": "Aria"}
    assert recent[0]["formula"] == check["data"]["formula"]
    assert len((await call(world, "rolls"))["data"]) == 4
    for _ in range(25):
        await call(world, "roll", formula="1d4")
    assert len((await call(world, "rolls", limit=50))["data"]) == 20
