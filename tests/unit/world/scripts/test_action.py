"""The execute-js action on the real embedded world (SQLite in a tmp dir): the module's rules in
order, the GM notice, reads and writes through the world's transactions, permissions, limits.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import chat, get_actor

from vttrelay.world.model import documents
from vttrelay.world.model.chat import chat_type_of
from vttrelay.world.runtime.world import World

ELARA = "elaraWizard00001"
CORVIN = "corvinWarlock001"
GM = "gmUser0000000001"
DISABLED = (
    "execute-js is disabled in REST API module settings. "
    "A GM must enable it to allow JavaScript execution."
)


def set_setting(world: World, key: str, value: Any) -> None:
    with world.store.transaction() as tx:
        documents.set_setting(tx, key, value)


def setting(world: World, key: str) -> Any:
    with world.store.transaction() as tx:
        return documents.get_setting(tx, key)


@pytest.fixture
def enabled(world: World) -> World:
    set_setting(world, documents.SETTING_ALLOW_EXECUTE_JS, True)
    return world


async def execute(world: World, script: Any = None, **params: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "execute-js", "requestId": "execute-js_1", "data": {}}
    if script is not None:
        frame["script"] = script
    return await world.handle({**frame, **params})


# The module's rules, in order --------------------------------------------------------------------


async def test_off_by_default(world: World) -> None:
    assert setting(world, documents.SETTING_ALLOW_EXECUTE_JS) is False
    reply = await execute(world, "return 1")
    assert reply == {
        "type": "execute-js-result",
        "requestId": "execute-js_1",
        "success": False,
        "error": DISABLED,
    }
    assert chat(world) == []


async def test_unknown_user_comes_first(world: World) -> None:
    reply = await execute(world, "return 1", userId="nobody")
    assert reply == {
        "type": "execute-js-result",
        "requestId": "execute-js_1",
        "error": "User not found: nobody",
        "data": None,
    }


async def test_role_rule(enabled: World) -> None:
    reply = await execute(enabled, "return 1", userId="Aria")
    assert reply["success"] is False
    assert reply["error"] == (
        "User Aria does not have permission to execute code (requires role 4+)"
    )
    assert (await execute(enabled, "return game.user.name", userId="Gamemaster"))["result"] == (
        "Gamemaster"
    )
    set_setting(enabled, documents.SETTING_EXECUTE_JS_ROLE, 1)
    reply = await execute(enabled, "return game.user.name", userId="playerAria000001")
    assert reply == {
        "type": "execute-js-result",
        "requestId": "execute-js_1",
        "success": True,
        "result": "Aria",
    }
    set_setting(enabled, documents.SETTING_EXECUTE_JS_ROLE, 2)
    reply = await execute(enabled, "return 1", userId="Ben")
    assert reply["error"] == "User Ben does not have permission to execute code (requires role 2+)"


@pytest.mark.parametrize("script", [None, "", 42, ["return 1"], {"code": "return 1"}])
async def test_invalid_script(enabled: World, script: Any) -> None:
    frame = {"type": "execute-js", "requestId": "r", "script": script}
    if script is None:
        del frame["script"]
    reply = await enabled.handle(frame)
    assert reply == {
        "type": "execute-js-result",
        "requestId": "r",
        "success": False,
        "error": "Invalid script provided",
    }
    assert chat(enabled) == []


async def test_module_settings_cannot_be_changed(enabled: World) -> None:
    script = 'await game.settings.set("foundry-rest-api", "allowExecuteJs", false)'
    reply = await execute(enabled, script)
    assert reply["error"] == "Scripts cannot modify REST API module settings"
    assert chat(enabled) == []
    # the text check is easy to dodge; the world refuses the call itself
    sneaky = 'const ns = "foundry-" + "rest-api"; await game.settings.set(ns, "allowExecuteJs", 0)'
    reply = await execute(enabled, sneaky)
    assert (
        reply["error"] == "Error executing script: Scripts cannot modify REST API module settings"
    )
    assert setting(enabled, documents.SETTING_ALLOW_EXECUTE_JS) is True
    reply = await execute(enabled, 'await game.settings.set("vttrelay", "scriptTimeLimit", 60)')
    assert (
        reply["error"] == "Error executing script: Scripts cannot modify REST API module settings"
    )
    # other world settings can be changed, as in the tabletop
    script = 'await game.settings.set("core", "rollMode", "gmroll"); '
    script += 'return game.settings.get("core", "rollMode")'
    assert (await execute(enabled, script))["result"] == "gmroll"
    assert setting(enabled, "core.rollMode") == "gmroll"


async def test_thrown_error(enabled: World) -> None:
    reply = await execute(enabled, "throw new Error('the dragon wakes')")
    assert reply == {
        "type": "execute-js-result",
        "requestId": "execute-js_1",
        "success": False,
        "error": "Error executing script: the dragon wakes",
    }


# The notice ---------------------------------------------------------------------------------------


async def test_each_run_posts_the_gm_notice(enabled: World) -> None:
    await execute(enabled, "return 1 < 2")
    [notice] = chat(enabled)
    assert notice["content"] == "<b>⚠ REST API execute-js:</b> <code>return 1 &lt; 2</code>"
    assert notice["speaker"] == {
        "scene": None,
        "actor": None,
        "token": None,
        "alias": "REST API Module",
    }
    assert notice["whisper"] == [GM]
    assert notice["author"] == GM
    assert chat_type_of(notice) == 3
    long_script = "return '" + "x" * 150 + "'"
    await execute(enabled, long_script)
    notice = max(chat(enabled), key=lambda m: m["timestamp"])
    assert notice["content"] == (f"<b>⚠ REST API execute-js:</b> <code>{long_script[:100]}</code>…")
    enabled.online = {GM}
    await execute(enabled, "throw new Error('x')")  # failing scripts are announced too
    assert len(chat(enabled)) == 3


async def test_notice_is_visible_to_gms_only(enabled: World) -> None:
    await execute(enabled, "return 1")
    reply = await enabled.handle({"type": "chat-messages", "requestId": "c", "userId": "Aria"})
    assert reply["data"]["total"] == 0
    reply = await enabled.handle({"type": "chat-messages", "requestId": "c", "userId": GM})
    assert reply["data"]["messages"][0]["speaker"]["alias"] == "REST API Module"


# Results, reads and writes ----------------------------------------------------------------------


async def test_results_and_key_order(enabled: World) -> None:
    reply = await execute(enabled, "return {hp: game.actors.get('elaraWizard00001').name}")
    assert list(reply) == ["type", "requestId", "success", "result"]
    assert reply["result"] == {"hp": "Elara Quill"}
    reply = await execute(enabled, "const x = 1;")
    assert reply == {"type": "execute-js-result", "requestId": "execute-js_1", "success": True}


async def test_reads_match_the_rest_api(enabled: World) -> None:
    script = """
      return {
        users: game.users.contents, world: game.world, system: game.system,
        scene: game.scenes.active.name, tokens: game.scenes.active.tokens.size,
        actors: game.actors.contents.map(a => a.uuid),
        elara: game.actors.getName('elara quill').toObject(),
      };
    """
    result = (await execute(enabled, script))["result"]
    players = await enabled.handle({"type": "players", "requestId": "p"})
    info = await enabled.handle({"type": "world-info", "requestId": "w"})
    assert result["users"] == players["users"]
    assert result["world"] == info["data"]["world"]
    assert result["system"] == info["data"]["system"]
    assert result["scene"] == info["data"]["activeScene"]["name"]
    assert result["tokens"] == 7
    assert f"Actor.{ELARA}" in result["actors"]
    assert result["elara"] == get_actor(enabled, ELARA)


async def test_actor_update_is_stored_and_emitted(enabled: World) -> None:
    enabled.set_subscription("actor-events", 1)
    script = f"""
      const a = game.actors.get('{ELARA}');
      await a.update({{'system.attributes.hp.value': 7, flags: {{demo: {{note: 'hi'}}}}}});
      return [a.system.attributes.hp.value, a.getFlag('demo', 'note')];
    """
    reply = await execute(enabled, script)
    assert reply["result"] == [7, "hi"]
    stored = get_actor(enabled, ELARA)
    assert stored["system"]["attributes"]["hp"]["value"] == 7
    assert stored["system"]["attributes"]["hp"]["max"] == 20  # merged, not replaced
    assert stored["flags"]["demo"] == {"note": "hi"}
    events = [f for f in enabled.sent if f["type"] == "actor-event"]  # type: ignore[attr-defined]
    assert events and events[0]["data"]["actorUuid"] == f"Actor.{ELARA}"
    # a later script reads the new value back
    script = f"return game.actors.get('{ELARA}').system.attributes.hp.value"
    assert (await execute(enabled, script))["result"] == 7


async def test_item_update(enabled: World) -> None:
    item = next(i for i in get_actor(enabled, ELARA)["items"] if i["type"] == "weapon")
    script = f"""
      const item = game.actors.get('{ELARA}').items.get('{item["_id"]}');
      const same = await item.update({{name: 'Staff of Testing'}});
      return [same === item, item.name, (await fromUuid(item.uuid)).name];
    """
    result = (await execute(enabled, script))["result"]
    assert result == [True, "Staff of Testing", "Staff of Testing"]
    stored = next(i for i in get_actor(enabled, ELARA)["items"] if i["_id"] == item["_id"])
    assert stored["name"] == "Staff of Testing"


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ("{_id: 'other'}", "update cannot change '_id'"),
        ("{type: 'npc'}", "update cannot change 'type'"),
        ("{items: []}", "update cannot change 'items'"),
        ("{'-=effects': null}", "update cannot change 'effects'"),
        ("{name: ''}", "name must be a non-empty string"),
        ("'hp'", "update needs an object of changes"),
    ],
)
async def test_bad_updates_are_refused_and_change_nothing(
    enabled: World, changes: str, error: str
) -> None:
    before = get_actor(enabled, ELARA)
    reply = await execute(enabled, f"await game.actors.get('{ELARA}').update({changes})")
    assert reply["error"] == f"Error executing script: {error}"
    assert get_actor(enabled, ELARA) == before


async def test_chat_message_create_is_post_chat(enabled: World) -> None:
    script = f"""
      const speaker = ChatMessage.getSpeaker({{actor: game.actors.get('{ELARA}')}});
      return await ChatMessage.create({{content: 'From a script', flavor: 'Test', speaker}});
    """
    message = (await execute(enabled, script))["result"]
    sent = await enabled.handle(
        {"type": "chat-send", "requestId": "c", "content": "From REST", "speaker": f"Actor.{ELARA}"}
    )
    assert list(message) == list(sent["data"])
    assert message["content"] == "From a script"
    assert message["flavor"] == "Test"
    assert message["speaker"] == sent["data"]["speaker"]
    assert message["flags"] == {"vttrelay": {"chatType": 1}}
    listed = await enabled.handle({"type": "chat-messages", "requestId": "l", "speaker": ELARA})
    assert message["id"] in [m["id"] for m in listed["data"]["messages"]]
    script = f"return (await fromUuid('{message['uuid']}')).content"
    assert (await execute(enabled, script))["result"] == "From a script"
    reply = await execute(enabled, "await ChatMessage.create({content: 'x', whisper: ['nobody']})")
    assert "unknown whisper recipient 'nobody'" in reply["error"]


async def test_user_permissions_apply_to_reads_and_writes(enabled: World) -> None:
    set_setting(enabled, documents.SETTING_EXECUTE_JS_ROLE, 1)
    names = await execute(enabled, "return game.actors.contents.map(a => a.name)", userId="Aria")
    assert "Goblin" not in names["result"]
    assert {"Elara Quill", "Corvin Ash"} <= set(names["result"])
    script = f"await game.actors.get('{CORVIN}').update({{'system.attributes.hp.value': 1}})"
    reply = await execute(enabled, script, userId="Aria")
    assert reply["error"] == (
        "Error executing script: User 'Aria' does not have permission to update 'Corvin Ash'"
    )
    script = "await game.actors.get('goblinNpc0000001').update({name: 'x'})"
    reply = await execute(enabled, script, userId="Aria")
    assert reply["error"].startswith("Error executing script: ")
    assert "undefined" in reply["error"]  # Aria cannot even see the goblin
    script = f"await game.actors.get('{ELARA}').update({{'system.attributes.hp.value': 2}})"
    assert (await execute(enabled, script, userId="Aria"))["success"] is True
    assert get_actor(enabled, ELARA)["system"]["attributes"]["hp"]["value"] == 2
    reply = await execute(
        enabled, "await game.settings.set('core', 'rollMode', 'x')", userId="Aria"
    )
    assert reply["error"] == "Error executing script: User 'Aria' must be a GM to change settings"


async def test_limits_come_from_world_settings(enabled: World) -> None:
    set_setting(enabled, "vttrelay.scriptTimeLimit", 0.3)
    reply = await execute(enabled, "while (true) {}")
    assert reply["error"] == "Error executing script: the script exceeded its time limit of 0.3 s"
    set_setting(enabled, "vttrelay.scriptMemoryLimit", 8)
    set_setting(enabled, "vttrelay.scriptTimeLimit", 5)
    reply = await execute(enabled, "let s = 'ab'; while (true) s += s;")
    assert reply["error"] == (
        "Error executing script: out of memory (the script's memory limit is 8 MiB)"
    )
    assert (await execute(enabled, "return 'alive'"))["result"] == "alive"


async def test_a_failed_write_leaves_earlier_writes(enabled: World) -> None:
    script = f"""
      await game.actors.get('{ELARA}').update({{'system.attributes.hp.value': 11}});
      await game.actors.get('{ELARA}').update({{type: 'npc'}});
    """
    reply = await execute(enabled, script)
    assert reply["error"] == "Error executing script: update cannot change 'type'"
    stored = get_actor(enabled, ELARA)
    assert stored["system"]["attributes"]["hp"]["value"] == 11  # one transaction per call
    assert stored["type"] == "character"
