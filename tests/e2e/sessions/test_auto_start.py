"""Auto-start of offline stored worlds end to end (issue 23, files-sheet-sessions §4.10) over real
`vttrelay serve` processes: with `--auto-start-worlds`, a REST call naming an offline stored
embedded world of the caller's account starts it (a real world process connecting back over the
relay's WebSocket) and is answered once it has connected; the world is then a session like any
other, ended when idle. Another account's world and unknown ids keep the usual offline answer,
and so does everything with auto-start off (the default). Not only REST calls: an SSE stream,
a /ws/api socket and the file routes (upload, download, listing) start it too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from bench.procs import alive
from tests.support.e2e import eventually
from tests.support.relay import stop_process

from vttrelay.relay.store import RelayStore

from .test_sessions import Relay, serve, session_pids


def bound_key(data_dir: Path, client_id: str) -> str:
    """A key of the default account allowed on `client_id` only."""
    store = RelayStore(data_dir / "relay.db")
    try:
        return store.create_key("default", ("world:info",), (client_id,), rate_per_minute=0)[1]
    finally:
        store.close()


async def test_a_request_starts_an_offline_stored_world(tmp_path: Path) -> None:
    relay = await serve(tmp_path, "--auto-start-worlds", "--session-idle", "3")
    try:
        key = relay.key()
        status, made = await relay.call("POST", "/session/worlds", key, {"name": "sleepy"})
        assert status == 201, made
        client_id = made["clientId"]
        assert session_pids(tmp_path) == []  # stored, not running

        stranger = relay.key(account="someone-else")
        status, body = await relay.call("GET", "/world-info", stranger, clientId=client_id)
        assert (status, body) == (404, {"error": "Invalid client ID"})  # not theirs to start
        assert session_pids(tmp_path) == []

        # two requests at once: the first starts the world, the second joins that start
        first, second = await asyncio.gather(
            relay.call("GET", "/world-info", key, clientId=client_id),
            relay.call("GET", "/world-info", key, clientId=client_id),
        )
        for status, info in (first, second):
            assert status == 200, info
            assert info["type"] == "world-info-result"
        (pid,) = session_pids(tmp_path)
        status, listed = await relay.call("GET", "/session", key)
        (entry,) = listed["activeSessions"]
        assert entry["clientId"] == client_id and entry["worldName"] == "sleepy"
        status, worlds = await relay.call("GET", "/session/worlds", key)
        assert [(w["name"], w["running"]) for w in worlds["worlds"]] == [("sleepy", True)]

        status, body = await relay.call("GET", "/world-info", key, clientId="nothing-000000")
        assert (status, body) == (404, {"error": "Invalid client ID"})

        # idle: ended like any session; the next request (here by a key bound to that world,
        # naming none) starts it again
        await eventually(lambda: not alive(pid), timeout=30)
        bound = bound_key(tmp_path, client_id)
        status, info = await relay.call("GET", "/world-info", bound)
        assert status == 200 and info["type"] == "world-info-result", info
        (again,) = session_pids(tmp_path)
        assert again != pid
    finally:
        await stop_process(relay.proc)
    assert session_pids(tmp_path) == []


async def test_with_auto_start_off_an_offline_world_stays_offline(tmp_path: Path) -> None:
    relay = await serve(tmp_path)
    try:
        key = relay.key()
        status, made = await relay.call("POST", "/session/worlds", key, {"name": "sleepy"})
        assert status == 201, made
        status, body = await relay.call("GET", "/world-info", key, clientId=made["clientId"])
        assert (status, body) == (404, {"error": "Invalid client ID"})
        await asyncio.sleep(0.5)
        assert session_pids(tmp_path) == []
    finally:
        await stop_process(relay.proc)


EVERY_KIND = (
    "session:manage",
    "world:info",
    "clients:read",
    "events:subscribe",
    "file:read",
    "file:write",
)


async def offline(relay: Relay, key: str, client_id: str) -> None:
    """End the world's session and wait until the relay no longer has it."""
    status, listed = await relay.call("GET", "/session", key)
    (entry,) = listed["activeSessions"]
    status, _ = await relay.call("DELETE", "/end-session", key, sessionId=entry["sessionId"])
    assert status == 200
    for _ in range(500):
        status, clients = await relay.call("GET", "/clients", key)
        live = [c for c in clients["clients"] if c["isOnline"]]
        if not live:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{client_id} still connected")


async def test_streams_sockets_and_file_routes_start_an_offline_stored_world(
    tmp_path: Path,
) -> None:
    relay = await serve(tmp_path, "--auto-start-worlds")
    try:
        key = relay.key(EVERY_KIND)
        status, made = await relay.call("POST", "/session/worlds", key, {"name": "sleepy"})
        assert status == 201, made
        cid = made["clientId"]
        headers = {"x-api-key": key}

        async with aiohttp.ClientSession() as http:
            # an SSE stream: answered `connected` once the world has started
            url = f"{relay.url}/chat/subscribe"
            async with http.get(url, params={"clientId": cid}, headers=headers) as stream:
                assert stream.status == 200
                first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 60)
                assert b"\nevent: connected\n" in first, first
                assert f'data: {{"clientId":"{cid}"}}'.encode() in first
                assert len(session_pids(tmp_path)) == 1
            await offline(relay, key, cid)

            # a /ws/api socket naming it: `connected`, then the world answers through it
            async with http.ws_connect(relay.url.replace("http", "ws") + "/ws/api") as ws:
                await ws.send_json({"type": "auth", "token": key, "clientId": cid})
                hello = await asyncio.wait_for(ws.receive_json(), 60)
                assert (hello["type"], hello["clientId"]) == ("connected", cid), hello
                await ws.send_json({"type": "world-info", "requestId": "r1"})
                reply = await asyncio.wait_for(ws.receive_json(), 30)
                assert (reply["type"], reply["requestId"]) == ("world-info-result", "r1"), reply
            await offline(relay, key, cid)

            # an upload, then a download and a listing, each to the offline world
            body = {
                "path": "notes",
                "filename": "hello.txt",
                "fileData": "data:text/plain;base64,aGVsbG8=",
                "mimeType": "text/plain",
            }
            status, uploaded = await relay.call("POST", "/upload", key, body, clientId=cid)
            assert status == 200 and uploaded["success"] is True, uploaded
            await offline(relay, key, cid)
            async with http.get(
                f"{relay.url}/download",
                params={"clientId": cid, "path": "notes/hello.txt"},
                headers=headers,
            ) as answer:
                assert answer.status == 200
                assert await answer.read() == b"hello"
            await offline(relay, key, cid)
            status, listing = await relay.call("GET", "/file-system", key, clientId=cid)
            assert status == 200, listing
            assert {"name": "notes", "path": "notes", "type": "directory"} in listing["results"]

            # another account's stored world is not started by any of them
            stranger = relay.key(EVERY_KIND, account="someone-else")
            await offline(relay, key, cid)
            async with http.get(
                url, params={"clientId": cid}, headers={"x-api-key": stranger}
            ) as stream:
                assert stream.status == 404
            async with http.ws_connect(relay.url.replace("http", "ws") + "/ws/api") as ws:
                await ws.send_json({"type": "auth", "token": stranger, "clientId": cid})
                refused = await ws.receive_json()
                assert refused["type"] == "error", refused
            status, body = await relay.call("POST", "/upload", stranger, body, clientId=cid)
            assert (status, body) == (404, {"error": "Invalid client ID"})
            assert session_pids(tmp_path) == []
    finally:
        await stop_process(relay.proc)
    assert session_pids(tmp_path) == []
