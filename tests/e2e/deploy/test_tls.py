"""`vttrelay serve --tls-cert/--tls-key` as a real process with a certificate the test makes: the
demo world and a module-like client connect over wss://, REST, SSE and /ws/api work over https://,
a renewed certificate is taken on SIGHUP without a restart (the next handshake shows it; with
`--workers 2` SIGHUP to the command reaches every worker), and a
malformed certificate (or a bad --trusted-proxy) is refused at start with one line naming the
setting. Without a certificate, SIGHUP is logged as nothing to reload and the relay goes on."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import aiohttp
import orjson
from bench.procs import free_port
from cryptography import x509
from tests.support.e2e import eventually
from tests.support.proxies import Certificate, make_certificate
from tests.support.relay import WorldDouble, start_serve, stop_process
from tests.support.servers import RedisServer

from vttrelay.relay.store import RelayStore


def served_serial(port: int, context: ssl.SSLContext) -> int:
    """The serial number of the certificate a new TLS handshake with the relay shows."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return int(x509.load_der_x509_certificate(der).serial_number)


async def test_serve_over_tls_and_reload_on_sighup(tmp_path: Path) -> None:
    first = make_certificate(tmp_path / "first")
    port = free_port()
    data = tmp_path / "data"
    proc, lines = await start_serve(
        data, port, "--tls-cert", str(first.cert), "--tls-key", str(first.key)
    )
    try:
        base = f"https://127.0.0.1:{port}"
        assert lines[-1].endswith(f"{base}/world-info")
        key = lines[-1].split("x-api-key: ")[1].split('"')[0]
        context = first.client_context()
        connector = aiohttp.TCPConnector(ssl=context)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=30)
        ) as http:
            headers = {"x-api-key": key}
            async with http.get(base + "/world-info", headers=headers) as resp:
                assert resp.status == 200, await resp.text()  # the demo world, over wss

            # a module-like client pairs over https and connects over wss
            store = RelayStore(data / "relay.db")
            code = store.create_pairing_code()
            store.close()
            async with http.post(base + "/auth/pair", json={"code": code, "worldId": "w"}) as r:
                paired = await r.json()
            assert paired["relayUrl"] == f"wss://127.0.0.1:{port}/relay"
            world = WorldDouble(
                paired["relayUrl"], paired["clientId"], paired["token"], session=http
            )
            await world.connect()
            try:
                params = {"clientId": paired["clientId"], "path": "x"}
                async with http.get(base + "/structure", params=params, headers=headers) as r:
                    assert r.status == 200, await r.text()
                    assert (await r.json())["data"]["echo"]["type"] == "structure"
                sse = {"clientId": paired["clientId"]}
                async with http.get(base + "/chat/subscribe", params=sse, headers=headers) as r:
                    first_event = await asyncio.wait_for(r.content.readuntil(b"\n\n"), 5)
                    assert b"event: connected" in first_event
                ws = await http.ws_connect(f"wss://127.0.0.1:{port}/ws/api")
                auth = {"type": "auth", "token": key, "clientId": paired["clientId"]}
                await ws.send_str(orjson.dumps(auth).decode())
                hello = orjson.loads((await ws.receive(timeout=5)).data)
                assert hello["type"] != "error", hello
                await ws.close()
            finally:
                await world.close()

        # renewal: new files in place, SIGHUP, and the next handshake shows the new certificate
        assert await asyncio.to_thread(served_serial, port, context) == first.serial
        renewed = make_certificate(tmp_path / "renewed")
        first.cert.write_bytes(renewed.cert.read_bytes())
        first.key.write_bytes(renewed.key.read_bytes())
        os.kill(proc.pid, signal.SIGHUP)
        new_context = renewed.client_context()
        serial = 0
        for _ in range(100):
            try:
                serial = await asyncio.to_thread(served_serial, port, new_context)
                break
            except ssl.SSLError:  # not reloaded yet: still the first certificate
                await asyncio.sleep(0.05)
        assert serial == renewed.serial
        assert proc.returncode is None  # the same process
        # a file that no longer loads keeps the certificate in use
        first.cert.write_text("not a certificate")
        os.kill(proc.pid, signal.SIGHUP)
        await asyncio.sleep(0.3)
        assert await asyncio.to_thread(served_serial, port, new_context) == renewed.serial
    finally:
        await stop_process(proc)


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vttrelay", "serve", "--port", str(free_port())]
        + ["--data-dir", str(tmp_path / "data"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_certificate_refused_at_start(tmp_path: Path) -> None:
    good: Certificate = make_certificate(tmp_path / "tls")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    cases = {
        ("--tls-cert", str(garbage), "--tls-key", str(good.key)): "--tls-cert/--tls-key: ",
        ("--tls-cert", str(good.cert), "--tls-key", str(tmp_path / "none")): "--tls-key: ",
        ("--tls-cert", str(good.cert)): "--tls-cert and --tls-key go together",
    }
    for args, start in cases.items():
        done = _serve(tmp_path, *args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("vttrelay serve: " + start), lines
        assert not (tmp_path / "data" / "relay.db").exists()  # refused before anything started


def test_bad_trusted_proxy_refused_at_start(tmp_path: Path) -> None:
    done = _serve(tmp_path, "--trusted-proxy", "127.0.0.1,10.0.0.0/33")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "vttrelay serve: --trusted-proxy: not an address or network: '10.0.0.0/33'"
    ]
    assert not (tmp_path / "data" / "relay.db").exists()  # refused before anything started


async def _serve_logged(log_path: Path, *args: str) -> asyncio.subprocess.Process:
    """`vttrelay serve *ARGS` as a real process, its stdout a pipe, its stderr in `log_path`."""
    with log_path.open("w") as log_file:
        return await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "vttrelay", "serve", *args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log_file,
        )


async def test_sighup_to_the_supervisor_reloads_the_certificate_in_every_worker(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """`serve --workers 2 --tls-cert ...`: SIGHUP to the command's process (what systemd's
    `ExecReload` sends) is sent on to each worker, and every worker serves the renewed one."""
    first = make_certificate(tmp_path / "first")
    log_path = tmp_path / "serve.log"
    proc = await _serve_logged(
        log_path,
        *("--workers", "2", "--port", "0"),
        *("--redis", redis_server.url, "--data-dir", str(tmp_path / "data")),
        *("--tls-cert", str(first.cert), "--tls-key", str(first.key)),
    )
    try:
        assert proc.stdout is not None
        listening = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert "(2 worker processes)" in listening, listening + log_path.read_text()
        base = listening.split("listening on ")[1].split()[0]
        assert base.startswith("https://127.0.0.1:")

        async def instances(context: ssl.SSLContext) -> set[str]:
            """The workers that answer 30 fresh connections trusting only `context`'s CA."""
            connector = aiohttp.TCPConnector(ssl=context, force_close=True)
            async with aiohttp.ClientSession(connector=connector) as http:
                seen = set()
                for _ in range(30):
                    async with http.get(base + "/api/status") as resp:
                        seen.add((await resp.json())["instanceId"])
                return seen

        assert len(await instances(first.client_context())) == 2  # both serve the first one

        renewed = make_certificate(tmp_path / "renewed")
        first.cert.write_bytes(renewed.cert.read_bytes())
        first.key.write_bytes(renewed.key.read_bytes())
        os.kill(proc.pid, signal.SIGHUP)
        await eventually(lambda: log_path.read_text().count("certificate reloaded") == 2, 10)
        # every new handshake, whichever worker takes it, shows the renewed certificate
        assert len(await instances(renewed.client_context())) == 2
        log = log_path.read_text()
        assert log.count("SIGHUP: sent on to worker") == 2
        assert proc.returncode is None and "exited with code" not in log  # nobody restarted
    finally:
        await stop_process(proc)


async def test_sighup_without_tls_is_logged_and_the_relay_keeps_serving(tmp_path: Path) -> None:
    """A single-process `serve` without `--tls-cert` (a `systemctl reload` of a plain unit): on
    SIGHUP it logs one line that there is nothing to reload and goes on serving, as the
    `--workers` supervisor does, instead of dying of the signal's default action."""
    log_path = tmp_path / "serve.log"
    port = free_port()
    proc = await _serve_logged(log_path, "--port", str(port), "--data-dir", str(tmp_path / "data"))
    try:
        assert proc.stdout is not None
        line = b""
        while b"listening on" not in line:
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line, log_path.read_text()  # it exited before listening
        os.kill(proc.pid, signal.SIGHUP)
        await eventually(lambda: "SIGHUP: nothing to reload" in log_path.read_text(), 10)
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/api/health") as resp,
        ):
            assert resp.status == 200
        assert proc.returncode is None
        assert log_path.read_text().count("SIGHUP: nothing to reload") == 1
    finally:
        await stop_process(proc)
