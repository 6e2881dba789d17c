"""`vttrelay serve --seed N` (and $VTTRELAY_SEED) and `--ready-file`, as real processes over
real sockets: two relays with the same seed answer the same requests with the same bytes
(dice, attacks and damage, initiative, chat ids, timestamps, request ids); another seed rolls
differently; the ready file says where, with what key, and goes away at a clean stop."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
from tests.support.relay import start_serve_ready, stop_process

from vttrelay import __version__

AMBUSH = "Scene.sceneAmbush00001.Token."
# A fight's worth of rolls: dice, a skill check, an attack with damage applied, a spell with a
# saving throw, initiative for an encounter, a turn, the chat and the recent rolls.
REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/roll", {"formula": "4d6kh3 + 2", "createChatMessage": True}),
    ("POST", "/dnd5e/skill-check", {"actorUuid": "Actor.pipMonk000000001", "skill": "ste"}),
    ("POST", "/switch-scene", {"name": "Goblin Ambush"}),
    (
        "POST",
        "/start-encounter",
        {
            "startWithPlayers": True,
            "rollAll": True,
            "tokenUuids": [AMBUSH + "ambGoblin0000001", AMBUSH + "ambBandit0000001"],
        },
    ),
    (
        "POST",
        "/dnd5e/use-item",
        {
            "actorUuid": "Actor.brannFighter0001",
            "abilityName": "Longsword",
            "targetUuid": AMBUSH + "ambGoblin0000001",
            "applyDamage": True,
        },
    ),
    ("POST", "/next-turn", {}),
    ("GET", "/chat?limit=5", None),
    ("GET", "/rolls", None),
]


def gm_key(data: Path) -> str:
    """A key of the gm preset in the data dir `data` (`vttrelay keys create --preset gm`)."""
    made = subprocess.run(
        [sys.executable, "-m", "vttrelay", "keys", "create", "--preset", "gm"]
        + ["--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return made.stdout.strip()


async def replies(url: str, key: str) -> list[bytes]:
    """The bodies of REQUESTS, in order, from the relay at `url`."""
    async with httpx.AsyncClient(base_url=url, headers={"x-api-key": key}, timeout=30) as api:
        bodies = []
        for method, path, body in REQUESTS:
            answer = await api.request(method, path, json=body)
            assert answer.status_code == 200, (path, answer.text)
            bodies.append(answer.content)
        return bodies


async def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_rolls(
    tmp_path: Path,
) -> None:
    keys = [gm_key(tmp_path / name) for name in "abc"]
    started = await asyncio.gather(
        start_serve_ready(tmp_path / "a", "--seed", "7"),
        start_serve_ready(tmp_path / "b", env={"VTTRELAY_SEED": "7"}),
        start_serve_ready(tmp_path / "c", "--seed", "8"),
    )
    try:
        (_, a), (_, b), (_, c) = started
        assert a["seed"] == b["seed"] == 7 and c["seed"] == 8
        first, second, other = await asyncio.gather(
            *(replies(info["url"], key) for info, key in zip((a, b, c), keys, strict=True))
        )
    finally:
        await asyncio.gather(*(stop_process(proc) for proc, _ in started))
    assert first == second  # byte for byte, request ids and timestamps included
    assert orjson.loads(first[0])["requestId"] == "roll_1_s7"
    rolls = [orjson.loads(body) for body in (first[0], other[0])]
    assert rolls[0]["data"]["roll"] != rolls[1]["data"]["roll"]  # another seed, other dice
    assert first[3] != other[3]  # and other initiative
    outcome = orjson.loads(first[4])["data"]["outcome"]
    assert "attack" in outcome  # the attack was rolled against the goblin


async def test_the_ready_file_says_where_with_which_key_and_is_removed_at_a_stop(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    stale = tmp_path / "data.ready"
    stale.write_text('{"url": "http://127.0.0.1:1"}')  # left by a killed run: replaced
    proc, info = await start_serve_ready(data)
    try:
        assert set(info) == {"url", "port", "pid", "version", "clientId", "apiKey", "seed"}
        assert info["url"] == f"http://127.0.0.1:{info['port']}" and info["port"] > 0
        assert info["pid"] == proc.pid and info["version"] == __version__
        assert info["clientId"] == "vttrelay-demo" and info["seed"] is None
        assert stat.S_IMODE(os.stat(stale).st_mode) == 0o600  # it holds a key
        async with httpx.AsyncClient(base_url=info["url"]) as api:
            got = await api.get("/world-info", headers={"x-api-key": info["apiKey"]})
            assert got.status_code == 200  # the world is connected once the file is there
            assert got.json()["data"]["world"]["id"] == "vttrelay-demo"
    finally:
        await stop_process(proc)
    assert proc.returncode == 0 and not stale.exists()


def test_ready_json_on_stdout_and_bad_seeds_are_refused(tmp_path: Path) -> None:
    serve = [sys.executable, "-m", "vttrelay", "serve", "--port", "0", "--no-world"]
    proc = subprocess.Popen(
        [*serve, "--data-dir", str(tmp_path / "d"), "--ready-file", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(6)]  # the 5 listening lines, the JSON
    finally:
        proc.terminate()
        proc.wait(10)
    [line] = [ln for ln in lines if ln.startswith("{")]
    info = orjson.loads(line)
    assert info["clientId"] is None and info["pid"] == proc.pid and info["port"] > 0

    bad = subprocess.run(
        [*serve, "--data-dir", str(tmp_path / "e"), "--seed", "-3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == "vttrelay serve: --seed: -3 is below 0"
    bad_env = subprocess.run(
        [*serve, "--data-dir", str(tmp_path / "e")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "VTTRELAY_SEED": "lots"},
    )
    assert bad_env.returncode == 2
    assert bad_env.stderr.strip() == "vttrelay serve: VTTRELAY_SEED: not an integer: 'lots'"
