"""One process runs a data dir's embedded world, as an operator meets it with real processes: a
second `vttrelay serve` on the same data dir (another port) is refused at start in one line
naming the running one's pid, issues no token and revokes none, and the first relay's demo key
and world keep working past its next token check; `--no-world` relays still share the data dir;
`vttrelay world run` takes the same lock, and `world reset`, `world settings` and `world pair`
are refused while another process holds it (and work once it stops), as is `restore` while a
`world run` (which holds no relay lock) runs the world; and a SIGKILLed holder leaves no stale
lock."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import httpx
from bench.procs import free_port
from tests.support.relay import run_vttrelay, start_serve, stop_process
from tests.support.world_run import answers_as, pair_world, pairing_code, runs, world_run

from vttrelay.relay.config import RelayConfig
from vttrelay.relay.store import RelayStore

TOKEN_CHECK = RelayConfig().token_check_interval  # a revoked world token is closed by then


def _tokens(data: Path) -> list[tuple[str, float | None]]:
    store = RelayStore(data / "relay.db")
    try:
        return sorted((t.id, t.revoked_at) for t in store.list_tokens())
    finally:
        store.close()


async def _world_answers(base: str, key: str) -> None:
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
        got = await api.get("/world-info", timeout=20)
    assert got.status_code == 200, got.text
    assert got.json()["type"] == "world-info-result"


async def _nothing_listens(port: int) -> None:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return
    writer.close()
    raise AssertionError(f"something listens on {port}")


async def test_a_second_serve_of_the_world_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    data, port = tmp_path / "data", free_port()
    base = f"http://127.0.0.1:{port}"
    first, lines = await start_serve(data, port)
    try:
        key = lines[1].removeprefix("API key: ")
        await _world_answers(base, key)
        assert (data / "world" / "world.lock").read_text() == f"{first.pid} vttrelay serve\n"
        tokens = _tokens(data)

        # a second serve with the embedded world, on another port: refused at start
        other = free_port()
        code, out, err = await run_vttrelay("serve", "--port", str(other), "--data-dir", str(data))
        refused_at = time.monotonic()
        assert (code, out) == (1, ""), err
        assert err == (
            f"vttrelay: the embedded world of {data} is already served by another "
            f"vttrelay serve (pid {first.pid})\n"
        )
        await _nothing_listens(other)
        assert _tokens(data) == tokens  # no token issued, none revoked

        # `vttrelay world run` on that data dir: the same lock, the same refusal
        code, out, err = await run_vttrelay(
            "world", "run", "--relay", base, "--token", "t", "--data-dir", str(data)
        )
        assert (code, out) == (1, "")
        assert err == (
            f"vttrelay world run: the embedded world of {data} is already served by another "
            f"vttrelay serve (pid {first.pid})\n"
        )

        # a relay without the world shares the data dir as before (the scale-out setups)
        relay_only = free_port()
        second, _ = await start_serve(data, relay_only, "--no-world")
        try:
            async with httpx.AsyncClient(headers={"x-api-key": key}) as api:
                got = await api.get(f"http://127.0.0.1:{relay_only}/clients", timeout=20)
            assert got.status_code == 200, got.text
        finally:
            await stop_process(second)

        # the first relay's key and world still work, past its next token check
        await asyncio.sleep(max(0.0, refused_at + TOKEN_CHECK + 1.0 - time.monotonic()))
        await _world_answers(base, key)
        assert _tokens(data) == tokens
    finally:
        await stop_process(first)

    # stopped cleanly: the next start runs the world again (its file tells the key)
    again, _ = await start_serve(data, free_port())
    await stop_process(again)


async def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    """`vttrelay world run` holds the lock while it runs (here it keeps retrying a relay that
    is not there); a serve is refused meanwhile, naming it; SIGKILLed, it leaves the lock free
    and a serve runs the world; that serve SIGKILLed, the next one starts too."""
    data = tmp_path / "data"
    world = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", "world", "run", "--data-dir", str(data),
        "--relay", f"http://127.0.0.1:{free_port()}", "--token", "t",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        lock = data / "world" / "world.lock"
        for _ in range(300):
            if lock.exists() and lock.read_text() == f"{world.pid} vttrelay world run\n":
                break
            await asyncio.sleep(0.1)
        code, out, err = await run_vttrelay(
            "serve", "--port", str(free_port()), "--data-dir", str(data)
        )
        assert (code, out) == (1, "")
        assert err == (
            f"vttrelay: the embedded world of {data} is already served by another "
            f"vttrelay world run (pid {world.pid})\n"
        )
    finally:
        if world.returncode is None:
            os.kill(world.pid, signal.SIGKILL)
        await world.wait()
    assert world.returncode == -signal.SIGKILL

    port = free_port()
    serve, lines = await start_serve(data, port)
    try:
        await _world_answers(f"http://127.0.0.1:{port}", lines[1].removeprefix("API key: "))
    finally:
        os.kill(serve.pid, signal.SIGKILL)
        await serve.wait()
    port = free_port()
    serve, _ = await start_serve(data, port)
    try:
        await _world_answers(f"http://127.0.0.1:{port}", (data / "demo-key").read_text().strip())
        assert (data / "world" / "world.lock").read_text() == f"{serve.pid} vttrelay serve\n"
    finally:
        await stop_process(serve)


BRANN = "Actor.brannFighter0001"


async def _brann_hp(api: httpx.AsyncClient) -> int:
    got = await api.get("/get", params={"uuid": BRANN}, timeout=20)
    assert got.status_code == 200, got.text
    value: int = got.json()["data"]["system"]["attributes"]["hp"]["value"]
    return value


async def _execute_js(api: httpx.AsyncClient) -> tuple[int, bool]:
    got = await api.post("/execute-js", json={"script": "return 1"}, timeout=20)
    return got.status_code, got.json()["success"]


async def test_world_reset_and_settings_are_refused_while_serve_runs_the_world(
    tmp_path: Path,
) -> None:
    """`vttrelay world reset` and `world settings` change the world's store: while a serve runs
    that world they are refused as a second serve is (one line naming it, exit code 1) and the
    served world is unchanged and still answers; once it stops, both work and the next serve
    has their changes."""
    data, port = tmp_path / "data", free_port()
    base = f"http://127.0.0.1:{port}"
    serve, lines = await start_serve(data, port)
    try:
        key = lines[1].removeprefix("API key: ")
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
            full = await _brann_hp(api)
            hurt = await api.post(
                "/decrease",
                params={"uuid": BRANN},
                json={"attribute": "system.attributes.hp.value", "amount": 3},
                timeout=20,
            )
            assert hurt.status_code == 200, hurt.text
            assert await _execute_js(api) == (400, False)  # off in the demo world

            for command in (("reset",), ("settings", "--execute-js", "on"), ("settings",)):
                code, out, err = await run_vttrelay("world", *command, "--data-dir", str(data))
                assert (code, out) == (1, ""), (command, out, err)
                assert err == (
                    f"vttrelay world {command[0]}: the embedded world of {data} is already "
                    f"served by another vttrelay serve (pid {serve.pid})\n"
                )
            # nothing changed, and the served world still answers
            assert await _brann_hp(api) == full - 3
            assert await _execute_js(api) == (400, False)
            await _world_answers(base, key)
            assert (data / "world" / "world.lock").read_text() == f"{serve.pid} vttrelay serve\n"
    finally:
        await stop_process(serve)

    code, out, err = await run_vttrelay("world", "reset", "--data-dir", str(data))
    assert (code, out) == (0, ""), err
    assert "is restored" in err
    code, out, err = await run_vttrelay(
        "world", "settings", "--execute-js", "on", "--data-dir", str(data)
    )
    assert (code, out) == (0, "execute-js: on\nmacro-write: off\nmacro-execute: off\n"), err

    serve, _ = await start_serve(data, port)
    try:
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
            assert await _brann_hp(api) == full  # the reset restored the demo world
            assert await _execute_js(api) == (200, True)  # and the setting is on
    finally:
        await stop_process(serve)


async def test_world_pair_is_refused_while_the_world_runs_and_pairs_once_it_stops(
    tmp_path: Path,
) -> None:
    """`vttrelay world pair` writes the world's connection (and opens its store): while a
    `world run` runs that world it is refused as a second serve is (one line naming it, exit
    code 1), spends no pairing code, leaves `connection.json` as it was, and the world keeps
    answering through its relay; once it stops, the same code pairs it (its client id kept)
    and the world runs with the new token. Under a `serve` with its embedded world: refused
    the same way, no `connection.json` written."""
    relay_data, world_data, port = tmp_path / "relay", tmp_path / "world", free_port()
    base = f"http://127.0.0.1:{port}"
    relay, lines = await start_serve(relay_data, port, "--no-world")
    try:
        key = lines[1].removeprefix("API key: ")
        client_id = await pair_world(world_data, relay_data, base)
        stored = world_data / "world" / "connection.json"
        paired = stored.read_bytes()

        world = await world_run(world_data)
        try:
            await answers_as(base, key, client_id)
            second = await pairing_code(relay_data)
            code, out, err = await run_vttrelay(
                "world", "pair", second, "--relay", base, "--data-dir", str(world_data)
            )
            assert (code, out) == (1, ""), err
            assert err == (
                f"vttrelay world pair: the embedded world of {world_data} is already served by "
                f"another vttrelay world run (pid {world.pid})\n"
            )
            assert stored.read_bytes() == paired
            await answers_as(base, key, client_id)
        finally:
            await stop_process(world)

        # stopped: the code the refused call was given still pairs (it was never sent)
        code, out, err = await run_vttrelay(
            "world", "pair", second, "--relay", base, "--data-dir", str(world_data)
        )
        assert (code, out) == (0, client_id + "\n"), err
        assert stored.read_bytes() != paired  # a new token
        await runs(world_data, base, key, client_id)
    finally:
        await stop_process(relay)

    # a serve with its embedded world holds it the same way
    serve_data = tmp_path / "serve"
    serve, _ = await start_serve(serve_data, port)
    try:
        code, out, err = await run_vttrelay(
            "world", "pair", await pairing_code(serve_data), "--relay", base,
            "--data-dir", str(serve_data),
        )  # fmt: skip
        assert (code, out) == (1, ""), err
        assert err == (
            f"vttrelay world pair: the embedded world of {serve_data} is already served by "
            f"another vttrelay serve (pid {serve.pid})\n"
        )
        assert not (serve_data / "world" / "connection.json").exists()
    finally:
        await stop_process(serve)


async def test_restore_is_refused_while_world_run_runs_the_world(tmp_path: Path) -> None:
    """`vttrelay restore` replaces a data dir's files, the world's among them: a `world run`
    holds no relay lock, so the world lock is what refuses the restore while it runs (one line
    naming it), leaving its store and connection as they were and the world answering; once it
    stops, the restore moves the data dir aside and the restored world runs."""
    relay_data, world_data, port = tmp_path / "relay", tmp_path / "world", free_port()
    base, backup = f"http://127.0.0.1:{port}", tmp_path / "backup"
    relay, lines = await start_serve(relay_data, port, "--no-world")
    try:
        key = lines[1].removeprefix("API key: ")
        client_id = await pair_world(world_data, relay_data, base)
        code, _, err = await run_vttrelay("backup", str(backup), "--data-dir", str(world_data))
        assert code == 0, err
        stored = world_data / "world" / "connection.json"
        paired = stored.read_bytes()

        world = await world_run(world_data)
        try:
            await answers_as(base, key, client_id)
            code, out, err = await run_vttrelay(
                "restore", str(backup), "--replace", "--data-dir", str(world_data)
            )
            assert (code, out) == (2, ""), err
            assert err == (
                f"vttrelay restore: the embedded world of {world_data} is already served by "
                f"another vttrelay world run (pid {world.pid})\n"
            )
            assert list(tmp_path.glob("world.replaced-*")) == []  # nothing moved aside
            assert stored.read_bytes() == paired
            assert (world_data / "world" / "world.db").is_file()
            await answers_as(base, key, client_id)
        finally:
            await stop_process(world)

        code, _, err = await run_vttrelay(
            "restore", str(backup), "--replace", "--data-dir", str(world_data)
        )
        assert code == 0, err
        (aside,) = tmp_path.glob("world.replaced-*")
        assert (aside / "world" / "connection.json").read_bytes() == paired
        assert not (aside / "world" / "world.lock").exists()  # the lock stayed in place
        assert stored.read_bytes() == paired  # the backup's, the same token
        await runs(world_data, base, key, client_id)
    finally:
        await stop_process(relay)
