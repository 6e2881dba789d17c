"""`vttrelay backup` of a data dir that holds only an embedded world, as the operator of the
README's two-machine pairing meets it: a `vttrelay world run` paired to a `vttrelay serve
--no-world` elsewhere (here another data dir), backed up while it runs and its actors change
through the relay; restored into a fresh data dir after it stops (the restore says it is the
world alone), a new `world run` from there connects with the stored connection and answers with
the changed actor, what was created before the backup began and the uploaded file. A data dir
with neither a relay store nor a world is refused in one line naming it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
from bench.procs import free_port
from tests.support.relay import run_vttrelay, start_serve, stop_process
from tests.support.world_run import answers_as, pair_world, world_run

BRANN = "Actor.brannFighter0001"
RENAMED = "Brann the Backed-Up"
NOTE = b"Session 12: the goblins took the bridge."


async def write_actors(api: httpx.AsyncClient, out: list[tuple[str, str, float]]) -> None:
    """Create actors in the world through the relay, one after another: (uuid, name, answered
    at)."""
    for n in range(100_000):
        name = f"Backup {n}"
        body = {"entityType": "Actor", "data": {"name": name, "type": "npc"}}
        got = await api.post("/create", json=body, timeout=20)
        assert got.status_code == 200, got.text
        out.append((got.json()["uuid"], name, time.time()))


async def test_a_world_run_is_backed_up_while_it_writes_and_runs_again_from_the_restore(
    tmp_path: Path,
) -> None:
    relay_data, world_data, restored = tmp_path / "relay", tmp_path / "world", tmp_path / "fresh"
    dest, port = tmp_path / "backups" / "world-monday", free_port()
    base = f"http://127.0.0.1:{port}"

    # nothing there yet: neither a relay store nor a world
    code, out, err = await run_vttrelay("backup", str(dest), "--data-dir", str(world_data))
    assert (code, out) == (2, "")
    assert err == (
        f"vttrelay backup: {world_data} holds neither a relay store (relay.db) nor an embedded "
        "world (world/world.db): nothing to back up\n"
    )
    assert not dest.exists() and not dest.parent.exists()

    code, key, err = await run_vttrelay(
        "keys", "create", "--all-scopes", "--rate", "0", "--data-dir", str(relay_data)
    )
    assert code == 0, err
    key = key.strip()  # unlimited: the writer below calls as fast as it is answered
    relay, _ = await start_serve(relay_data, port, "--no-world")
    try:
        client_id = await pair_world(world_data, relay_data, base)
        world = await world_run(world_data)
        created: list[tuple[str, str, float]] = []
        try:
            await answers_as(base, key, client_id)
            async with httpx.AsyncClient(
                base_url=base, headers={"x-api-key": key}, params={"clientId": client_id}
            ) as api:
                got = await api.put(
                    "/update", params={"uuid": BRANN}, json={"data": {"name": RENAMED}}, timeout=20
                )
                assert got.status_code == 200, got.text
                upload = {"path": "notes", "source": "data", "filename": "session.txt"}
                got = await api.post(
                    "/upload", params=upload, content=NOTE,
                    headers={"Content-Type": "text/plain"}, timeout=20,
                )  # fmt: skip
                assert got.status_code == 200, got.text
                writer = asyncio.ensure_future(write_actors(api, created))
                try:
                    while len(created) < 20:
                        assert not writer.done(), writer.exception()
                        await asyncio.sleep(0.05)
                    began = time.time()
                    code, out, err = await run_vttrelay(
                        "backup", str(dest), "--data-dir", str(world_data)
                    )
                    ended = time.time()
                    assert (code, out) == (0, f"{dest}\n"), err
                    assert err.startswith(
                        f"Backed up the embedded world of {world_data}: 1 database(s) "
                        "(world/world.db), 2 other file(s), "
                    ), err
                    await asyncio.sleep(0.3)  # still writing afterwards
                    assert not writer.done(), writer.exception()
                finally:
                    writer.cancel()
                    await asyncio.gather(writer, return_exceptions=True)
                await answers_as(base, key, client_id)  # the backup left the world running
        finally:
            await stop_process(world)
        assert any(began < at < ended for _, _, at in created)  # written during the backup
        assert not (world_data / "relay.db").exists()  # a world-only data dir indeed
        listed = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
        assert listed == [
            "vttrelay-backup.json",
            "world/connection.json",
            "world/files/data/notes/session.txt",
            "world/world.db",
        ]

        code, out, err = await run_vttrelay("restore", str(dest), "--data-dir", str(restored))
        assert (code, out) == (0, ""), err
        first, second = err.splitlines()
        assert first.startswith(
            f"Restored the embedded world of {restored} from {dest} (a world-only backup, no "
            "relay store): 1 database(s) (world/world.db), 2 other file(s), "
        ), err
        assert second == (
            f"Its relay connection is restored too: `vttrelay world run --data-dir {restored}` "
            f"connects it to ws://127.0.0.1:{port}/relay."
        )

        again = await world_run(restored)
        try:
            await answers_as(base, key, client_id)
            async with httpx.AsyncClient(
                base_url=base, headers={"x-api-key": key}, params={"clientId": client_id}
            ) as api:
                got = await api.get("/get", params={"uuid": BRANN}, timeout=20)
                assert got.status_code == 200, got.text
                assert got.json()["data"]["name"] == RENAMED
                for uuid, name, at in created:
                    if at < began:
                        got = await api.get("/get", params={"uuid": uuid}, timeout=20)
                        assert got.status_code == 200, (uuid, got.text)
                        assert got.json()["data"]["name"] == name
                got = await api.get(
                    "/download", params={"path": "notes/session.txt", "source": "data"}, timeout=20
                )
                assert got.status_code == 200, got.text
                assert got.content == NOTE
        finally:
            await stop_process(again)
    finally:
        await stop_process(relay)
