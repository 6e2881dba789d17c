"""Recorded world replies the fake world answers with, one per action (data only).

The shapes and values come from the reference captures quoted in world-behaviour.md §3, §4, §5
and §9, wire-protocol §4.6 (the skill-check exchange) and endpoints-beyond-seed.md §3.1 (the
/roll reply). The actor is the example's Lightfoot
Halfling Monk (`Actor.V5OF1QXHjaIy6iO8`); get-actor-details carries its 17 items, 8 features and
1 spell as 11-key Item sources, so the forwarded body is about as large as a real one of that actor.

The entity (`/get`) and search replies were recorded from the embedded world by
`python -m bench.record` (`bench/recorded/<action>.json`): a character with all her items, and
every actor of the world and of the SRD packs.

`reply_parts(action)` returns the text before and after the requestId, so the fake world builds a
reply with two string concatenations and no JSON encoding per request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import orjson

ACTOR: Final = "Actor.V5OF1QXHjaIy6iO8"
TARGET_ACTOR: Final = "Actor.w8wIGpE73y2AYrCo"
SCENE: Final = "SM7AhDv5JgZh6IvK"
TOKEN: Final = f"Scene.{SCENE}.Token.h982FKt6QfxjSNkM"
GM: Final = {"id": "cpvaGKk3hgoBCzCS", "name": "Gamemaster"}

# (id, name, type) of the example actor's items, features and spell (world-behaviour §9).
ITEMS: Final = (
    ("YJ1P3PnFKHOdQpaP", "Hammer", "tool"),
    ("DDnxRCeYUhXstWU8", "Tinderbox", "tool"),
    ("5skKSSB4ShHbKoc8", "Waterskin", "consumable"),
    ("dDuMscUuMI2bTdkj", "Torch", "consumable"),
    ("nC6VcR5JAIbR4err", "Stick of Incense", "loot"),
    ("WeKJI3gPUAU52WAX", "Dart", "weapon"),
    ("1F73YcUHbZMgePAD", "Common Clothes", "equipment"),
    ("LQhGSEatJ3VK7oqW", "Rations", "consumable"),
    ("zF5L4xHnJBC7b2iM", "Crowbar", "loot"),
    ("g7U3OAXVcoI4lwzf", "Unarmed Strike", "weapon"),
    ("8UQanAvHUIHZXp0O", "Piton", "loot"),
    ("irCoxLHje0eA6Qmu", "Hempen Rope (50 ft.)", "loot"),
    ("GfKuJYLFfw00oW9R", "Reliquary", "equipment"),
    ("NsNcJBUG5ajbk7sG", "Vestments", "equipment"),
    ("XbF0CTipyqbMKHsB", "Prayer Book", "loot"),
    ("GYyovoNdU66nxOlX", "Shortsword", "weapon"),
    ("WwRMQKOlAvEpD3ca", "test-potion of storm giant strength", "consumable"),
)
FEATURES: Final = (
    ("q4tr1vTU8RxtU1UZ", "Priest", "background"),
    ("FtOM4QiOW5MwgcS3", "Lucky", "feat"),
    ("nmmihiqphHjoE8dl", "Brave", "feat"),
    ("cWrETHzCRs1Ueqd3", "Halfling Nimbleness", "feat"),
    ("AArhiOrSkaQUnCZS", "Naturally Stealthy", "feat"),
    ("8Grf7ga6JcZF0X6x", "Monk", "class"),
    ("CwgoTDXWCD7PknIN", "Unarmored Defense", "feat"),
    ("pchnXqd5C79fVlxy", "Martial Arts", "feat"),
)
SPELLS: Final = (("GyDpcmnPwXKay8f7", "test-polymorph", "spell"),)


def _item_source(item_id: str, name: str, item_type: str, sort: int) -> dict[str, Any]:
    """An 11-key Item source object as the module returns it (world-behaviour §3.1)."""
    return {
        "_id": item_id,
        "_stats": {
            "compendiumSource": f"Compendium.dnd5e.items.Item.{item_id}",
            "coreVersion": "14.363",
            "createdTime": 1782956000000,
            "duplicateSource": None,
            "exportSource": None,
            "lastModifiedBy": GM["id"],
            "modifiedTime": 1782956900000,
            "systemId": "dnd5e",
            "systemVersion": "5.0.4",
        },
        "effects": [],
        "flags": {},
        "folder": None,
        "img": f"icons/svg/{item_type}.svg",
        "name": name,
        "ownership": {"default": 0},
        "sort": sort,
        "system": {
            "description": {"value": f"<p>{name}.</p>", "chat": ""},
            "identifier": name.lower().replace(" ", "-"),
            "source": {"book": "SRD 5.1", "page": "", "license": "CC-BY-4.0", "rules": "2024"},
            "quantity": 1,
            "weight": {"value": 1, "units": "lb"},
            "price": {"value": 1, "denomination": "gp"},
            "rarity": "",
            "identified": True,
            "uses": {"max": "", "recovery": [], "spent": 0},
            "activities": {},
            "properties": [],
            "type": {"value": "", "subtype": ""},
        },
        "type": item_type,
    }


def _sources(entries: tuple[tuple[str, str, str], ...]) -> list[dict[str, Any]]:
    return [_item_source(i, n, t, (k + 1) * 100000) for k, (i, n, t) in enumerate(entries)]


_RESOURCE: Final = {"value": 0, "max": 0, "sr": False, "lr": False, "label": ""}

_MESSAGES: Final = (
    ("6378UGmZxjLze4HK", "This is a whispered test message", "API Test Bot", ""),
    ("iM6Dvf2zMmtKz6GY", "Hello from the REST API test suite!", None, "Test Message"),
    ("2D1febYmjUQHZAD7", "12", None, ""),
    ("DBB2LWByE7CDbLyG", "13", None, ""),
    ("s6tlG0UaCYaDkjnS", "<b>REST API execute-js:</b> <code>return 1</code>", None, ""),
    ("MJLqSQ7or8rLJ3EC", "Macro executed", None, ""),
    ("3L2eTdjND7lEQHkX", "17", None, "SSE Test Roll"),
    ("IOINl0FJFZcwDwxD", "7", None, "Test Roll"),
)


def chat_message(
    msg_id: str, content: str, alias: str | None = None, flavor: str = "", ts: int = 0
) -> dict[str, Any]:
    """A serialized chat message: the 12 keys of world-behaviour §4."""
    speaker: dict[str, Any] = {"scene": None, "actor": None, "token": None}
    if alias is not None:
        speaker["alias"] = alias
    return {
        "id": msg_id,
        "uuid": f"ChatMessage.{msg_id}",
        "content": content,
        "speaker": speaker,
        "timestamp": ts or 1782956929673,
        "whisper": [],
        "type": "base",
        "author": dict(GM),
        "flavor": flavor,
        "isRoll": False,
        "rolls": [],
        "flags": {},
    }


_PLAYERS: Final = [
    {
        "id": GM["id"],
        "name": GM["name"],
        "role": 4,
        "isGM": True,
        "active": True,
        "color": "#161068",
        "avatar": "icons/svg/mystery-man.svg",
    },
    {
        "id": "zi1MHwh4aJs4L2Mn",
        "name": "test",
        "role": 1,
        "isGM": False,
        "active": False,
        "color": "#ccad28",
        "avatar": "icons/svg/mystery-man.svg",
    },
]

_ROLL: Final = {"total": 14, "formula": "1d20 + 0", "result": "14 + 0"}
_BALANCE: Final = {"pp": 0, "gp": 0, "ep": 0, "sp": 0, "cp": 0}

# action -> the reply's keys other than `type` and `requestId`.
REPLIES: Final[dict[str, dict[str, Any]]] = {
    "get-actor-details": {
        "data": {
            "uuid": ACTOR,
            "resources": {"primary": _RESOURCE, "secondary": _RESOURCE, "tertiary": _RESOURCE},
            "spells": _sources(SPELLS),
            "spellSlots": {},
            "items": _sources(ITEMS),
            "features": _sources(FEATURES),
        }
    },
    "skill-check": {"data": {"actorUuid": ACTOR, "skill": "prc", **_ROLL}},
    "ability-save": {
        "data": {"actorUuid": ACTOR, "ability": "dex", "total": 2}
        | {"formula": "1d20 + 0 + 0", "result": "2 + 0 + 0"}
    },
    "ability-check": {"data": {"actorUuid": ACTOR, "ability": "str", **_ROLL}},
    "death-save": {
        "data": {"actorUuid": ACTOR, "total": 16, "formula": "1d20", "result": "16"}
        | {"deathSaves": {"success": 1, "failure": 0}}
    },
    "modify-experience": {"data": {"actorUuid": ACTOR, "oldXp": 0, "newXp": 100}},
    "modify-item-charges": {
        "data": {"itemUuid": f"{ACTOR}.Item.5skKSSB4ShHbKoc8", "oldCharges": 4, "newCharges": 3}
    },
    "get-concentration": {
        "data": {"actorUuid": ACTOR, "isConcentrating": False, "effect": None, "spell": None}
    },
    "concentration-save": {
        "data": {"actorUuid": ACTOR, "dc": 10, "total": 13, "formula": "1d20 + 0"}
        | {"result": "13 + 0", "maintained": True}
    },
    "break-concentration": {
        "data": {"actorUuid": ACTOR, "broken": True, "removedEffectId": "5JqtFclmzmwMNV3c"}
    },
    "equip-item": {
        "data": {"actorUuid": ACTOR, "itemUuid": f"{ACTOR}.Item.WeKJI3gPUAU52WAX"}
        | {"itemName": "Dart", "equipped": True}
    },
    "attune-item": {
        "data": {"actorUuid": ACTOR, "itemUuid": f"{ACTOR}.Item.WeKJI3gPUAU52WAX"}
        | {"itemName": "Dart", "attuned": True}
    },
    "transfer-currency": {
        "data": {"sourceActorUuid": ACTOR, "targetActorUuid": TARGET_ACTOR}
        | {"transferred": {"gp": 1}, "sourceBalance": _BALANCE | {"gp": 99}}
        | {"targetBalance": _BALANCE | {"gp": 1}}
    },
    "use-item": {"data": {"uuid": ACTOR, "ability": "Hammer", "result": None}},
    "use-feature": {"data": {"uuid": ACTOR, "ability": "Priest", "result": None}},
    "use-spell": {"data": {"uuid": ACTOR, "ability": "test-polymorph", "result": None}},
    "use-ability": {"data": {"uuid": ACTOR, "ability": "Hammer", "result": None}},
    "chat-messages": {
        "success": True,
        "data": {
            "messages": [
                chat_message(i, c, a, f, 1782956929673 - k * 1000)
                for k, (i, c, a, f) in enumerate(_MESSAGES)
            ],
            "total": 8,
            "offset": 0,
            "limit": 10,
        },
    },
    "chat-send": {
        "success": True,
        "data": chat_message(
            "iM6Dvf2zMmtKz6GY", "Hello from the REST API test suite!", None, "Test Message"
        ),
    },
    "chat-delete": {"success": True, "data": {"messageId": "iM6Dvf2zMmtKz6GY"}},
    "chat-flush": {"success": True, "data": {"message": "All chat messages have been deleted"}},
    "players": {"users": _PLAYERS},
    "selected": {"success": True, "selected": [{"tokenUuid": TOKEN, "actorUuid": ACTOR}]},
    "select": {
        "success": True,
        "count": 1,
        "message": "1 entities selected",
        "selected": [TOKEN],
    },
    "world-info": {
        "data": {
            "world": {"id": "test-world", "title": "Test World"},
            "system": {
                "id": "dnd5e",
                "title": "Dungeons & Dragons Fifth Edition",
                "version": "5.0.4",
            },
            "foundryVersion": "14.363",
            "modules": [
                {"id": "foundry-rest-api", "title": "Foundry REST API", "version": "3.2.3"}
                | {"active": True}
            ],
            "users": _PLAYERS,
            "activeScene": {"id": SCENE, "name": "test-scene-updated"},
        }
    },
    "execute-js": {"success": True, "result": "ws://relay:3010"},
    "roll": {
        "success": True,
        "data": {
            "id": "manual_1782956918692_n3iweer4g58",
            "chatMessageCreated": True,
            "roll": {
                "formula": "2d20kh",
                "total": 7,
                "isCritical": False,
                "isFumble": False,
                "dice": [
                    {
                        "faces": 20,
                        "results": [{"result": 3, "active": False}, {"result": 7, "active": True}],
                    }
                ],
                "timestamp": 1782956918692,
            },
        },
    },
}

RECORDED_DIR: Final = Path(__file__).parent / "recorded"
GET_UUID: Final = "Actor.elaraWizard00001"  # a character with her items, features and spells
SEARCH_FILTER: Final = "documentType:Actor"  # every actor of the world and of the packs
for _path in sorted(RECORDED_DIR.glob("*.json")):
    REPLIES[_path.stem] = orjson.loads(_path.read_bytes())

# An action the world does not know gets what the module would say about a missing handler's
# neighbour: an error reply (HTTP 400 through the relay), so a bad mix shows up as non-2xx.
UNKNOWN_ERROR: Final = "Unknown action"

# Reply sets (`python -m bench.fake_world --replies`), issue 15: its first target is measured
# with small replies (every reply under 600 bytes: what the hop costs, not the copying of large
# bodies), its second with the recorded 22 KB get-actor-details reply; `recorded` is every
# reply as recorded (what the forwarded mix measured before issue 15: /get's is 52 KB).
REPLY_SETS: Final = ("small", "actor", "recorded")
BIG_ACTIONS: Final = ("get-actor-details", "entity", "search", "chat-messages")


def _small(action: str, body: dict[str, Any]) -> dict[str, Any]:
    """The reply of one of BIG_ACTIONS cut to its shape: the same keys, short lists."""
    if action == "get-actor-details":
        details: dict[str, list[Any]] = {"items": [], "features": [], "spells": []}
        return {**body, "data": {**body["data"], **details}}
    if action == "entity":
        kept = ("_id", "name", "type", "img", "folder", "sort", "ownership", "flags")
        return {**body, "data": {key: body["data"][key] for key in kept}}
    if action == "search":
        return {**body, "results": body["results"][:1]}
    if action == "chat-messages":
        return {**body, "data": {**body["data"], "messages": body["data"]["messages"][:1]}}
    return body


def reply_body(action: str, replies: str = "recorded") -> dict[str, Any]:
    """The keys of `action`'s reply other than `type` and `requestId`, in reply set `replies`."""
    if replies not in REPLY_SETS:
        raise ValueError(f"unknown reply set {replies!r}: one of {', '.join(REPLY_SETS)}")
    body = REPLIES.get(action, {"error": UNKNOWN_ERROR})
    if replies == "small" or (replies == "actor" and action != "get-actor-details"):
        return _small(action, body)
    return body


_SENTINEL: Final = "\x00RID\x00"


def reply_parts(action: str, replies: str = "recorded") -> tuple[str, str]:
    """The reply text for `action` split around the requestId value (a JSON string)."""
    body = reply_body(action, replies)
    text = orjson.dumps({"type": action + "-result", "requestId": _SENTINEL, **body}).decode()
    marker = orjson.dumps(_SENTINEL).decode()
    before, after = text.split(marker, 1)
    return before, after


def build_reply(action: str, request_id: str, replies: str = "recorded") -> str:
    """The full reply text for one request (used where speed does not matter)."""
    before, after = reply_parts(action, replies)
    return before + orjson.dumps(request_id).decode() + after
