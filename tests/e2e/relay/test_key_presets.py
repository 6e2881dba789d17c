"""`vttrelay keys create --preset NAME` and `--all-scopes`: the named scope sets of the route
table, and a `gm` key running the README's Goblin Ambush recipe against `vttrelay serve`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from bench.procs import free_port
from tests.support.relay import start_serve, stop_process

from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES, GM_SCOPES, SCOPE_PRESETS
from vttrelay.relay.store import RelayStore

AMBUSH_TOKEN = "Scene.sceneAmbush00001.Token."


def keys_create(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vttrelay", "keys", "create", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )


def scopes_of(data: Path, secret: str) -> tuple[str, ...]:
    store = RelayStore(data / "relay.db")
    try:
        record = store.key_by_secret(secret)
        assert record is not None
        return record.scopes
    finally:
        store.close()


def test_presets_and_all_scopes_combine_with_scope(tmp_path: Path) -> None:
    data = tmp_path / "data"
    gm = keys_create(data, "--preset", "gm", "--name", "gm")
    assert gm.returncode == 0, gm.stderr
    assert scopes_of(data, gm.stdout.strip()) == GM_SCOPES
    assert "session:manage" not in GM_SCOPES
    assert {"scene:write", "encounter:manage", "entity:write", "canvas:write"} <= set(GM_SCOPES)

    every = keys_create(data, "--all-scopes")
    assert every.returncode == 0, every.stderr
    assert scopes_of(data, every.stdout.strip()) == ALL_SCOPES

    both = keys_create(data, "--preset", "gm", "--scope", "session:manage")
    assert scopes_of(data, both.stdout.strip()) == (*GM_SCOPES, "session:manage")

    extra = keys_create(data, "--scope", "chat:write", "--preset", "default", "--scope", "dnd5e")
    assert scopes_of(data, extra.stdout.strip()) == (*DEFAULT_SCOPES, "chat:write")  # once each


def test_an_unknown_preset_is_one_line_listing_the_presets(tmp_path: Path) -> None:
    bad = keys_create(tmp_path / "data", "--preset", "boss")
    assert bad.returncode == 2 and bad.stdout == ""
    [line] = [ln for ln in bad.stderr.splitlines() if "error:" in ln]
    assert line.endswith(
        "error: argument --preset: unknown preset 'boss'; presets: "
        + "; ".join(f"{p.name} ({p.help})" for p in SCOPE_PRESETS)
    )


async def test_a_gm_key_runs_the_goblin_ambush_recipe(tmp_path: Path) -> None:
    """The README's recipe: switch to the ambush, start the fight with the heroes and the
    enemies, advance a turn, hurt a goblin, move a token: every call answered 200."""
    data = tmp_path / "data"
    made = keys_create(data, "--preset", "gm")
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    port = free_port()
    proc, _ = await start_serve(data, port)
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={"x-api-key": key}, timeout=30
        ) as api:
            switched = await api.post("/switch-scene", json={"name": "Goblin Ambush"})
            assert switched.status_code == 200, switched.text
            enemies = [AMBUSH_TOKEN + t for t in ("ambGoblin0000001", "ambBandit0000001")]
            body = {"startWithPlayers": True, "rollAll": True, "tokenUuids": enemies}
            started = await api.post("/start-encounter", json=body)
            assert started.status_code == 200, started.text
            combatants = started.json()["encounter"]["combatants"]
            assert len(combatants) == 6 and all(c["initiative"] is not None for c in combatants)
            assert (await api.post("/next-turn", json={})).status_code == 200
            hurt = await api.put(
                "/update",
                params={"uuid": "Actor.goblinNpc0000001"},
                json={"data": {"system.attributes.hp.value": 3}},
            )
            assert hurt.status_code == 200, hurt.text
            moved = await api.post(
                "/move-token", json={"uuid": AMBUSH_TOKEN + "ambGoblin0000001", "x": 1000, "y": 800}
            )
            assert moved.status_code == 200, moved.text
            sessions = await api.get("/session")
            assert sessions.status_code == 403  # the operator's scope is not a game master's
            assert sessions.json() == {"error": "API key lacks required scope: session:manage"}
    finally:
        await stop_process(proc)
