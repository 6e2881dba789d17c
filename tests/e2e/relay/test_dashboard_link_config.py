"""`vttrelay dashboard-link` (and `keys`, `accounts reset-link`) find the relay that `vttrelay
serve` runs from a TOML file or the environment, as an operator meets it with real processes and
real HTTP: serve started with `--config FILE` (data dir, port and public URL in the file) from
another working directory; the same `--config`, `$VTTRELAY_CONFIG`, or `VTTRELAY_*` alone give a
link that signs in on that relay, and the hint a later start prints is a command that does too;
without them the link is minted in another data dir and that relay refuses it."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import httpx
from bench.procs import free_port
from tests.support.dashboard import sign_in_with_link
from tests.support.relay import run_vttrelay, serve_lines, stop_process


def _clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without any `VTTRELAY_*`, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTTRELAY_")}
    return {**env, "PYTHONUNBUFFERED": "1", **settings}


async def _serve(
    cwd: Path, env: dict[str, str], *args: str
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """`vttrelay serve ARGS` in `cwd`; its stdout lines up to its `Dashboard` line."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", "serve", *args,
        cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    return proc, await serve_lines(proc, "Dashboard")


async def _link(cwd: Path, env: dict[str, str], *args: str) -> str:
    code, out, err = await run_vttrelay("dashboard-link", *args, cwd=cwd, env=env)
    assert code == 0, err
    return out.strip()


async def test_dashboard_link_and_keys_use_the_config_file_serve_runs_with(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tmp_path / "srv" / "data"
    config = tmp_path / "vttrelay.toml"
    config.write_text(f'data-dir = "{data}"\nport = {port}\npublic-url = "{base}/"\n')
    cwd = tmp_path / "elsewhere"  # where the operator's shell is: ./data is not the relay's
    cwd.mkdir()
    env = _clean_env()

    proc, first = await _serve(cwd, env, "--config", str(config))
    try:  # the first start's own link, at the file's public URL
        assert first[0].endswith(f"listening on {base}")
        assert first[-1].startswith(f"Dashboard: {base}/dashboard/signin?token=")
        assert await sign_in_with_link(base, first[-1].removeprefix("Dashboard: ")) == 303
    finally:
        await stop_process(proc)
    assert (data / "relay.db").exists() and not (cwd / "data").exists()

    proc, later = await _serve(cwd, env, "--config", str(config))
    try:
        # a later start prints a command; run as printed, in a shell without serve's settings
        hint = later[-1].removeprefix("Dashboard: ")
        assert hint == f"vttrelay dashboard-link --url {base} --config {config}"
        link = await _link(cwd, env, *shlex.split(hint)[2:])
        assert link.startswith(f"{base}/dashboard/signin?token=")
        assert await sign_in_with_link(base, link) == 303

        # the same --config alone: the URL is the file's public-url
        link = await _link(cwd, env, "--config", str(config))
        assert link.startswith(f"{base}/dashboard/signin?token=")
        assert await sign_in_with_link(base, link) == 303

        # the environment alone: $VTTRELAY_CONFIG, or the settings themselves
        link = await _link(cwd, _clean_env(VTTRELAY_CONFIG=str(config)))
        assert await sign_in_with_link(base, link) == 303
        by_env = _clean_env(VTTRELAY_DATA_DIR=str(data), VTTRELAY_PORT=str(port))
        link = await _link(cwd, by_env)
        assert link.startswith(f"{base}/dashboard/signin?token=")  # from the port: no public URL
        assert await sign_in_with_link(base, link) == 303

        # a flag beats the file: another data dir, so a link this relay does not know
        link = await _link(cwd, env, "--config", str(config), "--data-dir", str(cwd / "data"))
        assert link.startswith(f"{base}/dashboard/signin?token=")
        assert await sign_in_with_link(base, link) == 401
        # nothing given: ./data and port 3010, another relay's (the defect this fixes)
        link = await _link(cwd, env, "--url", base)
        assert await sign_in_with_link(base, link) == 401

        # keys: made in the store the file names, usable on the running relay at once
        code, key, err = await run_vttrelay(
            "keys", "create", "--preset", "gm", "--config", str(config), cwd=cwd, env=env
        )
        assert code == 0, err
        async with httpx.AsyncClient(base_url=base) as http:
            got = await http.get("/world-info", headers={"x-api-key": key.strip()}, timeout=20)
        assert got.status_code == 200, got.text

        # accounts: a password-reset link in that store, at the file's public URL
        code, _, err = await run_vttrelay(
            "accounts", "create", "ada@example.org", "--password-stdin", "--config", str(config),
            cwd=cwd, env=env, stdin="Dragon-Hoard-7\n",
        )  # fmt: skip
        assert code == 0, err
        code, out, err = await run_vttrelay(
            "accounts", "reset-link", "ada@example.org", "--config", str(config), cwd=cwd, env=env
        )
        assert code == 0 and out.startswith(f"{base}/dashboard/reset?token="), (out, err)
        async with httpx.AsyncClient(base_url=base) as http:
            got = await http.get(f"/auth/validate-reset-token/{out.strip().split('token=')[1]}")
        assert got.json() == {"valid": True}
    finally:
        await stop_process(proc)


async def test_the_hint_of_a_serve_configured_by_its_environment_names_its_data_dir(
    tmp_path: Path,
) -> None:
    """systemd's `Environment=VTTRELAY_DATA_DIR=...`: the operator's shell has none of it, so
    the printed command names the data dir itself."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tmp_path / "var" / "vttrelay"
    served = _clean_env(VTTRELAY_DATA_DIR=str(data), VTTRELAY_PORT=str(port))
    for _ in range(2):  # the first start prints a link itself; the second, the command
        proc, lines = await _serve(tmp_path, served, "--no-world")
        if lines[-1].startswith("Dashboard: vttrelay"):
            break
        await stop_process(proc)
    try:
        hint = lines[-1].removeprefix("Dashboard: ")
        assert hint == f"vttrelay dashboard-link --url {base} --data-dir {data}"
        link = await _link(tmp_path, _clean_env(), *shlex.split(hint)[2:])
        assert await sign_in_with_link(base, link) == 303
    finally:
        await stop_process(proc)
