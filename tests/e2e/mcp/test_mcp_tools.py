"""The MCP server end to end: the `mcp` SDK's client over stdio (`vttrelay mcp` as a process) and
over streamable HTTP (`/mcp` on the relay), against a real relay with the embedded demo world."""

from __future__ import annotations

import base64
import json
from io import BytesIO
from typing import Any

import pytest
from PIL import Image
from tests.support.mcp import ELARA, PIP, TRANSPORTS, Demo, call, open_session, refused

from vttrelay.mcp.tools import TOOLS
from vttrelay.relay.routes import DEFAULT_SCOPES


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_against_the_demo_world(demo: Demo, transport: str) -> None:
    async with open_session(transport, demo.relay.url, demo.agent_key) as session:
        listed = (await session.list_tools()).tools
        assert [t.name for t in listed] == [t.name for t in TOOLS]
        for tool in listed:
            assert tool.description and tool.input_schema["type"] == "object"
        changing = {t.name for t in TOOLS if t.changes}
        for tool in listed:
            assert ("dry_run" in tool.input_schema["properties"]) == (tool.name in changing)

        world = await call(session, "world_overview")
        assert world["world"] == "vttrelay Demo World" and world["system"] == "dnd5e"
        assert {"name": "Pip Tealeaf", "uuid": PIP} in world["actors"]
        found = await call(session, "find", name="Pip", type="Actor")
        assert found == [{"name": "Pip Tealeaf", "type": "Actor (character)", "uuid": PIP}]

        elara = await call(session, "actor_summary", actor="Elara Quill")
        assert (elara["uuid"], elara["ac"], elara["hp"]) == (ELARA, 12, "20/20")
        assert elara["spellSlots"] == {"1": "4/4", "2": "2/2"}
        assert "Magic Missile" in elara["spells"]["level 1"]
        full = await demo.api("GET", "/dnd5e/get-actor-details", actorUuid=ELARA,
                              details=["stats", "spells", "items", "features"])  # fmt: skip
        assert len(json.dumps(elara)) * 10 < len(json.dumps(full))  # a tenth of the document

        picture = await session.call_tool("sheet_picture", {"actor": "Elara Quill"})
        assert not picture.is_error
        image = picture.content[0]
        assert image.type == "image" and image.mime_type == "image/png"
        drawn = Image.open(BytesIO(base64.b64decode(image.data)))
        assert drawn.format == "PNG" and drawn.width == 800  # the sheet at scale 0.8

        check = await call(session, "roll_check", actor=PIP, kind="skill", skill="Stealth")
        assert check["skill"] == "ste" and isinstance(check["total"], int)
        save = await call(session, "roll_check", actor="pip tealeaf", kind="save", ability="dex")
        assert save["ability"] == "dex" and isinstance(save["total"], int)
        dice = await call(session, "roll_dice", formula="2d6+3", flavor="Fireball? No.")
        assert 5 <= dice["roll"]["total"] <= 15 if "roll" in dice else 5 <= dice["total"] <= 15
        hit = await call(session, "attack", actor=PIP, weapon="Dart", target="Elara Quill")
        assert hit["used"] == "Dart" and hit["target"]["name"] == "Elara Quill"
        assert hit["summary"].startswith("Pip Tealeaf attacks Elara Quill with Dart, rolling ")

        await call(session, "use", actor=ELARA, kind="spell", name="Magic Missile")
        after = await call(session, "actor_summary", actor=ELARA)
        assert after["spellSlots"]["1"] == "3/4"
        rested = await call(session, "rest", actor=ELARA, kind="long")
        assert rested["rest"] == "long"
        assert (await call(session, "actor_summary", actor=ELARA))["spellSlots"]["1"] == "4/4"
        short = await call(session, "rest", actor=PIP, kind="short")
        assert short["rest"] == "short"

        assert (await call(session, "change_hp", actor=PIP, amount=-5))["hp"] == "19/24"
        assert (await call(session, "change_hp", actor=PIP, amount=100))["hp"] == "24/24"
        assert (await call(session, "change_hp", actor=PIP, amount=-100))["hp"] == "0/24"
        await call(session, "change_hp", actor=PIP, amount=24)

        await call(session, "set_condition", actor=PIP, condition="prone")
        assert (await call(session, "actor_summary", actor=PIP))["conditions"] == ["Prone"]
        await call(session, "set_condition", actor=PIP, condition="prone", active=False)
        assert (await call(session, "actor_summary", actor=PIP))["conditions"] == []

        coins = await call(session, "change_currency", actor=PIP, denomination="gp", amount=3)
        assert (coins["previous"], coins["current"]) == (5, 8)
        moved = await call(session, "transfer_currency", from_actor=PIP, to_actor=ELARA,
                           currency={"sp": 2})  # fmt: skip
        assert (moved["sourceBalance"]["sp"], moved["targetBalance"]["sp"]) == (18, 10)
        given = await call(session, "give_item", from_actor=PIP, to_actor=ELARA, item="Torch")
        assert given["success"] is True
        assert "Torch" in (await call(session, "actor_summary", actor=ELARA))["other"]
        removed = await call(session, "remove_item", actor=ELARA, item="Torch", quantity=1)
        assert removed["success"] is True
        equipped = await call(session, "equip_item", actor=ELARA, item="Dagger")
        assert (
            "Dagger (equipped)" in (await call(session, "actor_summary", actor=ELARA))["weapons"]
        ), equipped

        sent = await call(session, "send_chat", content="<p>The door creaks.</p>", alias="DM")
        assert (sent["speaker"], sent["text"]) == ("DM", "The door creaks.")
        chat = await call(session, "read_chat", limit=3)
        latest = chat["messages"][0]
        assert latest == {"id": sent["id"], "speaker": "DM", "text": "The door creaks."}

        started = await call(session, "encounter", action="start")
        assert started["round"] == 1 and len(started["order"]) == 4
        running = (await call(session, "encounters"))["encounters"]
        assert [e["id"] for e in running] == [started["id"]]
        await call(session, "encounter", action="next_turn")
        assert (await call(session, "encounters"))["encounters"][0]["turn"] == 1
        await call(session, "encounter", action="end")
        assert (await call(session, "encounters"))["encounters"] == []

        tokens = await call(session, "scene_tokens")
        pip = next(t for t in tokens["tokens"] if t["name"] == "Pip Tealeaf")
        moved_token = await call(session, "move_token", token="Pip Tealeaf", x=pip["x"] + 100,
                                 y=pip["y"])  # fmt: skip
        assert moved_token["x"] == pip["x"] + 100


DRY_RUNS: list[tuple[str, dict[str, Any], str]] = [
    ("roll_check", {"actor": PIP, "kind": "skill", "skill": "ste"}, "would roll 1d20+5"),
    ("roll_dice", {"formula": "1d8"}, "would roll 1d8"),
    ("attack", {"actor": PIP, "weapon": "Dart", "target": "Elara Quill"}, "attack roll"),
    ("use", {"actor": ELARA, "kind": "spell", "name": "Magic Missile"}, "level-1 spell slot (4/4"),
    ("use", {"actor": ELARA, "name": "Wand of Magic Missiles"}, "spend one use (7/7 left)"),
    ("use", {"actor": ELARA, "kind": "spell", "name": "Burning Hands",
             "targets": ["Pip Tealeaf", "Corvin Ash"]},
     "each of Pip Tealeaf, Corvin Ash makes a saving throw"),
    ("use", {"actor": PIP, "name": "Dart", "targets": ["Elara Quill", "Corvin Ash"]},
     "would fail: an attack takes one target"),
    ("rest", {"actor": PIP, "kind": "long"}, "would restore HP 24/24"),
    ("change_hp", {"actor": PIP, "amount": -30}, "HP 24/24 -> 0/24"),
    ("set_condition", {"actor": PIP, "condition": "poisoned"}, "poisoned: added"),
    ("change_currency", {"actor": PIP, "denomination": "gp", "amount": -2}, "gp: 5 -> 3"),
    ("transfer_currency", {"from_actor": PIP, "to_actor": ELARA, "currency": {"gp": 2}},
     "gp: source 5 -> 3, target 25 -> 27"),
    ("transfer_currency", {"from_actor": PIP, "to_actor": ELARA, "currency": {"pp": 1}},
     "would fail: not enough pp (has 0, needs 1)"),
    ("give_item", {"from_actor": PIP, "to_actor": ELARA, "item": "Torch"},
     "Torch: source 10 -> 9; the target gets 1"),
    ("remove_item", {"actor": PIP, "item": "Rations", "quantity": 2}, "Rations:"),
    ("equip_item", {"actor": ELARA, "item": "Dagger"}, "Dagger: equipped False -> True"),
    ("send_chat", {"content": "Hello", "alias": "DM"}, "would post 'Hello' as DM"),
    ("encounter", {"action": "start"}, "would start an encounter with the players' tokens"),
    ("encounter", {"action": "next_turn"}, "would fail: no encounter is running"),
    ("switch_scene", {"scene": "Goblin Ambush"}, "would make 'Goblin Ambush' the active scene"),
    ("move_token", {"token": "Pip Tealeaf", "x": 1000, "y": 800}, "-> (1000, 800)"),
]  # fmt: skip


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_dry_run_says_what_would_change_and_changes_nothing(
    demo: Demo, transport: str
) -> None:
    before = await demo.snapshot()
    async with open_session(transport, demo.relay.url, demo.agent_key) as session:
        covered = set()
        for name, args, expected in DRY_RUNS:
            answer = await call(session, name, **args, dry_run=True)
            assert answer["dryRun"] is True and expected in answer["change"], (name, answer)
            covered.add(name)
        assert covered == {t.name for t in TOOLS if t.changes}
    assert await demo.snapshot() == before


async def test_dry_run_of_an_encounter_turn_reads_the_running_encounter(demo: Demo) -> None:
    async with open_session("http", demo.relay.url, demo.agent_key) as session:
        started = await call(session, "encounter", action="start")
        before = await demo.snapshot()
        answer = await call(session, "encounter", action="next_turn", dry_run=True)
        first, second = started["order"][0]["name"], started["order"][1]["name"]
        assert answer["change"] == f"round 1 turn 0 ({first}) -> round 1 turn 1 ({second})"
        assert await demo.snapshot() == before


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_key_without_a_scope_sees_fewer_tools_and_gets_a_clear_error(
    demo: Demo, transport: str
) -> None:
    key = demo.key(DEFAULT_SCOPES, name="reader")  # no chat:write, entity:write, encounters
    before = await demo.snapshot()
    async with open_session(transport, demo.relay.url, key) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"world_overview", "actor_summary", "roll_check"} <= names
        assert not {"send_chat", "change_hp", "give_item", "encounter", "move_token"} & names
        text = await refused(session, "change_hp", actor=PIP, amount=-3)
        assert text == (
            "The relay refused the call (403): API key lacks required scope: entity:write. "
            "This API key may not do that; ask its owner for the scope."
        )
        assert "chat:write" in await refused(session, "send_chat", content="hi")
        dry = await refused(session, "send_chat", content="hi", dry_run=True)
        assert dry == "Dry run: the call would be refused: this API key lacks scope chat:write"
        nobody = await refused(session, "actor_summary", actor="Nobody")
        assert nobody == "No token or actor named 'Nobody'"
        assert "Invalid skill" in await refused(
            session, "roll_check", actor=PIP, kind="skill", skill="juggling"
        )
    assert await demo.snapshot() == before


async def test_a_forced_user_bounds_what_the_agent_may_do(demo: Demo) -> None:
    """A key bound to a player: the relay forces its userId, so the world refuses what the
    player may not do, and the tool says so."""
    key = str(demo.relay.key((*DEFAULT_SCOPES, "chat:write"), name="aria",
                             user_id="playerAria000001", rate_per_minute=0))  # fmt: skip
    async with open_session("http", demo.relay.url, key) as session:
        text = await refused(session, "rest", actor=PIP, kind="long")
        assert text.startswith("The relay refused the call (400): User 'Aria' does not have")
