"""Pair-request and API-key-request endpoints over a real relay (endpoints-beyond-seed §12):
bodies, statuses and errors, the key-request device and web flows end to end (request, status,
approval through `relay.approvals` as the CLI does, exchange, the key used), the pages, and the
per-IP limits: on creating requests, and on looking up codes that don't exist."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest

from vttrelay.relay.accounts import key_requests, pair_requests
from vttrelay.relay.core import RelayError
from vttrelay.relay.store import PAIRING_ALPHABET

TOO_MANY = (429, {"error": "Too many key request attempts from this IP, please try again later"})
EXCHANGED = (200, {"message": "API key has already been retrieved", "status": "exchanged"})

APP = {
    "appName": "Dice Bot",
    "appDescription": "Rolls for the table",
    "appUrl": "https://bot.example",
    "scopes": ["world:info", "chat:read", "entity:read"],
    "clientIds": ["world-1"],
    "suggestedMonthlyLimit": 1000,
    "suggestedExpiry": "30d",
}


@pytest.fixture
async def relay(relay_factory: Any) -> Any:
    """A relay without the per-IP request limit (tested on its own below)."""
    return await relay_factory(key_request_rate_limit=0)


async def _request_key(relay: Any, **fields: Any) -> dict[str, Any]:
    got = await relay.call("POST", "/auth/key-request", json={**APP, **fields})
    assert got.status == 201, got.body
    assert got.headers["Access-Control-Allow-Origin"] == "*"
    return dict(got.json())


async def _status(relay: Any, code: str) -> tuple[int, Any]:
    got = await relay.call("GET", f"/auth/key-request/{code}/status")
    return got.status, got.json()


async def test_web_flow_request_approve_exchange_use(relay: Any) -> None:
    await relay.world("world-1")
    made = await _request_key(relay, callbackUrl="https://bot.example/cb")
    code = made["code"]
    assert list(made) == ["approvalUrl", "code", "expiresAt", "expiresIn"]
    assert re.fullmatch(f"[{PAIRING_ALPHABET}]{{6}}", code) and made["expiresIn"] == 600
    assert made["approvalUrl"] == f"{relay.url}/approve/{code}"
    page = (await relay.call("GET", f"/approve/{code}")).body.decode()
    assert "Dice Bot" in page and f"vttrelay keys approve {code}" in page
    assert await _status(relay, code) == (200, {"status": "pending"})

    with pytest.raises(RelayError) as refused:  # only scopes that were asked for
        key_requests.approve_key_request(relay.store, code, "default", scopes=("execute-js",))
    assert refused.value.status == 400
    assert refused.value.message == "Cannot grant scope not in original request: execute-js"
    done = key_requests.approve_key_request(
        relay.store, code.lower(), "default", scopes=("world:info", "chat:read")
    )
    assert done.exchange_code is not None and re.fullmatch("[0-9a-f]{32}", done.exchange_code)
    key = relay.store.get_key(done.key_id)
    assert key.name == "Dice Bot" and key.scopes == ("world:info", "chat:read")
    assert key.client_ids == ("world-1",) and key.enabled
    # Web flow: the status poll never carries the key; the exchange does, once.
    assert await _status(relay, code) == (200, {"status": "approved"})
    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": done.exchange_code})
    assert got.status == 200
    body = got.json()
    assert list(body) == ["apiKey", "clientIds", "scopes"]
    assert body["clientIds"] == ["world-1"] and body["scopes"] == ["world:info", "chat:read"]
    secret = body["apiKey"]
    assert re.fullmatch("[0-9a-f]{64}", secret)
    assert (await relay.call("GET", "/world-info", key=secret)).status == 200
    got = await relay.call("GET", "/players", key=secret)
    assert (got.status, got.json()) == (403, {"error": "API key lacks required scope: entity:read"})

    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": done.exchange_code})
    assert (got.status, got.json()) == (
        410,
        {"error": "Exchange code has already been used or request was denied"},
    )
    assert await _status(relay, code) == (
        200,
        {"message": "API key has already been retrieved", "status": "exchanged"},
    )
    assert (await relay.call("GET", "/world-info", key=secret)).status == 200  # still the key


async def test_device_flow_key_on_first_status_read(relay: Any) -> None:
    await relay.world("world-1")
    code = (await _request_key(relay, clientIds=None))["code"]
    done = key_requests.approve_key_request(relay.store, code, "default")
    assert done.exchange_code is None and done.client_ids == ()
    assert relay.store.get_key(done.key_id).enabled  # listed and revocable before retrieval
    status, body = await _status(relay, code)
    assert status == 200 and list(body) == ["apiKey", "clientIds", "scopes", "status"]
    assert body["status"] == "approved" and body["clientIds"] is None
    assert body["scopes"] == APP["scopes"]
    assert relay.store.key_by_secret(body["apiKey"]).id == done.key_id
    assert (await relay.call("GET", "/world-info", key=body["apiKey"])).status == 200
    assert (await _status(relay, code))[1]["status"] == "exchanged"  # shown once


async def test_key_request_refused_and_expired(relay: Any) -> None:
    code = (await _request_key(relay))["code"]
    key_requests.refuse_key_request(relay.store, code)
    assert await _status(relay, code) == (200, {"status": "denied"})
    with pytest.raises(RelayError) as refused:
        key_requests.approve_key_request(relay.store, code, "default")
    assert (refused.value.status, refused.value.message) == (400, "Key request is not pending")
    assert relay.store.list_keys() == []

    made = key_requests.create_key_request(
        relay.store, key_requests.KeyAsk("late", ("search",)), ttl=-1
    )
    assert await _status(relay, made.code) == (410, {"status": "expired"})
    with pytest.raises(RelayError) as refused:
        key_requests.approve_key_request(relay.store, made.code, "default")
    assert (refused.value.status, refused.value.message) == (410, "Key request has expired")
    assert await _status(relay, "NOPE42") == (404, {"error": "Key request not found"})
    assert relay.store.list_keys() == []


async def test_exchange_code_expires(relay: Any) -> None:
    code = (await _request_key(relay, callbackUrl="https://bot.example/cb"))["code"]
    done = key_requests.approve_key_request(relay.store, code, "default", now=0.0)  # long ago
    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": done.exchange_code})
    assert (got.status, got.json()) == (410, {"error": "Exchange code has expired"})


async def test_a_key_revoked_before_retrieval_is_never_handed_out(relay: Any) -> None:
    code = (await _request_key(relay))["code"]
    done = key_requests.approve_key_request(relay.store, code, "default")
    relay.store.revoke_key(done.key_id)
    assert await _status(relay, code) == (200, {"status": "approved"})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{nope", "Invalid request body"),
        (b"[]", "Invalid request body"),
        (b'{"appName": 5, "scopes": ["search"]}', "Invalid request body"),
        (b'{"appName": "a", "scopes": "search"}', "Invalid request body"),
        (b'{"appName": "a", "scopes": ["search"], "suggestedMonthlyLimit": 1.5}',
         "Invalid request body"),
        (b'{"appName": "a"}', "appName and scopes are required"),
        (b'{"appName": "", "scopes": ["search"]}', "appName and scopes are required"),
        (b'{"appName": "a", "scopes": []}', "appName and scopes are required"),
        (b'{"appName": "a", "scopes": ["search", "root"]}', "Invalid scope: root"),
        (b'{"appName": "a", "scopes": ["search"], "appUrl": "ftp://x.example"}',
         "Invalid appUrl: URL must use http or https scheme"),
        (b'{"appName": "a", "scopes": ["search"], "callbackUrl": "http://127.0.0.1:9/cb"}',
         "Invalid callbackUrl: URL must not target a private or loopback address"),
        (b'{"appName": "a", "scopes": ["search"], "callbackUrl": "http://[::1"}',
         "Invalid callbackUrl: invalid URL"),
        (b'{"appName": "a", "scopes": ["search"], "appUrl": "https://"}',
         "Invalid appUrl: URL must have a non-empty host"),
    ],
)  # fmt: skip
async def test_key_request_errors(relay: Any, body: bytes, message: str) -> None:
    got = await relay.call("POST", "/auth/key-request", data=body)
    assert (got.status, got.json()) == (400, {"error": message})
    assert key_requests.key_requests(relay.store, pending_only=False) == []


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"", 400, "Invalid request body"),
        (b"{}", 400, "Code is required"),
        (b'{"code": 7}', 400, "Code is required"),
        (b'{"code": "00000000000000000000000000000000"}', 404, "Invalid exchange code"),
    ],
)
async def test_exchange_errors(relay: Any, body: bytes, status: int, message: str) -> None:
    got = await relay.call("POST", "/auth/key-request/exchange", data=body)
    assert (got.status, got.json()) == (status, {"error": message})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"nope", "Invalid request body"),
        (b"{}", "worldId is required"),
        (b'{"worldId": ""}', "worldId is required"),
        (b'{"worldId": 3}', "Invalid request body"),
        (b'{"worldId": "w", "upgradeOnly": "yes"}', "Invalid request body"),
        (b'{"worldId": "w", "requestedRemoteScopes": ["entity:read", "all"]}',
         "Invalid scope: all"),
        (b'{"worldId": "w", "worldTitle": "' + b"x" * 600 + b'"}',
         "worldTitle is too long (at most 512 characters)"),
    ],
)  # fmt: skip
async def test_pair_request_errors(relay: Any, body: bytes, message: str) -> None:
    got = await relay.call("POST", "/auth/pair-request", data=body)
    assert (got.status, got.json()) == (400, {"error": message})
    assert pair_requests.pair_requests(relay.store, pending_only=False) == []


async def test_pair_request_fields_stored_and_shown(
    relay_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    relay = await relay_factory(trusted_proxies=("127.0.0.1",))  # X-Forwarded-Proto believed
    caplog.set_level(logging.INFO, "vttrelay.relay")
    got = await relay.call(
        "POST",
        "/auth/pair-request",
        json={
            "worldId": "w",
            "worldTitle": "<b>Friday</b>",
            "systemId": "dnd5e",
            "systemVersion": "5.1.4",
            "requestedRemoteScopes": ["entity:read"],
            "requestedTargetClients": ["*", "fvtt_other"],
            "serverFingerprint": "ignored",
        },
        headers={"Host": "relay.example", "X-Forwarded-Proto": "https"},
    )
    assert got.status == 201
    made = got.json()
    assert made["pairUrl"] == f"https://relay.example/pair/{made['code']}"
    stored = pair_requests.get_pair_request(relay.store, made["code"])
    assert stored is not None
    # serve's log says how to decide it, never the code (whoever has it may collect the answer)
    assert "`vttrelay pair requests` and `vttrelay pair approve CODE`" in caplog.text
    assert made["code"] not in caplog.text
    assert stored.ask.remote_scopes == ("entity:read",)
    assert stored.ask.target_clients == ("fvtt_other",)  # "*" is dropped
    assert stored.peer == "127.0.0.1" and stored.state() == "pending"
    page = await relay.call("GET", f"/pair/{made['code']}")
    assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
    text = page.body.decode()
    assert "&lt;b&gt;Friday&lt;/b&gt;" in text and "<b>Friday" not in text
    assert "dnd5e v5.1.4" in text and "Pair Foundry World" in text
    missing = await relay.call("GET", "/pair/NOSUCHCD")
    assert missing.status == 404 and "not found" in missing.body.decode()
    assert (await relay.call("GET", "/approve/NOSUCH")).status == 404


async def test_request_limit_is_per_ip_and_spares_the_key_status(relay_factory: Any) -> None:
    relay = await relay_factory(key_request_rate_limit=3)
    code = (await _request_key(relay))["code"]
    assert (await relay.call("POST", "/auth/pair-request", json={"worldId": "w"})).status == 201
    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": "x"})
    assert got.status == 404
    got = await relay.call("POST", "/auth/pair-request", json={"worldId": "w"})
    assert (got.status, got.json()) == (
        429,
        {"error": "Too many key request attempts from this IP, please try again later"},
    )
    for _ in range(5):  # the key status is not limited
        assert (await _status(relay, code))[0] == 200


# Guessing codes (beyond the reference: see relay/pairing.py) ------------------------------------


def _guess(length: int = 6) -> str:
    return "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(length))


@asynccontextmanager
async def _from_other_ip(relay: Any) -> AsyncIterator[Any]:
    """`GET path` from 127.0.0.2 (another client of the same relay): (status, JSON body)."""
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=connector) as http:

        async def call(method: str, path: str, json: Any = None) -> tuple[int, Any]:
            async with http.request(method, relay.url + path, json=json) as resp:
                return resp.status, await resp.json()

        yield call


async def test_guessing_codes_gets_429_after_the_budget(relay_factory: Any) -> None:
    relay = await relay_factory(code_miss_limit=3)
    async with _from_other_ip(relay) as app:
        status, made = await app("POST", "/auth/key-request", APP)  # an app, elsewhere
        assert status == 201
        code = made["code"]
        # A guesser at 127.0.0.1: three unknown codes, through any of the four lookups...
        assert await _status(relay, _guess()) == (404, {"error": "Key request not found"})
        got = await relay.call("GET", f"/auth/pair-request/{_guess(8)}/status")
        assert (got.status, got.json()) == (404, {"error": "Pair request not found"})
        assert (await relay.call("GET", f"/approve/{_guess()}")).status == 404
        # ...then every lookup is refused, the app's real code too: a 429 tells nothing.
        for _ in range(20):
            assert await _status(relay, _guess()) == TOO_MANY
        assert await _status(relay, code) == TOO_MANY
        got = await relay.call("GET", f"/auth/pair-request/{_guess(8)}/status")
        assert (got.status, got.json()) == TOO_MANY
        for page in (f"/approve/{code}", f"/pair/{_guess(8)}"):
            got = await relay.call("GET", page)
            assert (got.status, got.json()) == TOO_MANY
        # The app, at another address, is not affected and gets its key.
        assert await app("GET", f"/auth/key-request/{code}/status") == (200, {"status": "pending"})
        key_requests.approve_key_request(relay.store, code, "default")
        status, body = await app("GET", f"/auth/key-request/{code}/status")
        assert status == 200 and body["status"] == "approved"
        assert relay.store.key_by_secret(body["apiKey"]) is not None


async def test_an_app_polling_its_own_code_is_never_refused(relay_factory: Any) -> None:
    """Polls of a code that exists cost nothing: 400 polls are 20 minutes at one every 3 s,
    twice a request's whole life; one mistyped code on the way costs one of the 2 tokens."""
    relay = await relay_factory(code_miss_limit=2)
    code = (await _request_key(relay))["code"]
    typo = code[:-1] + ("A" if code[-1] != "A" else "B")
    assert (await _status(relay, typo))[0] == 404
    for _ in range(400):
        assert await _status(relay, code) == (200, {"status": "pending"})
    done = key_requests.approve_key_request(relay.store, code, "default")
    status, body = await _status(relay, code)
    assert status == 200 and relay.store.key_by_secret(body["apiKey"]).id == done.key_id
    assert await _status(relay, code) == EXCHANGED


async def test_device_flow_key_is_readable_exactly_once(relay: Any) -> None:
    """Twenty readers at once after approval (the app and whoever else knows the code): one
    gets the key, every other is told it was already retrieved, and so is anyone later."""
    await relay.world("world-1")
    code = (await _request_key(relay))["code"]
    done = key_requests.approve_key_request(relay.store, code, "default")
    answers = await asyncio.gather(*(_status(relay, code) for _ in range(20)))
    keys = [body["apiKey"] for status, body in answers if "apiKey" in body]
    assert len(keys) == 1 and relay.store.key_by_secret(keys[0]).id == done.key_id
    assert sorted(answers, key=lambda a: "apiKey" in a[1])[:19] == [EXCHANGED] * 19
    async with _from_other_ip(relay) as other:
        assert await other("GET", f"/auth/key-request/{code}/status") == EXCHANGED
    assert (await relay.call("GET", "/world-info", key=keys[0])).status == 200
