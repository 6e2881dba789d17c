"""An upgrade migrates in place: this release's `vttrelay serve` opens a data dir written by
0.1.0 (tests/data/release-0.1.0, how it was made is in its README) and every key, connection
token, account and world document of it is still there and works."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import aiohttp
from bench.procs import free_port
from tests.support.relay import WorldDouble, start_serve, stop_process

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "release-0.1.0"


async def test_serve_opens_a_data_dir_of_the_last_release(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FIXTURE, data)  # the committed files stay as 0.1.0 wrote them
    secrets = json.loads((FIXTURE / "secrets.json").read_text())
    with sqlite3.connect(FIXTURE / "world" / "world.db") as old:
        documents = old.execute("SELECT collection, id FROM documents").fetchall()
    actors = [doc_id for collection, doc_id in documents if collection == "Actor"]
    assert actors  # the demo world's characters
    port = free_port()
    proc, _ = await start_serve(data, port)
    try:
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            bot = {"x-api-key": secrets["bot_key"]}
            async with http.get(base + "/clients", headers=bot) as resp:
                assert resp.status == 403  # known (an unknown key: 401), its one scope kept
                assert "clients:read" in await resp.text()
            world = WorldDouble(
                f"ws://127.0.0.1:{port}/relay",
                secrets["world_client_id"],
                secrets["world_token"],
                session=http,
            )
            await world.connect()  # the old connection token still authenticates
            await world.close()
            for actor in actors:  # every world document, read through the relay
                params = {"clientId": "vttrelay-demo", "uuid": f"Actor.{actor}"}
                async with http.get(base + "/get", params=params, headers=bot) as resp:
                    assert resp.status == 200, await resp.text()
                    assert (await resp.json())["data"]["_id"] == actor
    finally:
        await stop_process(proc)
    with sqlite3.connect(data / "world" / "world.db") as new:
        kept = set(new.execute("SELECT collection, id FROM documents").fetchall())
    assert set(documents) <= kept
    with sqlite3.connect(data / "relay.db") as relay:
        accounts = {row[0] for row in relay.execute("SELECT DISTINCT account FROM api_keys")}
        tokens = relay.execute("SELECT client_id FROM connection_tokens").fetchall()
    assert "default" in accounts and (secrets["world_client_id"],) in tokens
