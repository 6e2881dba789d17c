"""Every /dnd5e endpoint through a real relay and the real embedded world over real sockets,
checked against the key sets of world-behaviour §3; each permission gate with a player userId."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.store.seed import ITEM_KEYS

ELARA = "Actor.elaraWizard00001"
CORVIN = "Actor.corvinWarlock001"
BRANN = "Actor.brannFighter0001"
PIP = "Actor.pipMonk000000001"
GOBLIN = "Actor.goblinNpc0000001"


def ok(status: int, body: dict[str, Any], action: str) -> dict[str, Any]:
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"], body
    assert body["type"] == f"{action}-result" and body["requestId"].startswith(f"{action}_")
    data: dict[str, Any] = body["data"]
    return data


def failed(status: int, body: dict[str, Any], error: str) -> None:
    assert status == 400, body
    assert body["error"] == error, body
    assert list(body)[:2] == ["type", "requestId"]


async def test_reads_and_rolls(world: Any, api: Any) -> None:
    status, body = await api(
        "GET",
        "/dnd5e/get-actor-details",
        actorUuid=ELARA,
        details=["resources", "items", "features", "spells"],
    )
    data = ok(status, body, "get-actor-details")
    assert list(data) == ["uuid", "resources", "spells", "spellSlots", "items", "features"]
    assert data["uuid"] == ELARA
    assert all(list(r) == ["value", "max", "sr", "lr", "label"] for r in data["resources"].values())
    assert all(set(i) == set(ITEM_KEYS) for i in data["items"] + data["spells"] + data["features"])
    assert data["spellSlots"] == {
        "spell1": {"value": 4, "max": 4},
        "spell2": {"value": 2, "max": 2},
    }
    status, body = await api(
        "GET",
        "/dnd5e/get-actor-details",
        actorUuid=PIP,
        details=["stats", "abilities", "skills", "details", "conditions"],
    )
    data = ok(status, body, "get-actor-details")
    assert list(data) == [
        "uuid",
        "stats",
        "abilities",
        "skills",
        "details",
        "conditions",
        "concentration",
    ]
    assert data["stats"]["ac"] == 15 and data["stats"]["speed"] == 35
    assert set(data["abilities"]) == {"str", "dex", "con", "int", "wis", "cha"}
    assert all(
        list(s) == ["ability", "total", "mod", "value", "passive"] for s in data["skills"].values()
    )

    for action, extra in (
        ("skill-check", {"skill": "prc"}),
        ("ability-save", {"ability": "dex"}),
        ("ability-check", {"ability": "str"}),
    ):
        status, body = await api("POST", f"/dnd5e/{action}", {"actorUuid": ELARA, **extra})
        data = ok(status, body, action)
        key = next(iter(extra))
        assert list(data) == ["actorUuid", key, "total", "formula", "result"]
        assert data["formula"].startswith("1d20")
    status, body = await api("POST", "/dnd5e/skill-check", {"actorUuid": ELARA, "skill": "xyz"})
    assert status == 400 and "Invalid skill" in body["error"]
    status, body = await api("POST", "/dnd5e/ability-save", {"actorUuid": ELARA, "ability": "x"})
    assert status == 400 and "Invalid ability" in body["error"]

    status, body = await api("POST", "/dnd5e/death-save", {"actorUuid": PIP})
    assert ok(status, body, "death-save") == {
        "actorUuid": PIP,
        "deathSaves": {"success": 0, "failure": 0},
    }
    status, body = await api("GET", "/dnd5e/concentration", actorUuid=CORVIN)
    assert ok(status, body, "get-concentration") == {
        "actorUuid": CORVIN,
        "isConcentrating": False,
        "effect": None,
        "spell": None,
    }


async def test_changes(world: Any, api: Any) -> None:
    status, body = await api(
        "POST",
        "/dnd5e/modify-item-charges",
        {"actorUuid": ELARA, "itemName": "Waterskin", "amount": -1},
    )
    data = ok(status, body, "modify-item-charges")
    assert list(data) == ["itemUuid", "oldCharges", "newCharges"]
    assert (data["oldCharges"], data["newCharges"]) == (4, 3)

    status, body = await api(
        "POST", "/dnd5e/modify-experience", {"actorUuid": ELARA, "amount": 100}
    )
    assert ok(status, body, "modify-experience") == {
        "actorUuid": ELARA,
        "oldXp": 900,
        "newXp": 1000,
    }

    for action, key in (("equip-item", "equipped"), ("attune-item", "attuned")):
        status, body = await api(
            "POST", f"/dnd5e/{action}", {"actorUuid": PIP, "itemName": "Dart", key: True}
        )
        data = ok(status, body, action)
        assert list(data) == ["actorUuid", "itemUuid", "itemName", key] and data[key] is True

    status, body = await api(
        "POST", "/dnd5e/modify-currency", {"actorUuid": PIP, "currency": "gp", "amount": 100}
    )
    assert ok(status, body, "modify-currency") == {
        "currency": "gp",
        "previous": 5,
        "current": 105,
        "delta": 100,
    }
    status, body = await api(
        "POST",
        "/dnd5e/transfer-currency",
        {"sourceActorUuid": PIP, "targetActorUuid": CORVIN, "currency": {"gp": 1}},
    )
    data = ok(status, body, "transfer-currency")
    assert list(data) == [
        "sourceActorUuid",
        "targetActorUuid",
        "transferred",
        "sourceBalance",
        "targetBalance",
    ]
    assert data["sourceBalance"]["gp"] == 104 and data["targetBalance"]["gp"] == 16
    assert list(data["sourceBalance"]) == ["pp", "gp", "ep", "sp", "cp"]
    status, body = await api(
        "POST",
        "/dnd5e/transfer-currency",
        {"sourceActorUuid": PIP, "targetActorUuid": CORVIN, "currency": {"pp": 1}},
    )
    failed(status, body, "Insufficient pp: Pip Tealeaf has 0, needs 1")

    status, body = await api(
        "POST", "/dnd5e/prepare-spell", {"actorUuid": ELARA, "spellName": "Sleep", "prepared": True}
    )
    data = ok(status, body, "prepare-spell")
    assert list(data) == ["spellName", "prepared", "uuid"] and data["prepared"] is True


async def test_use_and_rests(world: Any, api: Any) -> None:
    for action, actor, name in (
        ("use-item", PIP, "Torch"),
        ("use-feature", PIP, "Acolyte"),
        ("use-spell", ELARA, "Magic Missile"),
        ("use-ability", BRANN, "Handaxe"),
    ):
        status, body = await api(
            "POST", f"/dnd5e/{action}", {"actorUuid": actor, "abilityName": name}
        )
        data = ok(status, body, action)
        assert data["uuid"] == actor and data["ability"] == name
        assert isinstance(data["result"], str)
    assert list(data) == ["uuid", "ability", "result", "roll", "outcome"]
    assert list(data["roll"]) == ["total", "formula", "isCritical", "isFumble", "dice"]
    assert data["roll"]["dice"][0]["faces"] == 20
    assert list(data["roll"]["dice"][0]["results"][0]) == ["result", "active"]

    # slots are really spent: 3 more casts, then a clear failure
    for _ in range(3):
        status, body = await api(
            "POST", "/dnd5e/use-spell", {"actorUuid": ELARA, "abilityName": "Magic Missile"}
        )
        ok(status, body, "use-spell")
    status, body = await api(
        "POST", "/dnd5e/use-spell", {"actorUuid": ELARA, "abilityName": "Magic Missile"}
    )
    failed(status, body, "No spell slots of level 1 remaining to cast Magic Missile")

    status, body = await api("POST", "/dnd5e/short-rest", {"actorUuid": ELARA})
    data = ok(status, body, "short-rest")
    assert list(data) == ["actorUuid", "result"]
    assert list(data["result"]) == [
        "type",
        "deltas",
        "updateData",
        "updateItems",
        "newDay",
        "rolls",
        "clone",
        "dhd",
        "dhp",
        "longRest",
    ]
    assert len(data["result"]["clone"]) == 13
    status, body = await api("POST", "/dnd5e/long-rest", {"actorUuid": ELARA})
    data = ok(status, body, "long-rest")
    assert list(data["result"]) == [
        "type",
        "deltas",
        "updateData",
        "updateItems",
        "newDay",
        "rolls",
        "clone",
        "dhp",
        "dhd",
        "longRest",
    ]
    assert data["result"]["updateData"]["system.spells.spell1.value"] == 4
    status, body = await api(
        "POST", "/dnd5e/use-spell", {"actorUuid": ELARA, "abilityName": "Magic Missile"}
    )
    ok(status, body, "use-spell")

    # the rest summary and the roll cards are in chat
    status, body = await api("GET", "/chat", limit=50)
    flavors = [m["flavor"] for m in body["data"]["messages"]]
    assert "Long Rest (8 hours, new day)" in flavors and "Short Rest (1 hour)" in flavors


# Each gate with a player userId: (method, path, payload, error). Aria owns Elara and Brann and is
# LIMITED on Corvin and Pip; nobody but the GM sees the NPCs.
GATES = [
    (
        "GET",
        "/dnd5e/get-actor-details",
        {"actorUuid": GOBLIN, "details": ["stats"]},
        "User 'Aria' does not have permission to view actor 'Goblin'",
    ),
    (
        "POST",
        "/dnd5e/skill-check",
        {"actorUuid": GOBLIN, "skill": "ste"},
        "User 'Aria' does not have permission to view actor 'Goblin'",
    ),
    (
        "POST",
        "/dnd5e/ability-save",
        {"actorUuid": GOBLIN, "ability": "dex"},
        "User 'Aria' does not have permission to view actor 'Goblin'",
    ),
    (
        "POST",
        "/dnd5e/ability-check",
        {"actorUuid": GOBLIN, "ability": "dex"},
        "User 'Aria' does not have permission to view actor 'Goblin'",
    ),
    (
        "GET",
        "/dnd5e/concentration",
        {"actorUuid": GOBLIN},
        "User 'Aria' does not have permission to view actor 'Goblin'",
    ),
    (
        "POST",
        "/dnd5e/modify-item-charges",
        {"actorUuid": PIP, "itemName": "Waterskin", "amount": -1},
        "User 'Aria' does not have permission to modify item charges on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/use-item",
        {"actorUuid": PIP, "abilityName": "Torch"},
        "User 'Aria' does not have permission to use abilities on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/use-spell",
        {"actorUuid": CORVIN, "abilityName": "Command"},
        "User 'Aria' does not have permission to use abilities on 'Corvin Ash'",
    ),
    (
        "POST",
        "/dnd5e/use-feature",
        {"actorUuid": PIP, "abilityName": "Ki"},
        "User 'Aria' does not have permission to use abilities on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/use-ability",
        {"actorUuid": PIP, "abilityName": "Ki"},
        "User 'Aria' does not have permission to use abilities on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/modify-experience",
        {"actorUuid": PIP, "amount": 5},
        "User 'Aria' does not have permission to modify experience on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/short-rest",
        {"actorUuid": PIP},
        "User 'Aria' does not have permission to perform a short rest on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/long-rest",
        {"actorUuid": PIP},
        "User 'Aria' does not have permission to perform a long rest on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/death-save",
        {"actorUuid": PIP},
        "User 'Aria' does not have permission to roll death saves for 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/break-concentration",
        {"actorUuid": CORVIN},
        "User 'Aria' does not have permission to break concentration on 'Corvin Ash'",
    ),
    (
        "POST",
        "/dnd5e/concentration-save",
        {"actorUuid": CORVIN, "damage": 10},
        "User 'Aria' does not have permission to roll concentration saves for 'Corvin Ash'",
    ),
    (
        "POST",
        "/dnd5e/equip-item",
        {"actorUuid": PIP, "itemName": "Dart", "equipped": False},
        "User 'Aria' does not have permission to modify items on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/attune-item",
        {"actorUuid": PIP, "itemName": "Dart", "attuned": True},
        "User 'Aria' does not have permission to modify items on 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/transfer-currency",
        {"sourceActorUuid": PIP, "targetActorUuid": ELARA, "currency": {"gp": 1}},
        "User 'Aria' does not have permission to transfer currency from 'Pip Tealeaf'",
    ),
    (
        "POST",
        "/dnd5e/transfer-currency",
        {"sourceActorUuid": ELARA, "targetActorUuid": PIP, "currency": {"gp": 1}},
        "User 'Aria' does not have permission to transfer currency to 'Pip Tealeaf'",
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "payload", "error"), GATES, ids=[f"{g[1]}:{i}" for i, g in enumerate(GATES)]
)
async def test_permission_gate_for_a_player(
    world: Any, api: Any, method: str, path: str, payload: dict[str, Any], error: str
) -> None:
    if method == "GET":
        status, body = await api(method, path, userId="Aria", **payload)
    else:
        status, body = await api(method, path, {**payload, "userId": "Aria"})
    failed(status, body, error)
    # Pip's owner (by id) passes the same gate (transfers also need the other side)
    if "Pip" in error and "transfer" not in path:
        owner_payload = {**payload, "userId": "playerBen0000001"}
        status, body = await api(method, path, owner_payload)
        assert status == 200, body


async def test_unknown_user_and_limited_view(world: Any, api: Any) -> None:
    status, body = await api(
        "POST", "/dnd5e/skill-check", {"actorUuid": ELARA, "skill": "arc", "userId": "Zed"}
    )
    assert status == 400 and body["error"] == "User not found: Zed" and body["data"] is None
    # LIMITED suffices to view and roll
    status, body = await api(
        "GET", "/dnd5e/get-actor-details", actorUuid=PIP, details=["stats"], userId="Aria"
    )
    assert status == 200 and body["data"]["stats"]["name"] == "Pip Tealeaf"


async def test_concentration_of_the_selected_token(world: Any, api: Any) -> None:
    """`selected=true` in the query (GET) and body (POST) of the concentration endpoints."""
    status, body = await api("GET", "/dnd5e/concentration", selected=True)
    failed(status, body, "No token selected")
    status, body = await api(
        "POST", "/dnd5e/use-spell", {"actorUuid": ELARA, "abilityName": "Hold Person"}
    )
    ok(status, body, "use-spell")
    status, body = await api(
        "POST",
        "/select",
        {"uuids": ["Scene.sceneTavern00001.Token.tokElara00000001"], "overwrite": True},
    )
    assert status == 200, body
    status, body = await api("GET", "/dnd5e/concentration", selected="true")
    data = ok(status, body, "get-concentration")
    assert (data["actorUuid"], data["isConcentrating"], data["spell"]) == (
        ELARA,
        True,
        "Hold Person",
    )
    status, body = await api("POST", "/dnd5e/concentration-save", {"selected": True, "damage": 40})
    data = ok(status, body, "concentration-save")
    assert (data["actorUuid"], data["dc"]) == (ELARA, 20)
    assert list(data) == ["actorUuid", "dc", "total", "formula", "result", "maintained"]
    if data["maintained"]:
        status, body = await api(
            "POST", "/dnd5e/break-concentration", {"selected": True, "userId": "Aria"}
        )
        assert ok(status, body, "break-concentration")["actorUuid"] == ELARA
    status, body = await api("POST", "/dnd5e/break-concentration", {"selected": True})
    failed(status, body, "Actor 'Elara Quill' is not concentrating")


async def test_rolls_go_to_chat_by_default_with_chat_type_4(world: Any, api: Any) -> None:
    """DESIGN §6 item 7: createChatMessage defaults to true; roll messages are chat type 4."""
    await api("POST", "/dnd5e/skill-check", {"actorUuid": ELARA, "skill": "arc"})
    await api(
        "POST",
        "/dnd5e/ability-check",
        {"actorUuid": ELARA, "ability": "int", "createChatMessage": False},
    )
    await api("POST", "/dnd5e/ability-save", {"actorUuid": BRANN, "ability": "con"})
    status, body = await api("GET", "/chat", chatType=4)
    assert status == 200, body
    messages = body["data"]["messages"]
    assert [m["flavor"] for m in messages] == [
        "Constitution Saving Throw",
        "Arcana Skill Check",
    ]
    for message in messages:
        assert message["isRoll"] is True and message["flags"]["vttrelay"]["chatType"] == 4
        (roll,) = message["rolls"]
        assert list(roll) == ["formula", "total", "isCritical", "isFumble", "dice"]
    for number, params in ((0, {}), (2, {"chatType": 2}), (1, {"speaker": "pipMonk000000001"})):
        status, body = await api("POST", "/chat", {"content": f"type {number}", **params})
        assert status == 200 and body["data"]["flags"]["vttrelay"]["chatType"] == number
    for number in range(5):
        status, body = await api("GET", "/chat", chatType=number)
        types = {m["flags"]["vttrelay"]["chatType"] for m in body["data"]["messages"]}
        assert types <= {number}, number
        assert body["data"]["total"] == (2 if number == 4 else 0 if number == 3 else 1), number
