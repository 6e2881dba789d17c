"""POST /execute-js end to end: a real relay on 127.0.0.1 (tests/conftest.py `relay`), the real
embedded world connected over a real WebSocket with its SQLite in a tmp dir, scripts run in
their sandbox processes. Writes made by scripts are read back through the REST API.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID, api_for

from vttrelay.cli import main as cli_main
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.model import documents

ELARA = "elaraWizard00001"
SCOPES = (*DEFAULT_SCOPES, "chat:write", "execute-js")

Call = Callable[..., Coroutine[Any, Any, tuple[int, Any]]]


def world_settings(data_dir: Path, *args: str) -> None:
    """`vttrelay world settings ...`, the command a GM uses (with the relay stopped; the
    in-process test world holds no world lock)."""
    assert cli_main(["world", "settings", *args, "--data-dir", str(data_dir)]) == 0


@pytest.fixture
async def world(relay: Any, start_world: Any, tmp_path: Path) -> EmbeddedWorld:
    data_dir = tmp_path / "world-data"
    world_settings(data_dir)  # creates and seeds the world; execute-js stays off
    handle: EmbeddedWorld = await start_world(relay, data_dir)
    handle.data_dir = data_dir  # type: ignore[attr-defined]
    return handle


@pytest.fixture
def api(relay: Any) -> Call:
    return api_for(relay, SCOPES)


def enable(world: EmbeddedWorld, *extra: str) -> None:
    world_settings(world.data_dir, "--execute-js", "on", *extra)  # type: ignore[attr-defined]


async def test_off_until_a_gm_enables_it(world: EmbeddedWorld, api: Call) -> None:
    status, body = await api("POST", "/execute-js", {"script": "return 1"})
    assert status == 400
    assert body["type"] == "execute-js-result"
    assert body["success"] is False
    assert body["error"].startswith("execute-js is disabled in REST API module settings.")
    enable(world)
    status, body = await api("POST", "/execute-js", {"script": "return 1"})
    assert (status, body["success"], body["result"]) == (200, True, 1)
    assert list(body) == ["type", "requestId", "success", "result"]


async def test_results_errors_and_the_relay_url(
    world: EmbeddedWorld, api: Call, relay: Any
) -> None:
    enable(world)
    script = 'return game.settings.get("foundry-rest-api", "wsRelayUrl")'
    status, body = await api("POST", "/execute-js", {"script": script})
    assert (status, body["result"]) == (200, relay.ws_url.removesuffix("/relay"))
    status, body = await api(
        "POST", "/execute-js", {"script": "await null; return [1, 'a', {b: null}]"}
    )
    assert body["result"] == [1, "a", {"b": None}]
    status, body = await api("POST", "/execute-js", {"script": "let x = 1;"})
    assert status == 200 and "result" not in body
    status, body = await api("POST", "/execute-js", {"script": "throw new Error('nope')"})
    assert (status, body["error"], body["success"]) == (400, "Error executing script: nope", False)
    status, body = await api("POST", "/execute-js", {"script": "return require('fs')"})
    assert status == 400 and "require" in body["error"]
    status, body = await api("POST", "/execute-js", {})
    assert (status, body["error"]) == (400, "Invalid script provided")
    status, body = await api("POST", "/execute-js", {"script": "return 1", "userId": "Aria"})
    assert body["error"] == "User Aria does not have permission to execute code (requires role 4+)"
    # the relay's own pre-check comes before the world
    status, body = await api("POST", "/execute-js", {"script": "return eval('1')"})
    assert (status, body) == (400, {"error": "Script contains forbidden patterns"})


async def test_script_writes_are_read_back_through_the_api(world: EmbeddedWorld, api: Call) -> None:
    enable(world)
    status, body = await api(
        "GET", "/dnd5e/get-actor-details", actorUuid=f"Actor.{ELARA}", details=["items"]
    )
    assert status == 200, body
    weapon = next(i for i in body["data"]["items"] if "Quarterstaff" in str(i))
    weapon_id = weapon.get("_id") or weapon.get("id")
    script = f"""
      const elara = game.actors.get('{ELARA}');
      await elara.update({{'system.details.xp.value': 1234}});
      await elara.items.get('{weapon_id}').update({{name: 'Quarterstaff of Echoes'}});
      const speaker = ChatMessage.getSpeaker({{actor: elara}});
      await ChatMessage.create({{content: 'Elara hums', speaker}});
      return elara.system.details.xp.value;
    """
    status, body = await api("POST", "/execute-js", {"script": script})
    assert (status, body.get("result")) == (200, 1234), body
    status, body = await api(
        "POST", "/dnd5e/modify-experience", {"actorUuid": f"Actor.{ELARA}", "amount": 1}
    )
    assert (status, body["data"]["oldXp"], body["data"]["newXp"]) == (200, 1234, 1235)
    status, body = await api(
        "GET", "/dnd5e/get-actor-details", actorUuid=f"Actor.{ELARA}", details=["items"]
    )
    assert "Quarterstaff of Echoes" in str(body["data"]["items"])
    status, body = await api("GET", "/chat", limit=5)
    contents = [m["content"] for m in body["data"]["messages"]]
    assert "Elara hums" in contents
    notice = next(
        m for m in body["data"]["messages"] if m["speaker"].get("alias") == "REST API Module"
    )
    assert notice["content"].startswith("<b>⚠ REST API execute-js:</b> <code>")
    assert notice["content"].endswith("</code>…")  # the script is longer than 100 characters
    assert notice["whisper"] == ["gmUser0000000001"]


async def test_a_busy_script_does_not_delay_other_requests(world: EmbeddedWorld, api: Call) -> None:
    enable(world)
    busy_script = "const end = Date.now() + 2000; while (Date.now() < end) {} return 'done'"
    busy = asyncio.create_task(api("POST", "/execute-js", {"script": busy_script}))
    await asyncio.sleep(0.4)  # the script is running now
    started = time.monotonic()
    status, body = await api("GET", "/players")
    elapsed = time.monotonic() - started
    assert status == 200 and len(body["users"]) == 3
    assert elapsed < 0.5
    assert not busy.done()
    status, body = await busy
    assert (status, body["result"]) == (200, "done")


async def test_limits_stop_a_script_and_the_world_carries_on(
    world: EmbeddedWorld, api: Call
) -> None:
    enable(world)
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, "vttrelay.scriptTimeLimit", 0.5)
    status, body = await api("POST", "/execute-js", {"script": "await null; for (;;) {}"})
    assert (status, body["error"]) == (
        400,
        "Error executing script: the script exceeded its time limit of 0.5 s",
    )
    with world.world.store.transaction() as tx:
        documents.set_setting(tx, "vttrelay.scriptTimeLimit", 5)
    status, body = await api(
        "POST",
        "/execute-js",
        {"script": "const a = []; for (;;) a.push('x'.repeat(1e6) + a.length)"},
    )
    assert status == 400 and "memory" in body["error"]
    status, body = await api("GET", "/world-info")
    assert status == 200 and body["data"]["world"]["id"] == CLIENT_ID


async def test_scripts_see_actors_with_their_effects(
    world: EmbeddedWorld, api: Call, relay: Any
) -> None:
    """`game.actors` is what the tabletop derives: active effects' changes applied, also after
    a script's own update; the stored actor keeps its source values."""
    enable(world)
    effect = {
        "name": "Fox's Cunning",
        "changes": [{"key": "system.abilities.int.value", "mode": 2, "value": "4"}],
    }
    add = api_for(relay, ("effects:write",))
    status, body = await add("POST", "/effects", {"uuid": f"Actor.{ELARA}", "effectData": effect})
    assert status == 200, body
    script = f"""
      const elara = game.actors.get('{ELARA}');
      const before = elara.system.abilities.int.value;
      await elara.update({{'system.details.xp.value': 5}});
      return [before, elara.system.abilities.int.value];
    """
    status, body = await api("POST", "/execute-js", {"script": script})
    assert (status, body.get("result")) == (200, [20, 20]), body
    status, body = await api("GET", "/get", uuid=f"Actor.{ELARA}")
    assert body["data"]["system"]["abilities"]["int"]["value"] == 16
