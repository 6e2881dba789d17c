"""`vttrelay serve`'s settings from a real process: the example file of docs/deploy.md, the
environment and flags (flag > environment > file), `--print-config`, and a bad setting refused
at start with one line before anything listens."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import httpx
import pytest
from bench.procs import free_port
from tests.support.relay import start_serve, stop_process

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "deploy" / "vttrelay.toml"


async def _run_serve(*argv: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vttrelay",
        "serve",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_the_documented_file_env_and_flags_make_the_relay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    # start_serve passes this process's environment on
    monkeypatch.setenv("VTTRELAY_RATE", "3")
    monkeypatch.setenv("VTTRELAY_CONFIG", str(EXAMPLE))
    monkeypatch.setenv("VTTRELAY_NO_WORLD", "yes")
    proc, lines = await start_serve(tmp_path / "data", port)
    try:
        key = lines[-1].split('"x-api-key: ')[1].split('"')[0]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            codes = [(await http.get("/clients", headers={"x-api-key": key})).status_code
                     for _ in range(4)]  # fmt: skip
            # the environment's rate (3 a minute) beat the file's (300)
            assert codes == [200, 200, 200, 429]
            # the file's base path
            docs = await http.get("/openapi.json", headers={"X-Forwarded-Proto": "https"})
            assert docs.json()["servers"] == [{"url": "/vtt"}]
    finally:
        await stop_process(proc)
    assert (tmp_path / "data" / "relay.db").exists()  # the flag's data dir, not the file's


async def test_print_config_shows_each_source_and_masks_secrets(tmp_path: Path) -> None:
    code, out, err = await _run_serve(
        "--config",
        str(EXAMPLE),
        "--port",
        "4100",
        "--print-config",
        env={
            "VTTRELAY_PORT": "4200",
            "VTTRELAY_SIGNUP": "open",
            "VTTRELAY_SMTP_PASSWORD": "mail-secret-1",
            "VTTRELAY_REDIS_URL": "redis://:redis-secret-2@cache:6379/0",
        },
    )
    assert code == 0, err
    lines = out.splitlines()
    assert "port = 4100  # flag" in lines
    assert 'signup = "open"  # env VTTRELAY_SIGNUP' in lines
    assert f'base-path = "/vtt"  # file {EXAMPLE}' in lines
    assert 'trusted-proxy = ["127.0.0.1", "::1"]' + f"  # file {EXAMPLE}" in lines
    assert "workers = 1  # default" in lines
    assert 'smtp-password = "********"  # env VTTRELAY_SMTP_PASSWORD' in lines
    assert 'redis = "redis://:********@cache:6379/0"  # env VTTRELAY_REDIS_URL' in lines
    assert "mail-secret-1" not in out and "redis-secret-2" not in out


async def test_bad_settings_are_refused_with_one_line_before_anything_listens(
    tmp_path: Path,
) -> None:
    port = free_port()
    bad_file = tmp_path / "bad.toml"
    bad_file.write_text(f"port = {port}\nmax-conections = 5\n")
    cases = [
        ({"VTTRELAY_PORT": str(port), "VTTRELAY_MAX_BODY_MB": "lots"}, (),
         "vttrelay serve: VTTRELAY_MAX_BODY_MB: not a number: 'lots'"),
        ({}, ("--config", str(bad_file)),
         f"vttrelay serve: {bad_file}: unknown setting 'max-conections' "
         "(did you mean 'max-connections'?)"),
        ({}, ("--port", str(port), "--config", str(tmp_path / "none.toml")),
         f"vttrelay serve: --config {tmp_path / 'none.toml'}: cannot be read: "
         "No such file or directory"),
        ({"VTTRELAY_CONFIG": str(tmp_path)}, ("--port", str(port)),
         f"vttrelay serve: --config {tmp_path}: cannot be read: Is a directory"),
        ({"VTTRELAY_TRUSTED_PROXY": "proxy.lan"}, ("--port", str(port)),
         "vttrelay serve: VTTRELAY_TRUSTED_PROXY: not an address or network: 'proxy.lan'"),
    ]  # fmt: skip
    for env, argv, line in cases:
        code, out, err = await _run_serve("--data-dir", str(tmp_path / "d"), *argv, env=env)
        assert (code, out, err) == (2, "", line + "\n")
        assert not _listening(port)
        assert not (tmp_path / "d").exists()  # nothing was made either
