"""Keys across restarts, as an operator lives them with real `vttrelay serve` processes: the
first start of a data dir prints the demo key (gm scopes) and a sign-in link, later starts
print neither and revoke nothing; a second `serve` that cannot have the embedded world or bind
the port changes nothing for the running one; `vttrelay dashboard-link` signs in; and no
secret that went through the relay (the demo key, sign-in tokens, a pair request's code, a
pairing code, a world's connection token, an API key) is in the whole log of the runs."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import aiohttp
import httpx
from bench.procs import free_port
from tests.support.dashboard import Visitor, csrf_of, sign_in_with_link, signin_csrf_of
from tests.support.relay import WorldDouble, run_vttrelay, stop_process

from vttrelay.relay.store import RelayStore


async def _serve(
    data: Path, port: int, log: Path, lines: int
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """`vttrelay serve` with its stderr (the whole log) appended to `log`; its first `lines`
    lines of stdout."""
    with log.open("ab") as stderr:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "vttrelay", "serve", "--port", str(port),
            "--data-dir", str(data),
            stdout=asyncio.subprocess.PIPE, stderr=stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    assert proc.stdout is not None
    said = [(await asyncio.wait_for(proc.stdout.readline(), 30)).decode() for _ in range(lines)]
    assert all(said), said
    return proc, [line.rstrip("\n") for line in said]


async def _dashboard_approves_a_pair_request(base: str, link: str) -> str:
    """Sign in with the printed link, then approve a world's pair request on the dashboard (the
    module's Pair button); returns the request's code."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        visitor = Visitor(base, http)
        status, form, _ = await visitor.get(link.removeprefix(base))
        assert status == 200
        fields = {"token": link.split("token=", 1)[1], "signin_csrf": signin_csrf_of(form)}
        assert (await visitor.post("/dashboard/signin", fields, csrf=False))[0] == 303
        visitor.csrf = csrf_of((await visitor.get("/dashboard/worlds"))[1])
        async with httpx.AsyncClient(base_url=base) as api:
            asked = await api.post("/auth/pair-request", json={"worldId": "w2", "worldTitle": "W2"})
        code = str(asked.json()["code"])
        status, _, _ = await visitor.post(f"/dashboard/pair/{code}/approve", {"account": "default"})
        assert status == 303
        return code


async def _pair_a_world(base: str, data: Path) -> list[str]:
    """The module's Pair button: a pair request, approved with the CLI, its pairing code
    collected and exchanged for a connection token; the world connects with it. Returns the
    secrets that went by."""
    async with httpx.AsyncClient(base_url=base) as http:
        asked = await http.post("/auth/pair-request", json={"worldId": "w1", "worldTitle": "W"})
        assert asked.status_code == 201, asked.text
        code = asked.json()["code"]
        done = await run_vttrelay("pair", "approve", code, "--data-dir", str(data))
        assert done[0] == 0, done
        status = (await http.get(f"/auth/pair-request/{code}/status")).json()
        pairing_code = status["pairingCode"]
        paired = await http.post("/auth/pair", json={"code": pairing_code, "worldId": "w1"})
        assert paired.status_code == 200, paired.text
        token, client_id = paired.json()["token"], paired.json()["clientId"]
    world = WorldDouble(base.replace("http", "ws") + "/relay", client_id, token)
    await world.connect()
    await world.close()
    return [code, pairing_code, token]


async def test_restarts_keep_keys_and_print_no_secret(tmp_path: Path) -> None:
    data, log, port = tmp_path / "data", tmp_path / "serve.log", free_port()
    base = f"http://127.0.0.1:{port}"
    secrets: list[str] = []
    proc, first = await _serve(data, port, log, 5)
    try:
        assert first[1].startswith("API key: ")
        key = first[1].removeprefix("API key: ")
        assert first[2] == f'Try: curl -H "x-api-key: {key}" {base}/world-info'
        link = first[3].removeprefix("Dashboard: ")
        assert link.startswith(f"{base}/dashboard/signin?token=")
        assert "kept in" in first[4] and str(data / "demo-key") in first[4]
        secrets += [key, link.split("token=")[1]]
        assert (data / "demo-key").read_text() == key + "\n"
        assert (data / "demo-key").stat().st_mode & 0o777 == 0o600
        secrets.append(await _dashboard_approves_a_pair_request(base, link))

        # a second serve on the same data dir and port: refused (the embedded world is taken
        # before the port is tried; without it, the port), and it changed nothing
        code, out, err = await run_vttrelay("serve", "--port", str(port), "--data-dir", str(data))
        assert (code, out) == (1, "")
        assert err == (
            f"vttrelay: the embedded world of {data} is already served by another "
            f"vttrelay serve (pid {proc.pid})\n"
        )
        code, out, err = await run_vttrelay(
            "serve", "--no-world", "--port", str(port), "--data-dir", str(data)
        )
        assert (code, out) == (1, "")
        assert err == f"vttrelay: cannot listen on 127.0.0.1:{port}: Address already in use\n"
        store = RelayStore(data / "relay.db")
        try:
            assert all(k.enabled for k in store.list_keys())
            assert all(t.revoked_at is None for t in store.list_tokens())
        finally:
            store.close()
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
            assert (await api.get("/world-info")).status_code == 200
        secrets += await _pair_a_world(base, data)
        made_key = await run_vttrelay("keys", "create", "--preset", "gm", "--data-dir", str(data))
        assert made_key[0] == 0, made_key
        secrets.append(made_key[1].strip())
        async with httpx.AsyncClient(base_url=base) as http:
            got = await http.get("/clients", headers={"x-api-key": secrets[-1]})
            assert got.status_code == 200
    finally:
        await stop_process(proc)

    proc, later = await _serve(data, port, log, 4)
    try:
        assert (
            later[1] == f"API key: the demo key is in {data / 'demo-key'} (made on the first start)"
        )
        assert later[2] == f'Try: curl -H "x-api-key: $(cat {data / "demo-key"})" {base}/world-info'
        assert later[3] == f"Dashboard: vttrelay dashboard-link --url {base} --data-dir {data}"
        assert not any(secret in line for secret in secrets for line in later)
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}) as api:
            assert (await api.get("/world-info", timeout=20)).status_code == 200  # not revoked
        code, out, err = await run_vttrelay(
            "dashboard-link", "--url", base, "--data-dir", str(data)
        )
        assert code == 0 and out.startswith(f"{base}/dashboard/signin?token="), err
        secrets.append(out.strip().split("token=")[1])
        assert await sign_in_with_link(base, out.strip()) == 303
    finally:
        await stop_process(proc)

    whole = log.read_text()
    assert "world connected: vttrelay-demo" in whole and '"GET /world-info" 200' in whole
    assert (
        "pair request from world 'W'" in whole and "GET /auth/pair-request/{code}/status" in whole
    )
    for secret in secrets:
        assert secret not in whole, secret


async def test_workers_refuse_a_port_a_relay_listens_on(tmp_path: Path) -> None:
    """`serve --workers 2` binds with SO_REUSEPORT, which the kernel would let share a port
    with another `--workers` relay of this user: it looks first, and a port something already
    serves is refused in one line, before the store is touched."""
    data, port = tmp_path / "data", free_port()
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        taken.bind(("127.0.0.1", port))
        taken.listen()
        code, out, err = await run_vttrelay(
            "serve", "--workers", "2", "--redis", "redis://127.0.0.1:1/0", "--no-world",
            "--port", str(port), "--data-dir", str(data),
        )  # fmt: skip
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"vttrelay serve: cannot listen on 127.0.0.1:{port}: another server listens there"
    )
    assert not (data / "relay.db").exists() and not (data / "demo-key").exists()
