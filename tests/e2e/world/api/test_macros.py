"""GET /macros and POST /macro/{uuid}/execute through a real relay and the embedded world over
real sockets: the list and its userId view, the allowMacroExecute setting turned on by `vttrelay
world settings`, chat and script macros (args, results, the sandbox's permission rules), every
error in the module's order, and the GM notice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import api_for

from vttrelay.cli import main as cli_main
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.model import documents

GREETING = "Macro.macroGreeting001"
LUCK = "Macro.macroLuckRoll001"
PARTY_HP = "Macro.macroPartyHp0001"
MACRO_KEYS = ["uuid", "id", "name", "type", "author", "command", "img", "scope", "canExecute"]
DISABLED = (
    "macro-execute is disabled in REST API module settings. "
    "A GM must enable it to allow macro execution."
)


def settings(world: EmbeddedWorld, *args: str) -> None:
    """`vttrelay world settings ...` on the test world's data (what a GM runs with the relay
    stopped; the in-process test world holds no world lock, so the test needs no restart)."""
    data_dir = Path(world.world.store.path).parent.parent
    assert cli_main(["world", "settings", *args, "--data-dir", str(data_dir)]) == 0


@pytest.fixture
def enabled(world: EmbeddedWorld) -> EmbeddedWorld:
    settings(world, "--macro-execute", "on")
    return world


def ok(status: int, body: dict[str, Any], uuid: str) -> Any:
    assert status == 200, body
    assert list(body) == ["type", "requestId", "uuid", "success", "result"], body
    assert body["type"] == "macro-execute-result" and body["uuid"] == uuid
    assert body["success"] is True
    return body["result"]


def failed(status: int, body: dict[str, Any], uuid: str, error: str) -> None:
    assert status == 400, body
    assert body == {
        "type": "macro-execute-result",
        "requestId": body["requestId"],
        "uuid": uuid,
        "success": False,
        "error": error,
    }


async def test_list_and_its_user_view(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("GET", "/macros")
    assert status == 200 and list(body) == ["type", "requestId", "macros"]
    assert body["type"] == "macros-result"
    macros = {m["uuid"]: m for m in body["macros"]}
    assert list(macros) == [GREETING, LUCK, PARTY_HP]
    assert all(list(m) == MACRO_KEYS for m in macros.values())
    hp = macros[PARTY_HP]
    assert (hp["type"], hp["author"], hp["scope"], hp["canExecute"]) == (
        "script",
        "Gamemaster",
        "global",
        True,
    )
    assert hp["command"].startswith("// Hit points of the player characters")
    assert macros[GREETING]["command"] == "Welcome to the Yawning Portal! Mind the well."
    status, body = await api("GET", "/macros", userId="Ben")
    assert [m["uuid"] for m in body["macros"]] == [GREETING, LUCK]  # not the GM's script
    status, body = await api("GET", "/macros", userId="nobody-xyz")
    assert status == 400 and body["error"] == "User not found: nobody-xyz"


async def test_off_until_a_gm_enables_it(world: EmbeddedWorld, api: Any) -> None:
    status, body = await api("POST", f"/macro/{GREETING}/execute")
    failed(status, body, GREETING, DISABLED)
    settings(world, "--macro-execute", "on")
    status, body = await api("POST", f"/macro/{GREETING}/execute")
    assert status == 200, body
    settings(world, "--macro-execute", "off")
    status, body = await api("POST", f"/macro/{GREETING}/execute")
    failed(status, body, GREETING, DISABLED)


async def test_chat_macros_post_their_text_and_roll(enabled: EmbeddedWorld, api: Any) -> None:
    status, body = await api("POST", f"/macro/{GREETING}/execute", {"args": {"x": 1}})
    message = ok(status, body, GREETING)
    assert message["content"] == "Welcome to the Yawning Portal! Mind the well."
    assert message["_id"] and message["author"] == "gmUser0000000001"
    status, body = await api("POST", f"/macro/{LUCK}/execute")
    rolled = ok(status, body, LUCK)
    assert rolled["flavor"] == "Luck" and rolled["rolls"][0]["formula"] == "1d20"
    _, last = await api("GET", "/lastroll")
    assert last["data"]["id"] == rolled["_id"] and last["data"]["rollTotal"] == int(
        rolled["content"]
    )

    _, chat = await api("GET", "/chat", limit=10)
    contents = [m["content"] for m in chat["data"]["messages"]]
    notices = [c for c in contents if c.startswith("<b>⚠ REST API macro-execute:</b>")]
    assert notices == [
        f"<b>⚠ REST API macro-execute:</b> <code>Luck Roll</code> ({LUCK})",
        f"<b>⚠ REST API macro-execute:</b> <code>Tavern Greeting</code> ({GREETING})",
    ]
    notice = next(m for m in chat["data"]["messages"] if m["content"] == notices[0])
    assert notice["whisper"] == ["gmUser0000000001"]
    assert notice["speaker"]["alias"] == "REST API Module"


async def test_script_macros_run_in_the_sandbox(enabled: EmbeddedWorld, api: Any) -> None:
    status, body = await api(
        "POST", f"/macro/{PARTY_HP}/execute", {"args": {"names": ["Elara Quill", "Nobody"]}}
    )
    assert ok(status, body, PARTY_HP) == {"Elara Quill": 20, "Nobody": None}
    status, body = await api("POST", f"/macro/{PARTY_HP}/execute")
    everyone = ok(status, body, PARTY_HP)
    assert set(everyone) == {"Elara Quill", "Corvin Ash", "Brann Stoneheart", "Pip Tealeaf"}

    # macros made through /create (allowMacroWrite on) show the result mapping and errors
    settings(enabled, "--macro-write", "on")

    async def make(name: str, command: str) -> str:
        status, body = await api(
            "POST",
            "/create",
            {"entityType": "Macro", "data": {"name": name, "type": "script", "command": command}},
        )
        assert status == 200, body
        uuid: str = body["uuid"]
        return uuid

    adder = await make("Adder", "return args.a + args.b;")
    status, body = await api("POST", f"/macro/{adder}/execute", {"args": {"a": 2, "b": 3}})
    assert ok(status, body, adder) == {"value": 5}
    quiet = await make("Quiet", "const x = scope.args; speaker.alias;")
    status, body = await api("POST", f"/macro/{quiet}/execute")
    assert ok(status, body, quiet) == {}
    hurt = await make(
        "Hurt Pip",
        "const pip = game.actors.getName('Pip Tealeaf');"
        "await pip.update({'system.attributes.hp.value': args.hp});"
        "return game.actors.getName('Pip Tealeaf').system.attributes.hp.value;",
    )
    status, body = await api("POST", f"/macro/{hurt}/execute", {"args": {"hp": 7}})
    assert ok(status, body, hurt) == {"value": 7}
    _, pip = await api("GET", "/get", uuid="Actor.pipMonk000000001")
    assert pip["data"]["system"]["attributes"]["hp"]["value"] == 7
    broken = await make("Broken", "throw new Error('no luck');")
    status, body = await api("POST", f"/macro/{broken}/execute")
    failed(status, body, broken, "Error executing macro: no luck")
    slow = await make("Slow", "while (true) {}")
    with enabled.world.store.transaction() as tx:  # a short time limit for this test
        documents.set_setting(tx, "vttrelay.scriptTimeLimit", 0.5)
    status, body = await api("POST", f"/macro/{slow}/execute")
    failed(status, body, slow, "Error executing macro: the script exceeded its time limit of 0.5 s")


async def test_errors_and_user_gates_in_order(enabled: EmbeddedWorld, api: Any, relay: Any) -> None:
    status, body = await api("POST", f"/macro/{GREETING}/execute", {"args": [1]})
    assert (status, body) == (400, {"error": "'args' must be an object"})
    status, body = await api("POST", "/macro/Macro.nope0000000000001/execute")
    failed(
        status,
        body,
        "Macro.nope0000000000001",
        "Macro not found with UUID: Macro.nope0000000000001",
    )
    status, body = await api("POST", "/macro/Actor.elaraWizard00001/execute")
    failed(
        status,
        body,
        "Actor.elaraWizard00001",
        "Entity with UUID Actor.elaraWizard00001 is not a macro",
    )
    status, body = await api("POST", f"/macro/{GREETING}/execute", {"userId": "Ben"})
    failed(
        status, body, GREETING, "User 'Ben' does not have permission to execute 'Tavern Greeting'"
    )
    status, body = await api("POST", f"/macro/{GREETING}/execute", {"userId": "Aria"})
    assert ok(status, body, GREETING)["author"] == "playerAria000001"
    # a player who owns a script macro still needs the Trusted Player role to run scripts
    with enabled.world.store.transaction() as tx:
        macro = tx.get("Macro", "macroPartyHp0001")
        assert macro is not None
        macro["ownership"] = {"default": 0, "playerAria000001": 3}
        tx.put("Macro", macro)
    status, body = await api("POST", f"/macro/{PARTY_HP}/execute", {"userId": "Aria"})
    failed(
        status, body, PARTY_HP, "Macro 'Party Hit Points' cannot be executed by the current user"
    )
    with enabled.world.store.transaction() as tx:
        user = tx.get("User", "playerAria000001")
        assert user is not None
        user["role"] = 2
        tx.put("User", user)
    # as Aria the script sees only the actors Aria may view (not the goblin)
    status, body = await api(
        "POST",
        f"/macro/{PARTY_HP}/execute",
        {"userId": "Aria", "args": {"names": ["Goblin", "Elara Quill"]}},
    )
    assert ok(status, body, PARTY_HP) == {"Goblin": None, "Elara Quill": 20}
    status, body = await api("POST", f"/macro/{GREETING}/execute", {"userId": "nobody-xyz"})
    assert status == 400 and body["error"] == "User not found: nobody-xyz"

    read_only = api_for(relay, DEFAULT_SCOPES)
    status, body = await read_only("POST", f"/macro/{GREETING}/execute")
    assert (status, body) == (403, {"error": "API key lacks required scope: macro:execute"})
    assert (await read_only("GET", "/macros"))[0] == 200
