"""`vttrelay accounts ...` and `vttrelay serve --signup` as real processes: the operator makes
an account, an invite code and a reset link; a relay started with `--signup open` lets anyone
register, and one with the default policy lets nobody."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from bench.procs import free_port
from tests.support.relay import start_serve, stop_process

from vttrelay.relay.accounts import users
from vttrelay.relay.store import RelayStore

PASSWORD = "OperatorMade1"


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vttrelay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
        env=dict(os.environ),
    )


async def test_accounts_commands_and_the_signup_policy(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    made = run("accounts", "create", "Owner@Example.com", "--account", "default",
               "--password-stdin", "--data-dir", data, stdin=PASSWORD + "\n")  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "default"
    weak = run("accounts", "create", "x@example.com", "--password-stdin", "--data-dir", data,
               stdin="weak\n")  # fmt: skip
    assert weak.returncode == 2 and "at least 8 characters" in weak.stderr
    again = run("accounts", "create", "owner@example.com", "--password-stdin", "--data-dir", data,
                stdin=PASSWORD + "\n")  # fmt: skip
    assert again.returncode == 1
    listed = run("accounts", "list", "--data-dir", data)
    assert "default" in listed.stdout and "owner@example.com" in listed.stdout
    invite = run("accounts", "invite", "--data-dir", data)
    code = invite.stdout.strip()
    assert invite.returncode == 0 and len(code) == 64
    link = run("accounts", "reset-link", "owner@example.com", "--url", "https://relay.example",
               "--data-dir", data)  # fmt: skip
    assert link.returncode == 0
    assert link.stdout.startswith("https://relay.example/dashboard/reset?token=")
    token = link.stdout.strip().split("token=", 1)[1]
    store = RelayStore(Path(data) / "relay.db")
    try:
        assert users.reset_valid(store, token)
    finally:
        store.close()
    missing = run("accounts", "reset-link", "nobody@example.com", "--data-dir", data)
    assert missing.returncode == 1

    port = free_port()
    proc, _ = await start_serve(Path(data), port, "--no-world")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            closed = await http.post(
                "/auth/register", json={"email": "new@example.com", "password": PASSWORD}
            )
            assert closed.status_code == 403
            login = await http.post(
                "/auth/login", json={"email": "owner@example.com", "password": PASSWORD}
            )
            assert login.status_code == 200
            reset = await http.post(
                "/auth/reset-password", json={"token": token, "password": "ResetByLink2"}
            )
            assert reset.status_code == 200
    finally:
        await stop_process(proc)
    port = free_port()
    proc, _ = await start_serve(Path(data), port, "--no-world", "--signup", "invite")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            body: dict[str, Any] = {"email": "new@example.com", "password": PASSWORD}
            assert (await http.post("/auth/register", json=body)).status_code == 403
            answer = await http.post("/auth/register", json={**body, "inviteCode": code})
            assert answer.status_code == 201
    finally:
        await stop_process(proc)
