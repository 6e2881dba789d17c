"""The `vttrelay` command as subprocesses against a tmp data dir: keys, pair, serve."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from bench.procs import free_port

from vttrelay.protocol import Close
from vttrelay.relay.store import RelayStore


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vttrelay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    made = run(
        "keys", "create", "--scope", "dnd5e", "--scope", "chat:read", "--client", "w1",
        "--user", "u1", "--expires", "30d", "--rate", "12", "--name", "bot",
        "--account", "acct", "--data-dir", data,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) == 64  # the key alone on its own line
    secret = lines[0]
    store = RelayStore(Path(data) / "relay.db")
    record = store.key_by_secret(secret)
    store.close()
    assert record is not None
    assert record.scopes == ("dnd5e", "chat:read") and record.client_ids == ("w1",)
    assert record.user_id == "u1" and record.rate_per_minute == 12
    assert record.account == "acct" and record.name == "bot"
    assert record.expires_at is not None and record.expires_at > time.time() + 29 * 86400

    default = run("keys", "create", "--data-dir", data)
    store = RelayStore(Path(data) / "relay.db")
    from vttrelay.relay.routes import DEFAULT_SCOPES

    assert store.key_by_secret(default.stdout.strip()).scopes == DEFAULT_SCOPES  # type: ignore[union-attr]
    store.close()

    listed = run("keys", "list", "--data-dir", data)
    assert listed.returncode == 0
    assert record.id in listed.stdout and secret not in listed.stdout
    assert "active" in listed.stdout

    revoked = run("keys", "revoke", record.id, "--data-dir", data)
    assert revoked.returncode == 0 and revoked.stdout == ""
    assert record.id not in run("keys", "list", "--data-dir", data).stdout  # revoked: hidden
    assert "revoked" in run("keys", "list", "--all", "--data-dir", data).stdout
    purged = run("keys", "purge", "--data-dir", data)
    assert purged.returncode == 0 and "Removed 1 revoked API key(s)." in purged.stderr
    assert record.id not in run("keys", "list", "--all", "--data-dir", data).stdout
    assert run("keys", "list", "--data-dir", data).stdout.count("active") == 1  # the other one
    missing = run("keys", "revoke", "key_nope", "--data-dir", data)
    assert missing.returncode == 1 and "key_nope" in missing.stderr

    bad = run("keys", "create", "--scope", "root", "--data-dir", data)
    assert bad.returncode == 2 and bad.stdout == "" and "unknown scope" in bad.stderr

    none = run("tokens", "list", "--data-dir", data)
    assert (none.returncode, none.stdout) == (0, "") and "No connection tokens." in none.stderr


def test_pair_prints_a_code_and_env_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "env-data"
    made = run("pair", "--account", "acct", env={"VTTRELAY_DATA_DIR": str(data)})
    assert made.returncode == 0, made.stderr
    code = made.stdout.strip()
    assert len(code) == 6 and made.stdout == code + "\n"
    store = RelayStore(data / "relay.db")
    pairing = store.redeem_pairing_code(code)
    store.close()
    assert getattr(pairing, "account", None) == "acct"


def _serve(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vttrelay", "serve", "--port", str(port),
         "--data-dir", str(tmp_path / "data"), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    return proc, port


def _read_key(proc: subprocess.Popen[str]) -> tuple[str, str]:
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Try: curl"):
            break
    text = "".join(lines)
    key = next(ln.split()[-1] for ln in lines if ln.startswith("API key:"))
    return key, text


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return proc.stderr.read()


def test_serve_no_world(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path, "--no-world")
    try:
        key, text = _read_key(proc)
        base = f"http://127.0.0.1:{port}"
        assert f'curl -H "x-api-key: {key}" {base}/clients' in text
        got = httpx.get(f"{base}/clients", headers={"x-api-key": key})
        assert got.status_code == 200 and got.json() == {"total": 0, "clients": []}
        assert httpx.get(f"{base}/world-info", headers={"x-api-key": key}).status_code == 404
    finally:
        logs = _stop(proc)
    assert proc.returncode == 0
    assert re.search(
        r'vttrelay\.access: 127\.0\.0\.1 "GET /clients" 200 \d+B \d+\.\dms key="serve', logs
    ), logs
    assert re.search(r'"GET /world-info" 404 \d+B \d+\.\dms ', logs)

    # A second start keeps the key the first one printed and prints no secret: the key is in
    # the data dir (owner-only), the sign-in link comes from `vttrelay dashboard-link`.
    proc, port = _serve(tmp_path, "--no-world")
    try:
        said, text = _read_key(proc)
        base = f"http://127.0.0.1:{port}"
        key_file = tmp_path / "data" / "demo-key"
        assert said == "start)" and key not in text
        assert f'Try: curl -H "x-api-key: $(cat {key_file})" {base}/clients' in text
        assert key_file.read_text() == key + "\n"
        assert httpx.get(f"{base}/clients", headers={"x-api-key": key}).status_code == 200
    finally:
        _stop(proc)


def test_serve_with_world_or_a_clear_message(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path)
    try:
        key, text = _read_key(proc)
        base = f"http://127.0.0.1:{port}"
        embedded = "/world-info" in text
        if embedded:
            got = httpx.get(f"{base}/world-info", headers={"x-api-key": key}, timeout=20)
            assert got.status_code == 200, got.text
    finally:
        logs = _stop(proc)
    if embedded:
        assert "world connected" in logs
    else:
        assert "embedded world is not available" in logs


async def _cli(*args: str) -> tuple[int, str, str]:
    """Run `vttrelay ARGS` as a subprocess without blocking the loop (a relay runs in it)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_tokens_list_and_revoke_disconnect_a_live_world(
    relay_factory: Any, tmp_path: Path, world_double: Any
) -> None:
    data = tmp_path / "shared"
    relay = await relay_factory(data_dir=data, token_check_interval=0.1)
    doomed = await relay.world("w-doomed")
    kept = await relay.world("w-kept", account="other")
    code, out, err = await _cli("tokens", "list", "--data-dir", str(data))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID", "ACCOUNT", "CLIENT", "STATE", "CREATED", "REVOKED", "IP", "ALLOW", "NAME",
    ]  # fmt: skip
    rows = {ln.split()[2]: ln.split() for ln in lines[1:]}
    assert set(rows) == {"w-doomed", "w-kept"}
    assert rows["w-doomed"][1] == "default" and rows["w-doomed"][3] == "active"
    assert doomed.token not in out and kept.token not in out
    code, out, _ = await _cli("tokens", "list", "--account", "other", "--data-dir", str(data))
    assert [ln.split()[2] for ln in out.splitlines()[1:]] == ["w-kept"]

    token_id = rows["w-doomed"][0]
    code, out, err = await _cli("tokens", "revoke", token_id, "--data-dir", str(data))
    assert (code, out) == (0, "") and token_id in err
    assert await doomed.wait_closed() == Close.AUTH_PROTOCOL
    assert doomed.close_reason == "Connection token revoked"
    assert relay.state.registry.get("w-doomed") is None
    assert relay.state.registry.get("w-kept") is not None and not kept.closed.is_set()
    code, out, _ = await _cli("tokens", "list", "--data-dir", str(data))
    assert token_id not in out  # revoked: hidden unless asked
    code, out, _ = await _cli("tokens", "list", "--all", "--data-dir", str(data))
    assert "revoked" in next(ln for ln in out.splitlines() if token_id in ln)

    code, _, err = await _cli("tokens", "revoke", token_id, "--data-dir", str(data))
    assert code == 0 and "already revoked" in err
    code, _, err = await _cli("tokens", "revoke", "tok_nope", "--data-dir", str(data))
    assert code == 1 and "tok_nope" in err
    again = world_double(relay.ws_url, "w-doomed", doomed.token)
    with pytest.raises(world_double.Refused) as info:  # the token no longer authenticates
        await again.connect()
    assert info.value.code == Close.AUTH_FAILED
    code, _, err = await _cli("tokens", "purge", "--account", "other", "--data-dir", str(data))
    assert code == 0 and "Removed 0 revoked connection token(s)." in err
    code, _, err = await _cli("tokens", "purge", "--data-dir", str(data))
    assert code == 0 and "Removed 1 revoked connection token(s)." in err
    code, out, _ = await _cli("tokens", "list", "--all", "--data-dir", str(data))
    assert token_id not in out and "w-kept" in out


async def test_cli_keys_reach_a_running_relay(relay_factory: Any, tmp_path: Path) -> None:
    """Keys made by the CLI work at once on a relay sharing the data dir; `--expires` in the
    past gives 401 expired, and `keys revoke` is seen within the key cache's lifetime."""
    data = tmp_path / "shared"
    relay = await relay_factory(data_dir=data, key_cache_ttl=0.2)
    await relay.world()
    code, out, err = await _cli("keys", "create", "--scope", "world:info", "--data-dir", str(data))
    assert code == 0, err
    key = out.strip()
    assert (await relay.call("GET", "/world-info", key=key)).status == 200
    code, out, _ = await _cli("keys", "create", "--expires", "2001-01-01", "--data-dir", str(data))
    got = await relay.call("GET", "/world-info", key=out.strip())
    assert (got.status, got.json()) == (401, {"error": "API key has expired"})
    key_id = next(k.id for k in relay.store.list_keys() if k.scopes == ("world:info",))
    code, _, err = await _cli("keys", "revoke", key_id, "--data-dir", str(data))
    assert code == 0, err
    await asyncio.sleep(0.3)
    got = await relay.call("GET", "/world-info", key=key)
    assert (got.status, got.json()) == (401, {"error": "API key is disabled"})


async def test_pair_requests_listed_approved_and_refused_beside_a_running_relay(
    relay_factory: Any, tmp_path: Path
) -> None:
    data = str(tmp_path / "shared")
    relay = await relay_factory(data_dir=tmp_path / "shared", key_request_rate_limit=0)
    world = {"worldId": "friday", "worldTitle": "Friday Game", "systemId": "dnd5e",
             "systemVersion": "5.1.4", "foundryVersion": "14.363"}  # fmt: skip
    codes = []
    for title in ("Friday Game", "Other"):
        got = await relay.call("POST", "/auth/pair-request", json={**world, "worldTitle": title})
        codes.append(got.json()["code"])
    code, out, err = await _cli("pair", "requests", "--data-dir", data)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "CODE", "STATUS", "KIND", "CLIENT", "SYSTEM", "FOUNDRY", "FROM", "EXPIRES", "WORLD",
    ]  # fmt: skip
    first = lines[1].split()
    assert first[:4] == [codes[0], "pending", "pair", "-"] and first[4:7] == [
        "dnd5e",
        "5.1.4",
        "14.363",
    ]
    assert lines[1].endswith("Friday Game (friday)") and codes[1] in lines[2]

    code, out, err = await _cli(
        "pair", "approve", codes[0], "--account", "acct", "--data-dir", data
    )
    assert (code, out) == (0, "") and "Friday Game" in err
    got = await relay.call("GET", f"/auth/pair-request/{codes[0]}/status")
    pairing = got.json()["pairingCode"]  # the running relay sees the CLI's decision at once
    got = await relay.call("POST", "/auth/pair", json={"code": pairing, "worldId": "friday"})
    assert got.status == 200
    assert relay.store.known_client(got.json()["clientId"]).account == "acct"
    code, _, err = await _cli("pair", "refuse", codes[1], "--data-dir", data)
    assert code == 0, err
    code, _, err = await _cli("pair", "refuse", codes[1], "--data-dir", data)
    assert code == 1 and "Pair request is not pending" in err
    code, _, err = await _cli("pair", "approve", "NOSUCHCD", "--data-dir", data)
    assert code == 1 and "Pair request not found" in err

    code, out, err = await _cli("pair", "requests", "--data-dir", data)
    assert (code, out) == (0, "") and "No pending pair requests." in err
    code, out, _ = await _cli("pair", "requests", "--all", "--data-dir", data)
    states = {ln.split()[0]: ln.split()[1] for ln in out.splitlines()[1:]}
    assert states == {codes[0]: "exchanged", codes[1]: "denied"}


async def test_key_request_approved_with_the_cli_then_exchanged_and_used(
    relay_factory: Any, tmp_path: Path
) -> None:
    data = str(tmp_path / "shared")
    relay = await relay_factory(data_dir=tmp_path / "shared", key_request_rate_limit=0)
    await relay.world()
    ask = {"appName": "Stream Deck", "appUrl": "https://deck.example",
           "callbackUrl": "https://deck.example/cb?state=1",
           "scopes": ["world:info", "chat:read"]}  # fmt: skip
    request_code = (await relay.call("POST", "/auth/key-request", json=ask)).json()["code"]
    code, out, err = await _cli("keys", "requests", "--data-dir", data)
    assert code == 0, err
    row = out.splitlines()[1].split()
    assert row[:4] == [request_code, "pending", "web", "*"]
    assert (
        row[-3:] == ["Stream", "Deck", "<https://deck.example>"] and "world:info,chat:read" in row
    )

    code, out, err = await _cli(
        "keys", "approve", request_code, "--scope", "root", "--data-dir", data
    )
    assert code == 2 and "unknown scope" in err
    code, out, err = await _cli(
        "keys", "approve", request_code, "--scope", "execute-js", "--data-dir", data
    )
    assert code == 1 and "Cannot grant scope not in original request: execute-js" in err
    code, out, err = await _cli(
        "keys", "approve", request_code, "--scope", "world:info", "--rate", "5", "--data-dir", data
    )
    assert code == 0, err
    exchange = out.strip()
    assert re.fullmatch("[0-9a-f]{32}", exchange) and out == exchange + "\n"
    assert f"https://deck.example/cb?state=1&code={exchange}" in err
    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": exchange})
    assert got.status == 200 and got.json()["scopes"] == ["world:info"]
    key = got.json()["apiKey"]
    assert (await relay.call("GET", "/world-info", key=key)).status == 200
    got = await relay.call("POST", "/auth/key-request/exchange", json={"code": exchange})
    assert got.status == 410
    code, out, _ = await _cli("keys", "list", "--data-dir", data)
    line = next(ln for ln in out.splitlines() if "Stream" in ln)
    assert "active" in line and " 5 " in line and key not in out

    other = (await relay.call("POST", "/auth/key-request", json=ask)).json()["code"]
    code, _, err = await _cli("keys", "refuse", other, "--data-dir", data)
    assert code == 0 and "Stream Deck" in err
    got = await relay.call("GET", f"/auth/key-request/{other}/status")
    assert got.json() == {"status": "denied"}
