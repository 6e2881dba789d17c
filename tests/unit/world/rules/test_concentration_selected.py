"""The concentration actions on the selected token's actor (spec §4.0: `actorUuid` is optional
if `selected` is true): get, save and break, their errors, gates, and precedence of an explicit
actor over the selection."""

from __future__ import annotations

from tests.support.world import call, get_actor

from vttrelay.world.rules.dice import ScriptedRandom
from vttrelay.world.runtime.world import World

ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"
TOKEN = "Scene.sceneTavern00001.Token."


async def test_nothing_selected(world: World) -> None:
    for action, extra in (
        ("get-concentration", {}),
        ("break-concentration", {}),
        ("concentration-save", {"damage": 12}),
    ):
        reply = await call(world, action, selected=True, **extra)
        assert reply == {
            "type": f"{action}-result",
            "requestId": f"{action}_1",
            "error": "No token selected",
        }
        # selected false (or absent) still needs an actor
        reply = await call(world, action, selected=False, **extra)
        assert reply["error"] == "actorUuid or actorName is required"


async def test_get_save_and_break_on_the_selected_actor(
    world: World, faces: ScriptedRandom
) -> None:
    reply = await call(world, "use-spell", actorUuid=ELARA, abilityName="Hold Person")
    assert "error" not in reply, reply
    await call(world, "select", uuids=[TOKEN + "tokElara00000001"], overwrite=True)

    reply = await call(world, "get-concentration", selected=True)
    data = reply["data"]
    assert list(data) == ["actorUuid", "isConcentrating", "effect", "spell"]
    assert (data["actorUuid"], data["isConcentrating"], data["spell"]) == (
        ELARA,
        True,
        "Hold Person",
    )
    effect_id = data["effect"]["id"]

    faces.faces += [15]
    reply = await call(world, "concentration-save", selected=True, damage=25)
    assert reply["data"] == {
        "actorUuid": ELARA,
        "dc": 12,
        "total": 17,
        "formula": "1d20 + 2",
        "result": "15 + 2",
        "maintained": True,
    }
    reply = await call(world, "break-concentration", selected=True, userId="Ben")
    assert reply["error"] == (
        "User 'Ben' does not have permission to break concentration on 'Elara Quill'"
    )
    reply = await call(world, "break-concentration", selected=True, userId="Aria")
    assert reply["data"] == {"actorUuid": ELARA, "broken": True, "removedEffectId": effect_id}
    assert get_actor(world, "elaraWizard00001")["effects"] == []
    reply = await call(world, "break-concentration", selected=True)
    assert reply["error"] == "Actor 'Elara Quill' is not concentrating"


async def test_an_explicit_actor_wins_over_the_selection(world: World) -> None:
    await call(world, "select", uuids=[TOKEN + "tokElara00000001"], overwrite=True)
    reply = await call(world, "get-concentration", selected=True, actorUuid=BRANN)
    assert reply["data"]["actorUuid"] == BRANN
    reply = await call(world, "get-concentration", selected=True, actorName="brann stoneheart")
    assert reply["data"]["actorUuid"] == BRANN
    # an NPC token (not linked) gives its own synthetic actor; a player may view it only with
    # permission
    await call(world, "select", uuids=[TOKEN + "tokGoblin0000001"], overwrite=True)
    reply = await call(world, "get-concentration", selected=True)
    assert reply["data"]["actorUuid"] == TOKEN + "tokGoblin0000001.Actor.goblinNpc0000001"
    reply = await call(world, "get-concentration", selected=True, userId="Aria")
    assert reply["error"] == "User 'Aria' does not have permission to view actor 'Goblin'"
