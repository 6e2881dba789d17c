"""`vttrelay backup` while a real `vttrelay serve` takes writes, and `vttrelay restore` of it:
every account, API key, connection token and world document written before the backup began is
there after the restore (checked through a relay serving the restored data dir); a restore is
refused while a relay runs on the data dir, and the PostgreSQL store is refused with pg_dump named.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from bench.procs import free_port
from tests.support.relay import WorldDouble, start_serve, stop_process

PASSWORD = "TestPassword123!"
PAIRED_ACCOUNTS = 8  # the first accounts also pair a world with a connection token


async def vttrelay(*args: str) -> tuple[int, str, str]:
    """Run a `vttrelay` command: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "vttrelay",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@dataclass
class Account:
    email: str
    key: str
    token: str
    client_id: str
    done_at: float


@dataclass
class Written:
    """What the clients wrote, each with the time its answer arrived."""

    accounts: list[Account] = field(default_factory=list)
    documents: list[tuple[str, str, float]] = field(default_factory=list)  # (uuid, name, at)


async def write_accounts(http: aiohttp.ClientSession, base: str, out: Written) -> None:
    """Sign up, make an API key and pair a world with a connection token, again and again."""
    for n in range(10_000):
        email = f"player{n}@example.com"
        async with http.post(
            base + "/auth/register", json={"email": email, "password": PASSWORD}
        ) as resp:
            assert resp.status == 201, await resp.text()
            session = (await resp.json())["sessionToken"]
        auth = {"Authorization": f"Bearer {session}"}
        async with http.post(
            base + "/auth/api-keys", json={"name": f"bot{n}", "scopes": ["search"]}, headers=auth
        ) as resp:
            assert resp.status == 201, await resp.text()
            key = (await resp.json())["key"]
        paired = {"token": "", "clientId": ""}
        if n < PAIRED_ACCOUNTS:  # /auth/pair allows 10 per address per 15 minutes
            async with http.post(base + "/auth/connection-tokens", headers=auth) as resp:
                assert resp.status == 201, await resp.text()
                code = (await resp.json())["code"]
            pair = {"code": code, "worldId": f"w{n}"}
            async with http.post(base + "/auth/pair", json=pair) as resp:
                assert resp.status == 200, await resp.text()
                paired = await resp.json()
        out.accounts.append(Account(email, key, paired["token"], paired["clientId"], time.time()))


async def write_documents(
    http: aiohttp.ClientSession, base: str, key: str, writer: int, out: Written
) -> None:
    """Create actors in the embedded world, one after another."""
    for n in range(100_000):
        name = f"Backup {writer}-{n}"
        body = {"entityType": "Actor", "data": {"name": name, "type": "npc"}}
        async with http.post(base + "/create", json=body, headers={"x-api-key": key}) as resp:
            assert resp.status == 200, await resp.text()
            uuid = (await resp.json())["uuid"]
        out.documents.append((uuid, name, time.time()))


async def test_a_backup_under_write_load_restores_everything_written_before_it(
    tmp_path: Path,
) -> None:
    data, port = tmp_path / "data", free_port()
    code, demo_key, err = await vttrelay(
        *("keys", "create", "--scope", "entity:write", "--rate", "0", "--data-dir", str(data))
    )
    assert code == 0, err
    demo_key = demo_key.strip()
    proc, _ = await start_serve(data, port, "--signup", "open", "--auth-rate", "100000")
    base = f"http://127.0.0.1:{port}"
    written = Written()
    dest = tmp_path / "backups" / "monday"
    try:
        async with aiohttp.ClientSession() as http:
            writers = [
                asyncio.ensure_future(write_accounts(http, base, written)),
                asyncio.ensure_future(write_documents(http, base, demo_key, 1, written)),
                asyncio.ensure_future(write_documents(http, base, demo_key, 2, written)),
            ]
            try:
                while len(written.accounts) < 3 or len(written.documents) < 30:
                    assert not any(w.done() for w in writers), [
                        w.exception() for w in writers if w.done()
                    ]
                    await asyncio.sleep(0.05)
                began = time.time()
                code, out, err = await vttrelay("backup", str(dest), "--data-dir", str(data))
                ended = time.time()
                assert code == 0, err
                assert out.strip() == str(dest)
                assert "2 database(s) (relay.db, world/world.db)" in err
                # a restore while the relay runs on the data dir is refused, and changes nothing
                code, _, err = await vttrelay("restore", str(dest), "--data-dir", str(data))
                assert code == 2
                assert err.strip() == (
                    f"vttrelay restore: a relay is running on {data}; "
                    "stop it first (e.g. systemctl stop vttrelay)"
                )
                await asyncio.sleep(0.3)  # still writing afterwards
                assert not any(w.done() for w in writers), [
                    w.exception() for w in writers if w.done()
                ]
            finally:
                for w in writers:
                    w.cancel()
                await asyncio.gather(*writers, return_exceptions=True)
    finally:
        await stop_process(proc)
    # the clients wrote during the backup: it ran under load
    assert any(began < at < ended for _, _, at in written.documents)

    restored = tmp_path / "restored"
    code, _, err = await vttrelay("restore", str(dest), "--data-dir", str(restored))
    assert code == 0, err
    assert f"Restored {restored} from {dest}" in err
    code, key, err = await vttrelay(
        "keys", "create", "--scope", "entity:read", "--rate", "0", "--data-dir", str(restored)
    )
    assert code == 0, err
    key = key.strip()

    accounts = [a for a in written.accounts if a.done_at < began]
    documents = [(uuid, name) for uuid, name, at in written.documents if at < began]
    assert len(accounts) >= 3 and len(documents) >= 30 and accounts[0].token
    port = free_port()
    proc, _ = await start_serve(restored, port, "--signup", "open", "--auth-rate", "100000")
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for uuid, name in documents:
                async with http.get(
                    base + "/get", params={"uuid": uuid}, headers={"x-api-key": key}
                ) as resp:
                    assert resp.status == 200, (uuid, await resp.text())
                    assert (await resp.json())["data"]["name"] == name
            for account in accounts:
                login = {"email": account.email, "password": PASSWORD}
                async with http.post(base + "/auth/login", json=login) as resp:
                    assert resp.status == 200, (account.email, await resp.text())
                async with http.get(base + "/api/key", headers={"x-api-key": account.key}) as resp:
                    assert resp.status == 200, (account.email, await resp.text())
                if not account.token:
                    continue
                world = WorldDouble(
                    f"ws://127.0.0.1:{port}/relay", account.client_id, account.token, session=http
                )
                await world.connect()  # the connection token still opens the world's socket
                await world.close()
    finally:
        await stop_process(proc)


async def test_backup_refuses_a_postgresql_store_and_restore_a_folder_that_is_no_backup(
    tmp_path: Path,
) -> None:
    url = "postgresql://vttrelay@127.0.0.1:5432/vttrelay"
    code, out, err = await vttrelay("backup", str(tmp_path / "b"), "--database", url)
    assert (code, out) == (2, "")
    assert err.strip() == (
        "vttrelay backup: the relay's store is PostgreSQL (--database): back it up with pg_dump "
        "(pg_dump --format=custom --file vttrelay.dump URL; pg_restore puts it back); "
        "vttrelay backup copies SQLite data dirs only"
    )
    assert not (tmp_path / "b").exists()
    (tmp_path / "junk").mkdir()
    code, _, err = await vttrelay(
        "restore", str(tmp_path / "junk"), "--data-dir", str(tmp_path / "d")
    )
    assert code == 2
    assert err.strip() == (
        f"vttrelay restore: {tmp_path / 'junk'} is not a vttrelay backup (no vttrelay-backup.json)"
    )
