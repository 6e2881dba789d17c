"""A scripted double of the real Foundry module (v3.4.1) against the relay.

`ModuleDouble` does what the module does on the wire (wire-protocol §2): it pairs with a code
through `POST /auth/pair` (with the module's body and an Origin header, as a browser fetch), or
with its default "Pair" button (and "Upgrade") through `POST /auth/pair-request`, opening the
`pairUrl` page and polling the status until approved, refused or expired (endpoints-beyond-seed
§12.1; `browser_pair` returns the text the module shows),
derives the socket URL from `relayUrl` (strip `/relay`, append `/relay`), connects with the
module's exact query, sends the auth frame first, drops anything before `auth-success`, then
sends `ping` and `player-list`, answers requests with recorded reply shapes, and reacts to close
codes like the module: 1000 stops, 1008/4001/4002 wipe the token, 4004 defers, anything else
reconnects with exponential backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from vttrelay import cli
from vttrelay.protocol import PERMANENT_CLOSE_CODES, Close
from vttrelay.relay.accounts import pair_requests
from vttrelay.relay.store import PAIRING_ALPHABET

GM = {"id": "u-gm", "name": "Gamemaster", "role": 4, "active": True}
PLAYER = {"id": "u-p1", "name": "Player One", "role": 1, "active": False}


def recorded_reply(frame: dict[str, Any]) -> dict[str, Any] | None:
    """Module replies with the shapes of wire-protocol §4.6-4.9."""
    t, rid = frame["type"], frame["requestId"]
    head = {"type": f"{t}-result", "requestId": rid}
    if t == "skill-check":
        if frame.get("skill") not in ("acr", "ath", "ste", "prc"):
            return {**head, "error": f"Invalid skill '{frame.get('skill')}'. Valid skills: acr"}
        return {
            **head,
            "data": {
                "actorUuid": frame["actorUuid"],
                "skill": frame["skill"],
                "total": 14,
                "formula": "1d20 + 0",
                "result": "14 + 0",
            },
        }
    if t == "get-actor-details":
        return {**head, "error": f"Actor not found with UUID: {frame['actorUuid']}"}
    if t == "chat-messages":
        messages: list = []
        return {
            **head,
            "success": True,
            "data": {"messages": messages, "total": 0, "offset": 0, "limit": frame["limit"]},
        }
    if t == "players":
        return {**head, "users": [{**GM, "isGM": True, "color": "#ff0000", "avatar": "a.png"}]}
    if t == "world-info":
        return {
            **head,
            "data": {
                "world": {"id": "w", "title": "W"},
                "system": {"id": "dnd5e", "title": "D&D 5e", "version": "5.1.0"},
                "foundryVersion": "14.363",
                "modules": [],
                "users": [],
                "activeScene": None,
            },
        }
    if t == "select":
        return {**head, "success": True, "count": 2, "message": "2 entities selected",
                "selected": ["Scene.s.Token.a", "Scene.s.Token.b"]}  # fmt: skip
    if t == "execute-js":
        return {
            **head,
            "success": False,
            "error": "execute-js is disabled in REST API module settings",
        }
    return None  # no handler: the module stays silent


class ModuleDouble:
    """The Foundry module's network behaviour, scripted."""

    def __init__(self, relay_http: str, origin: str = "http://foundry.local:30000") -> None:
        self.http_base = relay_http
        self.origin = origin
        self.ws_relay_url = ""
        self.client_id = ""
        self.connection_token = ""
        self.paired_relay_url = ""
        self.state = "disconnected"
        self.closes: list[int] = []
        self.frames: list[dict[str, Any]] = []
        self.connected = asyncio.Event()
        self.stopped = asyncio.Event()
        self._session = aiohttp.ClientSession()
        self._task: asyncio.Task[None] | None = None
        self.base_delay = 0.05
        self.poll_interval = 3.0  # the module polls a pair request every 3 s
        self.pair_request: dict[str, Any] = {}  # the create answer of the last pair request
        self.pair_page = ""  # the page pairUrl opened
        self.pair_requested = asyncio.Event()
        self.polls: list[tuple[int, dict[str, Any]]] = []  # every status poll's answer

    def world_fields(self) -> dict[str, str]:
        return {
            "worldId": "my-world",
            "worldTitle": "My World",
            "systemId": "dnd5e",
            "systemTitle": "Dungeons & Dragons Fifth Edition",
            "systemVersion": "5.1.4",
            "foundryVersion": "14.363",
        }

    async def browser_pair(self, upgrade: bool = False) -> str:
        """The Pair (or Upgrade) button (§12.1): request, open pairUrl, poll every
        `poll_interval` until a decision, then `POST /auth/pair` with the approved code."""
        if upgrade:
            body: dict[str, Any] = {"clientId": self.client_id, **self.world_fields()}
            body["upgradeOnly"] = True
        else:
            body = {**self.world_fields(), "serverFingerprint": "abc"}
        async with self._session.post(
            self.http_base + "/auth/pair-request", json=body, headers={"Origin": self.origin}
        ) as resp:
            assert resp.headers["Access-Control-Allow-Origin"] == "*"
            reply = await resp.json()
            if resp.status // 100 != 2:
                return f"Pairing failed: {reply.get('error')}"
        self.pair_request = reply
        if reply["pairUrl"].startswith(("http://", "https://")):  # opened in a new tab
            async with self._session.get(reply["pairUrl"]) as page:
                self.pair_page = await page.text()
        self.pair_requested.set()
        status_url = f"{self.http_base}/auth/pair-request/{reply['code']}/status"
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                async with self._session.get(status_url, headers={"Origin": self.origin}) as resp:
                    answer = (resp.status, await resp.json())
            except aiohttp.ClientError:
                continue  # retried on the next tick
            self.polls.append(answer)
            status, polled = answer
            if status // 100 != 2:
                return "Pair request not found or expired."
            state = polled.get("status")
            if state == "denied":
                return "Pairing request was denied."
            if state in ("expired", "exchanged"):
                return "Pair request expired. Please try again."
            if state == "approved" and upgrade and polled.get("upgraded"):
                return "Cross-world permissions updated successfully!"
            if state == "approved" and "pairingCode" in polled:
                paired = await self.pair(polled["pairingCode"])
                if paired["status"] != 200:
                    return f"Pairing failed: {paired.get('error')}"
                return f"Paired! Client ID: {self.client_id}"

    async def pair(self, code: str) -> dict[str, Any]:
        body = {
            "code": code.upper(),
            "worldId": self.world_fields()["worldId"],
            "worldTitle": self.world_fields()["worldTitle"],
            "serverFingerprint": "abc",
            "existingClientId": self.client_id or None,
            "serverOrigin": self.origin,
        }
        async with self._session.post(
            self.http_base + "/auth/pair", json=body, headers={"Origin": self.origin}
        ) as resp:
            assert resp.headers["Access-Control-Allow-Origin"] == "*"
            reply = await resp.json()
            if resp.status != 200:
                return {"status": resp.status, **reply}
        self.ws_relay_url = reply["relayUrl"]
        self.connection_token = reply["token"]
        self.client_id = reply["clientId"]
        self.paired_relay_url = reply["relayUrl"]
        return {"status": 200, **reply}

    def socket_url(self) -> str:
        base = self.ws_relay_url.rstrip("/")
        base = base.removesuffix("/relay")
        return base + "/relay"

    def query(self) -> dict[str, str]:
        return {
            "id": self.client_id,
            "worldId": "my-world",
            "worldTitle": "My World",
            "foundryVersion": "14.363",
            "systemId": "dnd5e",
            "systemTitle": "Dungeons & Dragons Fifth Edition",
            "systemVersion": "5.1.4",
        }

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        attempt = 0
        while self.connection_token and attempt < 20:
            code = await self._connect_once()
            self.closes.append(code)
            self.connected.clear()
            if code == Close.NORMAL:
                break
            if code in PERMANENT_CLOSE_CODES:
                self.connection_token = ""  # the module wipes its token
                break
            if code == Close.DUPLICATE:
                self.state = "deferred"
                break
            attempt += 1
            await asyncio.sleep(min(1.0, self.base_delay * 2 ** (attempt - 1)))
        self.state = "stopped" if self.state != "deferred" else "deferred"
        self.stopped.set()

    async def _connect_once(self) -> int:
        try:
            ws = await self._session.ws_connect(
                self.socket_url(), params=self.query(), origin=self.origin
            )
        except aiohttp.ClientError:
            return 1006
        self.state = "authenticating"
        await ws.send_str(orjson.dumps({"type": "auth", "token": self.connection_token}).decode())
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            frame = orjson.loads(msg.data)
            self.frames.append(frame)
            if self.state == "authenticating":
                if frame.get("type") == "auth-success":
                    self.state = "connected"
                    await ws.send_str('{"type":"ping"}')
                    users = {"type": "player-list", "users": [GM, PLAYER]}
                    await ws.send_str(orjson.dumps(users).decode())
                    self.connected.set()
                continue  # dropped before auth-success
            if "requestId" in frame:
                reply = recorded_reply(frame)
                if reply is not None:
                    await ws.send_str(orjson.dumps(reply).decode())
        return ws.close_code or 1006

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        await self._session.close()


@pytest.fixture
async def module(relay: Any) -> Any:
    double = ModuleDouble(relay.url)
    yield double
    await double.close()


async def _paired(relay: Any, module: ModuleDouble) -> None:
    reply = await module.pair(relay.store.create_pairing_code().lower())
    assert reply["status"] == 200
    module.start()
    await asyncio.wait_for(module.connected.wait(), 5)


async def test_pair_connect_and_recorded_calls(relay: Any, module: ModuleDouble) -> None:
    await _paired(relay, module)
    assert module.frames[0] == {"type": "auth-success"}
    assert module.socket_url() == relay.ws_url
    for _ in range(100):
        if {"type": "pong"} in module.frames and relay.state.registry.get(module.client_id).users:
            break
        await asyncio.sleep(0.02)
    assert {"type": "pong"} in module.frames
    world = relay.state.registry.get(module.client_id)
    assert world.users == [GM, PLAYER] and world.metadata["publicUrl"] == module.origin

    key = relay.key(scopes=["dnd5e", "chat:read", "entity:read", "world:info", "execute-js"])
    cases = [
        ("POST", "/dnd5e/skill-check", None, {"actorUuid": "Actor.a", "skill": "prc"}, 200),
        ("POST", "/dnd5e/skill-check", None, {"actorUuid": "Actor.a", "skill": "xyz"}, 400),
        (
            "GET",
            "/dnd5e/get-actor-details",
            {"actorUuid": "Actor.nope", "details": '["items"]'},
            None,
            400,
        ),
        ("GET", "/chat", None, None, 200),
        ("GET", "/players", None, None, 200),
        ("GET", "/world-info", {"clientId": module.client_id}, None, 200),
        ("POST", "/select", None, {"all": True}, 200),
        ("POST", "/execute-js", None, {"script": "return game.world.id"}, 400),
    ]
    for method, path, query, body, status in cases:
        got = await relay.call(method, path, key=key, params=query, json=body)
        assert got.status == status, (path, got.body)
        reply = got.json()
        assert reply["type"].endswith("-result") and reply["requestId"]
    got = await relay.call("GET", "/chat", key=key)
    assert got.json()["data"]["limit"] == 10


async def test_module_reconnects_after_relay_restart(relay_factory: Any, tmp_path: Any) -> None:
    first = await relay_factory(data_dir=tmp_path / "shared")
    port = first.port
    module = ModuleDouble(first.url)
    try:
        await _paired(first, module)
        await first.stop()
        await asyncio.sleep(0.1)
        assert module.closes[:1] == [Close.GOING_AWAY]
        second = await relay_factory(data_dir=tmp_path / "shared", port=port)
        await asyncio.wait_for(module.connected.wait(), 5)
        assert module.connection_token  # kept: 1001 is transient
        got = await second.call("GET", "/world-info", key=second.key())
        assert got.status == 200
    finally:
        await module.close()


async def test_self_unpair_makes_the_module_forget_its_token(
    relay: Any, module: ModuleDouble
) -> None:
    await _paired(relay, module)
    token = module.connection_token
    got = await relay.call("POST", "/api/self-unpair", json={"token": token})
    assert got.status == 200
    await asyncio.wait_for(module.stopped.wait(), 5)
    assert module.closes == [Close.AUTH_PROTOCOL]
    assert module.connection_token == ""


async def test_second_browser_is_deferred_without_seeing_auth_success(
    relay: Any, module: ModuleDouble
) -> None:
    await _paired(relay, module)
    other = ModuleDouble(relay.url)
    await other._session.close()
    other._session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    )
    other.ws_relay_url, other.client_id = module.ws_relay_url, module.client_id
    other.connection_token = module.connection_token
    try:
        other.start()
        await asyncio.wait_for(other.stopped.wait(), 5)
        assert other.state == "deferred" and other.closes == [Close.DUPLICATE]
        assert other.frames == []  # no auth-success before the 4004
        assert module.state == "connected"
    finally:
        await other.close()


async def test_same_browser_reload_replaces_the_old_tab(relay: Any, module: ModuleDouble) -> None:
    await _paired(relay, module)
    reloaded = ModuleDouble(relay.url)
    reloaded.ws_relay_url, reloaded.client_id = module.ws_relay_url, module.client_id
    reloaded.connection_token = module.connection_token
    try:
        reloaded.start()
        await asyncio.wait_for(reloaded.connected.wait(), 5)
        await asyncio.wait_for(module.stopped.wait(), 5)
        assert module.closes == [Close.NORMAL]  # the old tab stops for good
        assert module.connection_token  # and keeps its token
    finally:
        await reloaded.close()


# The Pair button (endpoints-beyond-seed §12.1) ----------------------------------------------------


async def _approval(*args: str) -> int:
    """Run `vttrelay ARGS` in this process (a thread), as the relay's owner would beside it."""
    return await asyncio.to_thread(cli.main, list(args))


async def _requested(module: ModuleDouble, flow: asyncio.Task[str]) -> str:
    """The pair request's code, once the module made it and opened its page."""
    waiter = asyncio.ensure_future(module.pair_requested.wait())
    await asyncio.wait([waiter, flow], timeout=5, return_when=asyncio.FIRST_COMPLETED)
    assert module.pair_requested.is_set(), flow.result() if flow.done() else "no request"
    return str(module.pair_request["code"])


async def _pair_button(relay: Any, module: ModuleDouble, data: Path) -> str:
    """Press Pair, approve with `vttrelay pair approve CODE`, return the module's message."""
    flow = asyncio.ensure_future(module.browser_pair())
    code = await _requested(module, flow)
    await asyncio.sleep(3 * module.poll_interval)  # the module polls while it waits
    assert await _approval("pair", "approve", code, "--data-dir", str(data)) == 0
    return await asyncio.wait_for(flow, 10)


@pytest.fixture
async def pairing_relay(relay_factory: Any, tmp_path: Path) -> Any:
    """A relay on a data dir the CLI shares, with the per-IP request limit lifted (these tests
    make more pair requests than a quarter hour's 20)."""
    return await relay_factory(data_dir=tmp_path / "shared", key_request_rate_limit=0)


@pytest.fixture
async def fast_module(pairing_relay: Any) -> Any:
    double = ModuleDouble(pairing_relay.url)
    double.poll_interval = 0.05
    yield double
    await double.close()


async def test_pair_button_approved_then_the_module_connects(
    pairing_relay: Any, fast_module: ModuleDouble, tmp_path: Path
) -> None:
    relay, module = pairing_relay, fast_module
    message = await _pair_button(relay, module, tmp_path / "shared")
    assert message == f"Paired! Client ID: {module.client_id}"
    created = module.pair_request
    code = created["code"]
    assert re.fullmatch(f"[{PAIRING_ALPHABET}]{{8}}", code)
    assert list(created) == ["code", "expiresAt", "expiresIn", "pairUrl", "upgradeOnly"]
    assert created["expiresIn"] == 600 and created["upgradeOnly"] is False
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created["expiresAt"])
    assert created["pairUrl"] == f"{relay.url}/pair/{code}"
    assert "My World" in module.pair_page and f"vttrelay pair approve {code}" in module.pair_page
    pending = [p for p in module.polls if p == (200, {"status": "pending"})]
    assert pending and module.polls[: len(pending)] == pending
    status, approved = module.polls[-1]
    assert status == 200 and list(approved) == ["pairingCode", "status"]
    assert approved["status"] == "approved"
    assert re.fullmatch(f"[{PAIRING_ALPHABET}]{{6}}", approved["pairingCode"])
    # The pairing code is handed out once; the code itself is then used up by /auth/pair.
    got = await relay.call("GET", f"/auth/pair-request/{code}/status")
    assert (got.status, got.json()) == (
        200,
        {"message": "Pairing code has already been retrieved", "status": "exchanged"},
    )
    again = await relay.call(
        "POST", "/auth/pair", json={"code": approved["pairingCode"], "worldId": "my-world"}
    )
    assert (again.status, again.json()) == (410, {"error": "Pairing code has already been used"})
    assert "already been exchanged" in (await relay.call("GET", f"/pair/{code}")).body.decode()

    module.start()
    await asyncio.wait_for(module.connected.wait(), 5)
    assert relay.store.known_client(module.client_id).metadata["worldTitle"] == "My World"
    got = await relay.call(
        "GET", "/world-info", key=relay.key(), params={"clientId": module.client_id}
    )
    assert got.status == 200 and got.json()["data"]["foundryVersion"] == "14.363"


async def test_pair_button_refused(
    pairing_relay: Any, fast_module: ModuleDouble, tmp_path: Path
) -> None:
    relay, module, data = pairing_relay, fast_module, str(tmp_path / "shared")
    flow = asyncio.ensure_future(module.browser_pair())
    code = await _requested(module, flow)
    assert await _approval("pair", "refuse", code.lower(), "--data-dir", data) == 0
    assert await asyncio.wait_for(flow, 10) == "Pairing request was denied."
    assert module.polls[-1] == (200, {"status": "denied"})
    assert relay.store.list_tokens() == [] and module.connection_token == ""
    # A decided request can't be decided again; nothing changes.
    assert await _approval("pair", "approve", code, "--data-dir", data) == 1
    got = await relay.call("GET", f"/auth/pair-request/{code}/status")
    assert (got.status, got.json()) == (200, {"status": "denied"})
    assert "already been denied" in (await relay.call("GET", f"/pair/{code}")).body.decode()


async def test_pair_button_request_expires(relay_factory: Any, tmp_path: Path) -> None:
    data = tmp_path / "shared"
    relay = await relay_factory(data_dir=data, key_request_rate_limit=0, pair_request_ttl=0.4)
    module = ModuleDouble(relay.url)
    module.poll_interval = 0.05
    try:
        flow = asyncio.ensure_future(module.browser_pair())
        code = await _requested(module, flow)
        assert module.pair_request["expiresIn"] == 0  # as configured (600 by default)
        assert await asyncio.wait_for(flow, 5) == "Pair request not found or expired."
        assert module.polls[-1] == (410, {"status": "expired"})
        assert (200, {"status": "pending"}) in module.polls
        assert await _approval("pair", "approve", code, "--data-dir", str(data)) == 1
        assert relay.store.list_tokens() == []
        got = await relay.call("GET", "/auth/pair-request/NOSUCHCD/status")
        assert (got.status, got.json()) == (404, {"error": "Pair request not found"})
    finally:
        await module.close()


async def test_upgrade_button(
    pairing_relay: Any, fast_module: ModuleDouble, tmp_path: Path
) -> None:
    relay, module, data = pairing_relay, fast_module, tmp_path / "shared"
    assert (await _pair_button(relay, module, data)).startswith("Paired!")
    module.start()
    await asyncio.wait_for(module.connected.wait(), 5)
    token = module.connection_token

    module.pair_requested.clear()
    flow = asyncio.ensure_future(module.browser_pair(upgrade=True))
    code = await _requested(module, flow)
    assert module.pair_request["upgradeOnly"] is True
    assert "Upgrade World Permissions" in module.pair_page
    assert await _approval("pair", "approve", code, "--data-dir", str(data)) == 0
    assert await asyncio.wait_for(flow, 10) == "Cross-world permissions updated successfully!"
    assert module.polls[-1] == (200, {"status": "approved", "upgraded": True})
    assert module.connection_token == token and module.state == "connected"  # no new token
    assert len(relay.store.list_tokens()) == 1

    # An upgrade for a world this relay never paired is refused at approval.
    module.pair_requested.clear()
    module.client_id = "fvtt_0000000000000000"
    flow = asyncio.ensure_future(module.browser_pair(upgrade=True))
    code = await _requested(module, flow)
    assert await _approval("pair", "approve", code, "--data-dir", str(data)) == 1
    assert await _approval("pair", "refuse", code, "--data-dir", str(data)) == 0
    assert await asyncio.wait_for(flow, 10) == "Pairing request was denied."


async def test_pair_button_polls_as_long_as_the_request_waits(relay: Any) -> None:
    """With the default limits, a module polling its own request is never refused: the relay
    charges status polls only for unknown codes (the reference charges every poll to its 20 per
    15 minutes, and the module gave up about a minute after asking). 400 polls are 20 minutes
    of the module's 3 s."""
    module = ModuleDouble(relay.url)
    module.poll_interval = 0.0
    try:
        flow = asyncio.ensure_future(module.browser_pair())
        code = await _requested(module, flow)
        while len(module.polls) < 400:
            await asyncio.sleep(0.02)
            assert not flow.done(), flow.result()
        pair_requests.approve_pair_request(relay.store, code, "default")
        assert await asyncio.wait_for(flow, 10) == f"Paired! Client ID: {module.client_id}"
        assert all(poll == (200, {"status": "pending"}) for poll in module.polls[:400])
    finally:
        await module.close()
