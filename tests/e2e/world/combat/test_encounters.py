"""Encounter routes end to end: a real relay, the demo world over a real WebSocket, every route's
success and errors, the `userId` gates, and a whole combat checked against /encounters/subscribe.
"""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.rules.dice import ScriptedRandom

TAVERN = "Scene.sceneTavern00001.Token."
ELARA_TOKEN = TAVERN + "tokElara00000001"
BRANN_TOKEN = TAVERN + "tokBrann00000001"
GOBLIN_TOKEN = TAVERN + "tokGoblin0000001"
BANDIT_TOKEN = TAVERN + "tokBandit0000001"
WOLF_TOKEN = TAVERN + "tokWolf000000001"
BANDIT = "Actor.banditNpc0000001"
LONGSWORD = "Actor.brannFighter0001.Item.EtFdHYqKBaUeogxF"  # Second Wind
NAV = ("next-turn", "next-round", "last-turn", "last-round")
COMBATANT_KEYS = ["id", "name", "tokenUuid", "actorUuid", "img", "initiative", "hidden", "defeated"]


async def _encounters(api: Any, **query: Any) -> list[dict[str, Any]]:
    status, body = await api("GET", "/encounters", **query)
    assert status == 200, body
    result: list[dict[str, Any]] = body["encounters"]
    return result


async def _start(api: Any, body: dict[str, Any], **query: Any) -> dict[str, Any]:
    status, reply = await api("POST", "/start-encounter", body, **query)
    assert status == 200, reply
    return reply


async def test_start_encounter_from_tokens_actors_selection_and_players(
    api: Any, world: EmbeddedWorld
) -> None:
    world.world.dice.rng = ScriptedRandom([18, 4])
    # The reference relay's name `tokens` and the module's `tokenUuids` both work.
    reply = await _start(
        api, {"name": "Road fight", "tokens": [GOBLIN_TOKEN, BANDIT], "rollNPC": True}
    )
    assert list(reply) == ["type", "requestId", "encounterId", "encounter"]
    assert reply["type"] == "start-encounter-result"
    encounter = reply["encounter"]
    assert list(encounter) == ["id", "name", "round", "turn", "combatants"]
    assert (encounter["name"], encounter["round"], encounter["turn"]) == ("Road fight", 1, 0)
    goblin, bandit = encounter["combatants"]  # turn order: 18 + 2 before 4 + 1
    assert list(goblin) == COMBATANT_KEYS
    assert goblin["tokenUuid"] == GOBLIN_TOKEN and goblin["initiative"] == 20
    assert goblin["actorUuid"] == GOBLIN_TOKEN + ".Actor.goblinNpc0000001"  # unlinked token
    assert bandit["tokenUuid"] == BANDIT_TOKEN and bandit["initiative"] == 5
    assert (goblin["name"], goblin["hidden"], goblin["defeated"]) == ("Goblin", False, False)
    # each initiative roll is a chat message, as the tabletop posts it
    status, chat = await api("GET", "/chat", limit=2)
    assert status == 200, chat
    flavors = {m["flavor"]: m["rolls"][0]["total"] for m in chat["data"]["messages"]}
    assert flavors == {"Goblin rolls for Initiative!": 20, "Bandit rolls for Initiative!": 5}

    status, _ = await api("POST", "/select", {"uuids": [ELARA_TOKEN], "overwrite": True})
    assert status == 200
    second = await _start(
        api, {"tokenUuids": [BRANN_TOKEN], "startWithSelected": True, "rollAll": True}
    )
    members = second["encounter"]["combatants"]
    assert second["encounter"]["name"] == "New Encounter"
    assert {m["tokenUuid"] for m in members} == {BRANN_TOKEN, ELARA_TOKEN}
    assert all(isinstance(m["initiative"], int) for m in members)
    initiatives = [m["initiative"] for m in members]
    assert initiatives == sorted(initiatives, reverse=True)
    assert members[0]["actorUuid"] in ("Actor.brannFighter0001", "Actor.elaraWizard00001")

    players = await _start(api, {"startWithPlayers": True, "startWithSelected": True})
    names = sorted(m["name"] for m in players["encounter"]["combatants"])
    assert names == ["Brann Stoneheart", "Corvin Ash", "Elara Quill", "Pip Tealeaf"]  # no repeat
    assert all(m["initiative"] is None for m in players["encounter"]["combatants"])

    listed = await _encounters(api)
    assert [e["id"] for e in listed] == [
        reply["encounterId"],
        second["encounterId"],
        players["encounterId"],
    ]
    assert [e["current"] for e in listed] == [False, False, True]  # the newest is current
    assert list(listed[0]) == ["id", "name", "round", "turn", "current", "combatants"]
    assert listed[0]["combatants"] == encounter["combatants"]


async def test_start_encounter_errors_change_nothing(api: Any, world: EmbeddedWorld) -> None:
    bad = "Scene.sceneTavern00001.Token.nope"
    for tokens, error in (
        ([GOBLIN_TOKEN, bad], f"Entity not found: {bad}"),
        ([LONGSWORD], f"Entity must be a Token or Actor: {LONGSWORD}"),
    ):
        status, body = await api("POST", "/start-encounter", {"tokenUuids": tokens})
        assert (status, body["error"]) == (400, error)
        assert list(body) == ["type", "requestId", "error"]
    status, body = await api("POST", "/start-encounter", {"tokenUuids": "x"})
    assert (status, body) == (400, {"error": "'tokenUuids' must be a valid array"})
    status, body = await api("POST", "/start-encounter", {"rollAll": "yes"})
    assert (status, body) == (400, {"error": "'rollAll' must be a valid boolean"})
    status, body = await api("POST", "/start-encounter", {}, userId="Aria")
    assert (status, body["error"]) == (400, "User 'Aria' must be a GM to start encounters")
    status, body = await api("POST", "/start-encounter", {}, userId="nobody")
    assert status == 400 and body["error"] == "User not found: nobody" and body["data"] is None
    assert await _encounters(api) == []


async def test_navigation_walks_turns_and_rounds(api: Any, world: EmbeddedWorld) -> None:
    world.world.dice.rng = ScriptedRandom([15, 10, 5])
    started = await _start(
        api, {"tokenUuids": [GOBLIN_TOKEN, BANDIT_TOKEN, WOLF_TOKEN], "rollAll": True}
    )
    cid = started["encounterId"]
    order = [m["tokenUuid"] for m in started["encounter"]["combatants"]]
    assert order == [GOBLIN_TOKEN, BANDIT_TOKEN, WOLF_TOKEN]  # 17, 11, 7

    async def move(route: str, **query: Any) -> dict[str, Any]:
        status, body = await api("POST", f"/{route}", {}, **query)
        assert status == 200, body
        return body

    step = await move("next-turn")
    assert list(step) == [
        "type",
        "requestId",
        "encounterId",
        "action",
        "currentTurn",
        "currentRound",
        "actorTurn",
        "tokenTurn",
        "encounter",
    ]
    assert (step["action"], step["currentRound"], step["currentTurn"]) == ("nextTurn", 1, 1)
    assert step["tokenTurn"] == BANDIT_TOKEN
    assert step["actorTurn"] == BANDIT_TOKEN + ".Actor.banditNpc0000001"
    assert step["encounter"] == {"id": cid, "name": "New Encounter", "round": 1, "turn": 1}
    seen = []
    for route in ("next-turn", "next-turn", "last-turn", "next-round", "last-round", "last-turn"):
        body = await move(route)
        seen.append((body["action"], body["currentRound"], body["currentTurn"], body["tokenTurn"]))
    assert seen == [
        ("nextTurn", 1, 2, WOLF_TOKEN),
        ("nextTurn", 2, 0, GOBLIN_TOKEN),  # past the last: the next round
        ("previousTurn", 1, 2, WOLF_TOKEN),  # before the first: the previous round's last
        ("nextRound", 2, 0, GOBLIN_TOKEN),
        ("previousRound", 1, 2, WOLF_TOKEN),
        ("previousTurn", 1, 1, BANDIT_TOKEN),
    ]
    # back to before the start: round 0, nobody's turn (no actorTurn/tokenTurn)
    await move("last-round")
    body = await move("last-round")
    assert (body["currentRound"], body["currentTurn"]) == (0, None)
    assert "actorTurn" not in body and "tokenTurn" not in body

    # `encounter` (the reference relay's name) and `encounterId` pick a non-current encounter
    other = await _start(api, {"tokenUuids": [ELARA_TOKEN]})
    assert (await _encounters(api))[-1]["id"] == other["encounterId"]
    body = await move("next-round", encounter=cid)  # still nobody's turn, as the tabletop keeps
    assert (body["encounterId"], body["currentRound"], body["currentTurn"]) == (cid, 1, None)
    body = await move("next-turn", encounterId=cid)
    assert (body["encounterId"], body["currentRound"], body["currentTurn"]) == (cid, 1, 0)
    listed = {e["id"]: e for e in await _encounters(api)}
    assert (listed[other["encounterId"]]["round"], listed[other["encounterId"]]["turn"]) == (1, 0)

    for route in NAV:
        status, body = await api("POST", f"/{route}", {"encounterId": "nope"})
        assert (status, body) == (
            400,
            {
                "type": f"{route}-result",
                "requestId": body["requestId"],
                "error": "Encounter with ID nope not found",
            },
        )


async def test_navigation_errors_and_gates(api: Any, world: EmbeddedWorld) -> None:
    operations = {
        "next-turn": "advance encounter turns",
        "next-round": "advance encounter rounds",
        "last-turn": "revert encounter turns",
        "last-round": "revert encounter rounds",
        "end-encounter": "end encounters",
    }
    for route in NAV:
        # the module answers a failed last-round as `encounter-navigation`, which leaves the
        # caller waiting for the relay's timeout; here it is an error reply like the others
        status, body = await api("POST", f"/{route}")
        assert (status, body["type"], body["error"]) == (
            400,
            f"{route}-result",
            "No active encounter",
        )
    status, body = await api("POST", "/end-encounter")
    assert (status, body["error"]) == (400, "No encounter not found")
    status, body = await api("POST", "/end-encounter", encounterId="nope")
    assert (status, body["error"]) == (400, "Encounter with ID nope not found")
    started = await _start(api, {"tokenUuids": [GOBLIN_TOKEN]})
    for route, operation in operations.items():
        status, body = await api("POST", f"/{route}", {"userId": "Ben"})
        assert (status, body["error"]) == (400, f"User 'Ben' must be a GM to {operation}")
        status, body = await api("POST", f"/{route}", userId="nobody")
        assert (status, body["error"], body["data"]) == (400, "User not found: nobody", None)
    assert (await _encounters(api))[0]["round"] == 1  # nothing moved
    status, body = await api("POST", "/next-turn", {"userId": "Gamemaster"})
    assert status == 200 and body["currentRound"] == 2  # one combatant: the next round

    status, body = await api("POST", "/end-encounter", {"encounter": started["encounterId"]})
    assert status == 200, body
    assert body == {
        "type": "end-encounter-result",
        "requestId": body["requestId"],
        "encounterId": started["encounterId"],
        "message": "Encounter successfully ended",
    }
    assert await _encounters(api) == []


async def test_add_and_remove_combatants(api: Any, world: EmbeddedWorld) -> None:
    status, body = await api("POST", "/add-to-encounter", {"uuids": [GOBLIN_TOKEN]})
    assert (status, body["error"]) == (400, "No active encounter")
    world.world.dice.rng = ScriptedRandom([10, 10, 19, 2])
    started = await _start(api, {"tokenUuids": [GOBLIN_TOKEN, BANDIT_TOKEN], "rollAll": True})
    cid = started["encounterId"]  # goblin 12, bandit 11
    status, body = await api("POST", "/next-turn")
    assert body["tokenTurn"] == BANDIT_TOKEN

    status, body = await api(
        "POST",
        "/add-to-encounter",
        {
            "uuids": [WOLF_TOKEN, "Actor.brannFighter0001", "Actor.nope", LONGSWORD],
            "rollInitiative": True,
        },
    )
    assert status == 200, body
    assert list(body) == ["type", "requestId", "encounterId", "added", "failed"]
    assert body["encounterId"] == cid
    assert body["added"] == [WOLF_TOKEN, "Actor.brannFighter0001"]
    assert body["failed"] == [
        {"uuid": "Actor.nope", "reason": "Entity not found"},
        {"uuid": LONGSWORD, "reason": "Entity must be a Token or Actor"},
    ]
    [encounter] = await _encounters(api)
    by_token = {m["tokenUuid"]: m for m in encounter["combatants"]}
    assert by_token[WOLF_TOKEN]["initiative"] == 21  # 19 + 2, rolled for the new ones only
    assert by_token[BRANN_TOKEN]["initiative"] == 3  # 2 + 1
    assert by_token[GOBLIN_TOKEN]["initiative"] == 12
    # the bandit's turn stays the bandit's: wolf 21, goblin 12, bandit 11, brann 3
    assert encounter["combatants"][encounter["turn"]]["tokenUuid"] == BANDIT_TOKEN
    assert encounter["turn"] == 2

    # a player adds only what it owns; the reason of a refusal is the permission error
    status, body = await api(
        "POST", "/add-to-encounter", {"uuids": [ELARA_TOKEN, BANDIT], "userId": "Aria"}
    )
    assert status == 200, body
    assert body["added"] == [ELARA_TOKEN]
    assert body["failed"] == [
        {"uuid": BANDIT, "reason": "User 'Aria' does not have permission to add to encounter "
         "'Bandit'"}
    ]  # fmt: skip
    # selected tokens not yet in the encounter
    await api("POST", "/select", {"uuids": [ELARA_TOKEN, WOLF_TOKEN, TAVERN + "tokPip0000000001"],
                                  "overwrite": True})  # fmt: skip
    status, body = await api("POST", "/add-to-encounter", {"selected": True})
    assert body["added"] == [TAVERN + "tokPip0000000001"] and body["failed"] == []

    status, body = await api(
        "POST",
        "/remove-from-encounter",
        {"uuids": [BANDIT_TOKEN, GOBLIN_TOKEN, "Actor.nope", "Actor.corvinWarlock001"]},
    )
    assert status == 200, body
    assert list(body) == ["type", "requestId", "encounterId", "removed", "failed"]
    assert body["removed"] == [BANDIT_TOKEN, GOBLIN_TOKEN]
    assert body["failed"] == [
        {"uuid": "Actor.nope", "reason": "Entity not found"},
        {"uuid": "Actor.corvinWarlock001", "reason": "No combatant found for this entity"},
    ]
    [encounter] = await _encounters(api)
    # the bandit (current) left: the turn passes to the next survivor, Brann
    assert encounter["combatants"][encounter["turn"]]["tokenUuid"] == BRANN_TOKEN
    status, body = await api(
        "POST", "/remove-from-encounter", {"uuids": [WOLF_TOKEN], "userId": "Ben"}
    )
    assert body["removed"] == [] and body["failed"] == [
        {"uuid": WOLF_TOKEN, "reason": "User 'Ben' does not have permission to remove from "
         "encounter 'Wolf'"}
    ]  # fmt: skip
    # an actor leaves with all its combatants; the selected tokens' combatants leave too
    status, body = await api(
        "POST", "/remove-from-encounter", {"uuids": ["Actor.elaraWizard00001"], "selected": True}
    )
    assert body["removed"] == [
        "Actor.elaraWizard00001",
        ELARA_TOKEN,
        TAVERN + "tokPip0000000001",
        WOLF_TOKEN,
    ]  # the selection, in scene order
    [encounter] = await _encounters(api)
    assert [m["tokenUuid"] for m in encounter["combatants"]] == [BRANN_TOKEN]
    status, body = await api("POST", "/remove-from-encounter", {"uuids": "x"})
    assert (status, body) == (400, {"error": "'uuids' must be a valid array"})
    status, body = await api("POST", "/remove-from-encounter", {"userId": "nobody"})
    assert (status, body["error"]) == (400, "User not found: nobody")


def _turn_state(event: Any) -> tuple[str | None, int, int | None]:
    return event.name, event.data["round"], event.data["turn"]


async def test_a_whole_combat_on_the_event_stream(
    relay: Any, api: Any, world: EmbeddedWorld, sse: Any
) -> None:
    """Start, three rounds with a defeated combatant passed over, end: checked against
    /encounters/subscribe, unfiltered and filtered by encounterId."""
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    everything = await sse(relay, "/encounters/subscribe", key, clientId=CLIENT_ID)
    assert (await everything.event()).name == "connected"
    await eventually(lambda: world.world.subscriptions.get("combat-events") == 1)

    world.world.dice.rng = ScriptedRandom([15, 10, 5])
    started = await _start(
        api, {"tokenUuids": [GOBLIN_TOKEN, BRANN_TOKEN, BANDIT_TOKEN], "rollAll": True}
    )
    cid = started["encounterId"]
    members = started["encounter"]["combatants"]
    assert [(m["name"], m["initiative"]) for m in members] == [
        ("Goblin", 17),
        ("Brann Stoneheart", 11),
        ("Bandit", 6),
    ]
    ids = {m["name"]: m["id"] for m in members}

    def combatant(name: str, initiative: int) -> dict[str, Any]:
        return {
            "id": ids[name],
            "name": name,
            "initiative": initiative,
            "defeated": False,
            "uuid": f"Combat.{cid}.Combatant.{ids[name]}",
        }

    order = [combatant("Goblin", 17), combatant("Brann Stoneheart", 11), combatant("Bandit", 6)]
    start, *added = await everything.events(4)
    # combatStart fires before any combatant joins, as the tabletop's startCombat does
    assert (start.name, start.data) == (
        "combat-start",
        {
            "eventType": "start",
            "encounterId": cid,
            "round": 0,
            "turn": None,
            "started": False,
            "combatants": [],
        },
    )
    assert [(e.name, e.data) for e in added] == [
        (
            "combat-combatant-add",
            {"eventType": "combatant-add", "encounterId": cid, "combatant": c},
        )
        for c in order
    ]
    assert await everything.nothing_more(0.1)  # no turn event for the start itself

    # another encounter: the filtered stream never sees it, and it becomes the current one
    only_ours = await sse(relay, "/encounters/subscribe", key, clientId=CLIENT_ID, encounterId=cid)
    assert (await only_ours.event()).name == "connected"
    other = await _start(api, {"tokenUuids": [ELARA_TOKEN]})
    assert [e.data["encounterId"] for e in await everything.events(2)] == [other["encounterId"]] * 2

    async def step(route: str = "next-turn") -> dict[str, Any]:
        status, body = await api("POST", f"/{route}", {"encounterId": cid})
        assert status == 200, body
        return body

    for _ in range(3):  # round 1: Goblin, Brann, Bandit; then round 2 begins
        await step()
    # the bandit falls in round 2: from now on its turn is passed over
    status, body = await api(
        "POST", "/effects", {"uuid": "Actor.banditNpc0000001", "statusId": "dead"}
    )
    assert status == 200, body
    [encounter] = [e for e in await _encounters(api) if e["id"] == cid]
    assert [m["defeated"] for m in encounter["combatants"]] == [False, False, True]
    tokens = [(await step())["tokenTurn"] for _ in range(3)]
    assert tokens == [BRANN_TOKEN, GOBLIN_TOKEN, BRANN_TOKEN]  # 2/1, then 3/0 (bandit skipped), 3/1
    ended = await step("end-encounter")
    assert ended["encounterId"] == cid

    seen = await only_ours.events(7)
    assert [_turn_state(e) for e in seen[:6]] == [
        ("combat-turn", 1, 1),
        ("combat-turn", 1, 2),
        ("combat-turn", 2, 0),  # no separate round event: a new round is a turn
        ("combat-turn", 2, 1),
        ("combat-turn", 3, 0),
        ("combat-turn", 3, 1),
    ]
    for event in seen[:6]:
        assert event.data == {
            "eventType": "turn",
            "encounterId": cid,
            "round": event.data["round"],
            "turn": event.data["turn"],
            "started": True,
            "combatants": order,  # `defeated` is the combatant's own flag, as the module sends
        }
    assert (seen[6].name, seen[6].data) == (
        "combat-end",
        {"eventType": "end", "encounterId": cid, "round": 3},
    )
    assert await only_ours.nothing_more(0.1)
    assert [e.name for e in await everything.events(7)] == [e.name for e in seen]
    assert [e["id"] for e in await _encounters(api)] == [other["encounterId"]]


async def test_players_do_not_see_hidden_combatants_they_do_not_own(
    api: Any, world: EmbeddedWorld
) -> None:
    hidden = {"data": {"hidden": True}, "sceneId": "sceneTavern00001"}
    for token in ("tokGoblin0000001", "tokElara00000001"):
        status, body = await api("PUT", "/canvas/tokens", {**hidden, "documentId": token})
        assert status == 200, body
    started = await _start(api, {"tokenUuids": [GOBLIN_TOKEN, ELARA_TOKEN, BANDIT_TOKEN]})
    hidden_by_name = {m["name"]: m["hidden"] for m in started["encounter"]["combatants"]}
    assert hidden_by_name == {"Goblin": True, "Elara Quill": True, "Bandit": False}
    [as_aria] = await _encounters(api, userId="Aria")  # she owns Elara
    assert sorted(m["name"] for m in as_aria["combatants"]) == ["Bandit", "Elara Quill"]
    [as_ben] = await _encounters(api, userId="Ben")
    assert [m["name"] for m in as_ben["combatants"]] == ["Bandit"]
    [as_gm] = await _encounters(api, userId="Gamemaster")
    assert len(as_gm["combatants"]) == 3
    status, body = await api("GET", "/encounters", userId="nobody")
    assert (status, body["error"], body["data"]) == (400, "User not found: nobody", None)


async def test_the_relay_sends_the_names_the_module_reads(relay: Any) -> None:
    """Against a world double: whichever name the client uses, the frame carries the module's
    `encounterId` and `tokenUuids` (the reference relay's `encounter` and `tokens` never reach
    the world, so a real module acts on the encounter that was asked for)."""
    double = await relay.world(client_id="module-world")
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    query = {"clientId": "module-world"}
    for path, body, params in (
        ("/next-turn", None, {"encounter": "c1"}),
        ("/last-round", {"encounter": "c1"}, {}),
        ("/end-encounter", {"encounterId": "c1"}, {}),
        ("/add-to-encounter", {"encounter": "c1", "uuids": [GOBLIN_TOKEN]}, {}),
    ):
        answer = await relay.call("POST", path, key=key, json=body, params={**query, **params})
        assert answer.status == 200, answer.body
        frame = await double.next_request()
        assert frame["encounterId"] == "c1" and "encounter" not in frame, path
    answer = await relay.call(
        "POST", "/start-encounter", key=key, json={"tokens": [GOBLIN_TOKEN]}, params=query
    )
    assert answer.status == 200, answer.body
    frame = await double.next_request()
    assert frame["tokenUuids"] == [GOBLIN_TOKEN] and "tokens" not in frame


async def test_the_demo_world_is_ready_for_a_fight(api: Any, world: EmbeddedWorld) -> None:
    """The Goblin Ambush scene: switch to it, start with the players and the enemies."""
    ambush = "Scene.sceneAmbush00001.Token."
    enemies = [
        ambush + "ambGoblin0000001",
        ambush + "ambGoblin0000002",
        ambush + "ambBandit0000001",
    ]
    status, body = await api("POST", "/switch-scene", {"name": "Goblin Ambush"})
    assert status == 200, body
    scene = body["data"]
    assert (len(scene["walls"]), len(scene["lights"]), scene["playlist"]) == (
        5,
        1,
        "plAmbush00000001",
    )
    status, body = await api("GET", "/playlists")
    [playlist] = [p for p in body["data"]["playlists"] if p["id"] == scene["playlist"]]
    assert len(playlist["sounds"]) == 2
    started = await _start(
        api, {"startWithPlayers": True, "tokenUuids": enemies, "rollAll": True, "name": "Ambush"}
    )
    members = started["encounter"]["combatants"]
    assert sorted(m["name"] for m in members) == [
        "Bandit",
        "Brann Stoneheart",
        "Corvin Ash",
        "Elara Quill",
        "Goblin",
        "Goblin",
        "Pip Tealeaf",
    ]
    assert all(m["tokenUuid"].startswith(ambush) for m in members)
    assert all(isinstance(m["initiative"], int) for m in members)
    order = [(-m["initiative"], m["id"]) for m in members]
    assert order == sorted(order)  # initiative order, highest first
