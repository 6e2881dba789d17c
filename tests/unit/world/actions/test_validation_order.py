"""The validation ORDER of every action with its exact error texts (world-behaviour §2-5, §8):
each step adds one valid piece to the request and must fail on the next check in the module's
order; no failing step changes anything. An unknown `userId` is refused first, by every action."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import call

from vttrelay.world.actions.table import standard_table
from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
PIP = "Actor.pipMonk000000001"
GOBLIN = "Actor.goblinNpc0000001"
NOPE = "Actor.nope"
VALID_SKILLS = (
    "acr, ani, arc, ath, dec, his, ins, itm, inv, med, nat, prc, prf, per, rel, slt, ste, sur"
)

# action -> [(request params, expected error)], in the module's validation order.
ORDERS: dict[str, list[tuple[dict[str, Any], str]]] = {
    "get-actor-details": [
        ({"userId": "Aria"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, "details array is required and cannot be empty"),
        (
            {"userId": "Aria", "actorUuid": NOPE, "details": []},
            "details array is required and cannot be empty",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "details": "stats"},
            "details array is required and cannot be empty",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "details": ["stats"]},
            f"Actor not found with UUID: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": GOBLIN, "details": ["stats"]},
            "User 'Aria' does not have permission to view actor 'Goblin'",
        ),
    ],
    "modify-item-charges": [
        ({"userId": "Aria"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, "itemUuid or itemName is required"),
        ({"userId": "Aria", "actorUuid": NOPE, "itemName": "Rope"}, "amount must be a number"),
        (
            {"userId": "Aria", "actorUuid": NOPE, "itemName": "Rope", "amount": "1"},
            "amount must be a number",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "itemName": "Rope", "amount": 0.5},
            "amount must be a whole number of charges",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "itemName": "Rope", "amount": -1},
            f"Actor not found with UUID: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": PIP, "itemName": "Rope", "amount": -1},
            "User 'Aria' does not have permission to modify item charges on 'Pip Tealeaf'",
        ),
        (
            {"userId": "Ben", "actorUuid": PIP, "itemName": "Rope", "amount": -1},
            "Item not found on actor Pip Tealeaf",
        ),
    ],
    "skill-check": [
        ({"userId": "Aria"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, "skill is required"),
        (
            {"userId": "Aria", "actorUuid": NOPE, "skill": "xyz"},
            f"Invalid skill 'xyz'. Valid skills: {VALID_SKILLS}",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "skill": "ste"},
            f"Actor not found with UUID: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": GOBLIN, "skill": "ste"},
            "User 'Aria' does not have permission to view actor 'Goblin'",
        ),
    ],
    "death-save": [
        ({"userId": "Aria"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, f"Actor not found with UUID: {NOPE}"),
        (
            {"userId": "Aria", "actorUuid": PIP},
            "User 'Aria' does not have permission to roll death saves for 'Pip Tealeaf'",
        ),
    ],
    "modify-experience": [
        ({"userId": "Aria", "amount": 5}, "Either actorUuid or selected must be provided"),
        ({"userId": "Aria", "selected": False}, "Either actorUuid or selected must be provided"),
        ({"userId": "Aria", "actorUuid": NOPE}, "amount must be a number"),
        ({"userId": "Aria", "actorUuid": NOPE, "amount": 5}, "Actor not found"),
        ({"userId": "Aria", "selected": True, "amount": 5}, "No token selected"),
        (
            {"userId": "Aria", "actorUuid": PIP, "amount": 5},
            "User 'Aria' does not have permission to modify experience on 'Pip Tealeaf'",
        ),
    ],
    "get-concentration": [
        ({"userId": "Aria"}, "actorUuid or actorName is required"),
        ({"userId": "Aria", "actorName": "Nobody"}, "Actor not found: Nobody"),
        ({"userId": "Aria", "actorUuid": NOPE, "actorName": "Goblin"}, f"Actor not found: {NOPE}"),
        (
            {"userId": "Aria", "actorName": "goblin"},
            "User 'Aria' does not have permission to view actor 'Goblin'",
        ),
    ],
    "break-concentration": [
        ({"userId": "Aria"}, "actorUuid or actorName is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, f"Actor not found: {NOPE}"),
        (
            {"userId": "Aria", "actorUuid": PIP},
            "User 'Aria' does not have permission to break concentration on 'Pip Tealeaf'",
        ),
        ({"userId": "Ben", "actorUuid": PIP}, "Actor 'Pip Tealeaf' is not concentrating"),
    ],
    "concentration-save": [
        ({"userId": "Aria"}, "actorUuid or actorName is required"),
        ({"userId": "Aria", "actorName": "Nobody"}, "Actor not found: Nobody"),
        (
            {"userId": "Aria", "actorName": "Pip Tealeaf"},
            "User 'Aria' does not have permission to roll concentration saves for 'Pip Tealeaf'",
        ),
        # not concentrating is checked before the damage
        ({"userId": "Ben", "actorName": "Pip Tealeaf"}, "Actor 'Pip Tealeaf' is not concentrating"),
    ],
    "equip-item": [
        ({"userId": "Aria", "equipped": True}, "actorUuid or actorName is required"),
        ({"userId": "Aria", "actorName": "Nobody"}, "Actor not found: Nobody"),
        (
            {"userId": "Aria", "actorUuid": PIP},
            "User 'Aria' does not have permission to modify items on 'Pip Tealeaf'",
        ),
        ({"userId": "Ben", "actorUuid": PIP}, "itemUuid or itemName is required"),
        (
            {"userId": "Ben", "actorUuid": PIP, "itemName": "Nope"},
            "Item not found on actor Pip Tealeaf: Nope",
        ),
        (
            {"userId": "Ben", "actorUuid": PIP, "itemUuid": f"{PIP}.Item.nope"},
            f"Item not found on actor Pip Tealeaf: {PIP}.Item.nope",
        ),
        (
            {"userId": "Ben", "actorUuid": PIP, "itemName": "dart"},
            "equipped must be a boolean",
        ),
        (
            {"userId": "Ben", "actorUuid": PIP, "itemName": "dart", "equipped": "yes"},
            "equipped must be a boolean",
        ),
    ],
    "transfer-currency": [
        (
            {"userId": "Aria", "currency": {"gp": 1}},
            "sourceActorUuid or sourceActorName is required",
        ),
        (
            {"userId": "Aria", "sourceActorName": "Nobody"},
            "targetActorUuid or targetActorName is required",
        ),
        (
            {"userId": "Aria", "sourceActorName": "Nobody", "targetActorName": "Ghost"},
            "currency object is required",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorName": "Nobody",
                "targetActorName": "Ghost",
                "currency": "gp",
            },
            "currency object is required",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorName": "Nobody",
                "targetActorName": "Ghost",
                "currency": {"gp": 1},
            },
            "Actor not found: Nobody",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorUuid": ELARA,
                "targetActorName": "Ghost",
                "currency": {"gp": 1},
            },
            "Actor not found: Ghost",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorUuid": PIP,
                "targetActorUuid": ELARA,
                "currency": {"gp": 1},
            },
            "User 'Aria' does not have permission to transfer currency from 'Pip Tealeaf'",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorUuid": ELARA,
                "targetActorUuid": PIP,
                "currency": {"gp": 1},
            },
            "User 'Aria' does not have permission to transfer currency to 'Pip Tealeaf'",
        ),
        (
            {
                "userId": "Aria",
                "sourceActorUuid": ELARA,
                "targetActorName": "Brann Stoneheart",
                "currency": {"gp": 1, "pp": 5},
            },
            "Insufficient pp: Elara Quill has 0, needs 5",
        ),
    ],
    "modify-currency": [
        ({"userId": "Aria"}, "Missing required params: uuid, currency, amount"),
        (
            {"userId": "Aria", "actorUuid": PIP, "currency": "gp"},
            "Missing required params: uuid, currency, amount",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "currency": "gp", "amount": 1},
            f"Actor not found: {NOPE}",
        ),
    ],
    "prepare-spell": [
        ({"userId": "Aria"}, "Missing required params: uuid, spellName, prepared"),
        (
            {"userId": "Aria", "actorUuid": ELARA, "spellName": "Sleep"},
            "Missing required params: uuid, spellName, prepared",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "spellName": "Sleep", "prepared": True},
            f"Actor not found: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": ELARA, "spellName": "Wish", "prepared": True},
            "Spell not found: Wish",
        ),
    ],
    "chat-delete": [
        (
            {"userId": "Aria", "messageId": "missing000000001"},
            "Chat message not found: missing000000001",
        ),
    ],
    "chat-flush": [({"userId": "Aria"}, "User 'Aria' must be a GM to flush chat messages")],
    "select": [({"userId": "Aria", "all": True}, "User 'Aria' must be a GM to select tokens")],
    "selected": [({"userId": "Ben"}, "User 'Ben' must be a GM to get selected tokens")],
}
for _kind in ("ability-save", "ability-check"):
    ORDERS[_kind] = [
        ({"userId": "Aria"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, "ability is required"),
        (
            {"userId": "Aria", "actorUuid": NOPE, "ability": "luck"},
            "Invalid ability 'luck'. Valid abilities: str, dex, con, int, wis, cha",
        ),
        (
            {"userId": "Aria", "actorUuid": NOPE, "ability": "dex"},
            f"Actor not found with UUID: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": GOBLIN, "ability": "dex"},
            "User 'Aria' does not have permission to view actor 'Goblin'",
        ),
    ]
for _rest, _words in (
    ("short-rest", "perform a short rest on"),
    ("long-rest", "perform a long rest on"),
):
    ORDERS[_rest] = [
        ({"userId": "Aria"}, "Either actorUuid or selected must be provided"),
        ({"userId": "Aria", "actorUuid": NOPE}, "Actor not found"),
        ({"userId": "Aria", "selected": True}, "No token selected"),
        (
            {"userId": "Aria", "actorUuid": PIP},
            f"User 'Aria' does not have permission to {_words} 'Pip Tealeaf'",
        ),
    ]
for _use in ("use-ability", "use-feature", "use-spell", "use-item"):
    ORDERS[_use] = [
        ({"userId": "Aria", "abilityName": "Ki"}, "actorUuid is required"),
        ({"userId": "Aria", "actorUuid": NOPE}, "abilityUuid or abilityName is required"),
        (
            {"userId": "Aria", "actorUuid": NOPE, "abilityName": "Ki"},
            f"Actor not found with UUID: {NOPE}",
        ),
        (
            {"userId": "Aria", "actorUuid": PIP, "abilityName": "Ki"},
            "User 'Aria' does not have permission to use abilities on 'Pip Tealeaf'",
        ),
        (
            {"userId": "Ben", "actorUuid": PIP, "abilityName": "Fireball"},
            "Ability not found on actor Pip Tealeaf",
        ),
    ]
# the endpoint's item types: a feature is not an item and an item is not a spell
ORDERS["use-item"].append(
    (
        {"userId": "Ben", "actorUuid": PIP, "abilityName": "Ki"},
        "Ability not found on actor Pip Tealeaf",
    )
)
ORDERS["use-spell"].append(
    (
        {"userId": "Ben", "actorUuid": PIP, "abilityName": "Dart"},
        "Ability not found on actor Pip Tealeaf",
    )
)
ORDERS["use-feature"].append(
    (
        {"userId": "Ben", "actorUuid": PIP, "abilityName": "Dart"},
        "Ability not found on actor Pip Tealeaf",
    )
)
WITH_SUCCESS_FALSE = {"chat-delete", "chat-flush", "select", "selected"}


def _state(world: World) -> dict[str, Any]:
    with world.store.transaction() as tx:
        return {c: tx.all(c) for c in ("Actor", "ChatMessage", "Scene", "User", "Setting")}


@pytest.mark.parametrize("action", sorted(ORDERS))
async def test_validation_order_and_texts(world: World, action: str) -> None:
    before = _state(world)
    for params, error in ORDERS[action]:
        reply = await call(world, action, **params)
        head = {"type": f"{action}-result", "requestId": f"{action}_1"}
        extra = {"success": False} if action in WITH_SUCCESS_FALSE else {}
        assert reply == {**head, **extra, "error": error}, params
    assert _state(world) == before
    assert world.selection == []


async def test_concentration_save_checks_damage_after_concentration(world: World) -> None:
    assert "error" not in await call(world, "use-spell", actorUuid=ELARA, abilityName="Hold Person")
    before = _state(world)
    for damage in (None, "12", True):
        params: dict[str, Any] = {"actorUuid": ELARA, "userId": "Aria"}
        if damage is not None:
            params["damage"] = damage
        reply = await call(world, "concentration-save", **params)
        assert reply["error"] == "damage must be a number", damage
    assert _state(world) == before


# every action of the world that looks at userId (get-status-effects never does, as in the
# module: endpoints-beyond-seed §5.1)
WORLD_ACTIONS = sorted(name for name, spec in standard_table().specs.items() if spec.resolve_user)


@pytest.mark.parametrize("action", WORLD_ACTIONS)
async def test_an_unknown_user_is_refused_first_by_every_action(world: World, action: str) -> None:
    before = _state(world)
    for ref in ("Zed", "playerAria00000X"):
        reply = await call(world, action, userId=ref, actorUuid=NOPE)
        assert reply == {
            "type": f"{action}-result",
            "requestId": f"{action}_1",
            "error": f"User not found: {ref}",
            "data": None,
        }
        assert list(reply) == ["type", "requestId", "error", "data"]
    assert _state(world) == before


async def test_modify_currency_and_prepare_spell_need_no_ownership(world: World) -> None:
    """world-behaviour §7: the user must exist, but these two check no permission."""
    reply = await call(
        world, "modify-currency", actorUuid=PIP, currency="gp", amount=3, userId="Aria"
    )
    assert reply["data"] == {"currency": "gp", "previous": 5, "current": 8, "delta": 3}
    reply = await call(
        world, "prepare-spell", actorUuid=ELARA, spellName="sleep", prepared=True, userId="Ben"
    )
    assert reply["data"]["spellName"] == "Sleep" and reply["data"]["prepared"] is True
