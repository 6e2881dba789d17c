"""The readable lines of world events (`dashboard/feed.py`) and the route matching of a session's
calls (`dashboard/calls.RouteFinder`): pure rules over the events' data and the route table."""

from __future__ import annotations

from typing import Any

from vttrelay.dashboard.calls import RouteFinder, session_key
from vttrelay.dashboard.feed import MAX_TEXT, check_name, describe, html_text
from vttrelay.relay.routes import ALL_SCOPES, ROUTES

SPEAKER = {"alias": "Brann Stoneheart", "actor": "brannFighter0001"}
ATTACK_CARD = (
    '<div class="dnd5e2 chat-card item-card"><h3>Longsword</h3><div class="card-content">'
    "<p>A versatile straight blade.</p></div><ul><li>misses Goblin (AC 15)</li></ul></div>"
)


def test_a_skill_check_reads_as_the_speaker_the_skill_and_the_total() -> None:
    message = {
        "content": "22",
        "speaker": {"alias": "Pip Tealeaf"},
        "flavor": "Stealth Skill Check",
        "isRoll": True,
        "rolls": [{"formula": "1d20 + 3 + 2", "total": 22}],
    }
    line = describe("chat-create", message)
    assert (line.kind, line.speaker, line.text, line.total) == (
        "roll",
        "Pip Tealeaf",
        "Stealth",
        "22",
    )
    assert line.formula == "1d20 + 3 + 2" and line.notes == ()


def test_an_attack_card_names_its_item_and_says_who_hits_or_misses() -> None:
    message = {"content": ATTACK_CARD, "speaker": SPEAKER, "flavor": "", "isRoll": True,
               "rolls": [{"formula": "1d20 + 5", "total": 7}]}  # fmt: skip
    line = describe("chat-create", message)
    assert line.text == "Longsword" and line.total == "7"
    assert line.notes == ("Brann Stoneheart misses Goblin (AC 15)",)


def test_a_goblin_missing_brann_reads_as_the_world_wrote_it() -> None:
    card = "<div><h3>Scimitar</h3><ul><li>misses Brann Stoneheart (AC 19)</li></ul></div>"
    message = {"content": card, "speaker": {"alias": "Goblin"}, "isRoll": True,
               "rolls": [{"formula": "1d20 + 4", "total": 9}]}  # fmt: skip
    assert describe("chat-create", message).notes == ("Goblin misses Brann Stoneheart (AC 19)",)


def test_plain_chat_is_its_text_without_markup_and_bounded() -> None:
    message = {"content": "Hello <b>table</b><script>alert(1)</script>", "author": {"name": "GM"}}
    line = describe("chat-create", message)
    assert (line.kind, line.speaker, line.text) == ("chat", "GM", "Hello table")
    text, items = html_text("<p>" + "x" * (MAX_TEXT * 50) + "</p>")
    assert len(text) == MAX_TEXT and items == []
    assert describe("chat-update", message).text == "Hello table (edited)"
    assert describe("chat-delete", {"id": "m1"}).text == "A message was deleted"


def test_rolls_combat_actor_and_scene_events_read_as_sentences() -> None:
    roll = {"speaker": {"alias": "Aria"}, "flavor": "Dexterity Saving Throw", "rollTotal": 14,
            "formula": "1d20 + 2"}  # fmt: skip
    line = describe("roll", roll)
    assert (line.speaker, line.text, line.total) == ("Aria", "Dexterity", "14")
    turn = {"round": 2, "turn": 1, "combatants": [{"name": "Brann"}, {"name": "Goblin"}]}
    assert describe("combat-turn", turn).text == "Round 2: Goblin's turn"
    joined = {"combatant": {"name": "Elara Quill"}}
    assert describe("combat-combatant-add", joined).text == "Elara Quill joins the encounter"
    hp = {"actorUuid": "Actor.e", "actorName": "Elara Quill",
          "changes": {"system": {"attributes": {"hp": {"value": 13}}}}}  # fmt: skip
    assert describe("actor-update", hp).text == "Elara Quill: HP 13"
    prone = {"actorUuid": "Actor.e", "actorName": "Elara Quill", "effect": {"name": "Prone"}}
    assert describe("actor-effect-add", prone).text == "Elara Quill: Prone added"
    # an event without a name (another world's) still says whose it is, by its uuid
    nameless = {"actorUuid": "Actor.e", "effect": {"name": "Prone"}}
    assert describe("actor-effect-add", nameless).text == "Actor.e: Prone added"
    assert describe("scene-update", {"name": "Tavern"}).text == "Scene Tavern: update"


def test_odd_data_never_breaks_a_line() -> None:
    odd: list[Any] = [None, [], "text", {"rolls": "x", "speaker": 3, "combatants": [1], "turn": 9}]
    for name in ("chat-create", "roll", "combat-turn", "actor-update", "scene-x", "hookName"):
        for data in odd:
            assert isinstance(describe(name, data).text, str)
    assert check_name("Skill Check") == "Skill Check"


def test_a_session_finds_forward_routes_and_their_path_parameters_only() -> None:
    finder = RouteFinder(ROUTES)
    found = finder.find("DELETE", "/chat/abc123")
    assert found is not None and found[0].path == "/chat/{messageId}"
    assert found[1] == {"messageId": "abc123"}
    assert finder.find("GET", "/scene/image") is not None  # a forward answered with a picture
    assert finder.find("GET", "/download") is not None  # the world's JSON reply (portraits)
    assert finder.find("POST", "/upload") is None  # reads a key and a spooled body itself
    assert finder.find("GET", "/clients") is None  # local: reads a key itself
    assert finder.find("GET", "/chat/subscribe") is None  # streams have their own door
    assert finder.find("PATCH", "/chat") is None
    assert finder.find("GET", "/" + "a" * 5000) is None


def test_a_session_key_is_its_accounts_own() -> None:
    key = session_key("alice")
    assert key.account == "alice" and key.scopes == ALL_SCOPES and key.client_ids == ()
    assert key.user_id is None and key.enabled and not key.expired()
