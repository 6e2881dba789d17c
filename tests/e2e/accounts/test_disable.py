"""`vttrelay accounts disable EMAIL` / `enable` as real processes against the store two running
relays share (SQLite, then PostgreSQL): a disabled account's sessions end at once, sign-in is
refused with the reference's `Account disabled`, its API keys stop on both relays (403) and its
world is closed with 4005 (the module keeps its token and retries) and refused while it tries;
another account is untouched; enabling gives everything back without re-pairing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.support.accounts import PASSWORD, Auth
from tests.support.relay import WorldDouble, WorldRefused

DISABLED = {"error": "Account disabled"}
FAST = {"key_cache_ttl": 0.2, "token_check_interval": 0.2}


async def vttrelay(target: str | Path, *args: str) -> tuple[int, str, str]:
    """Run `vttrelay ARGS` on the store `target` (a SQLite file or a PostgreSQL URL)."""
    where = (
        ["--database", str(target)]
        if str(target).startswith("postgresql")
        else ["--data-dir", str(Path(target).parent)]
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vttrelay", *args, *where,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {seconds} s")


async def key_answer(auth: Auth, key: str) -> tuple[int, Any]:
    answer = await auth.relay.call("GET", "/api/key", key=key)
    return answer.status, answer.json()


async def test_disable_and_enable_an_account_from_the_cli(
    make_auth: Callable[..., Awaitable[Auth]], store_target: str | Path
) -> None:
    first = await make_auth(**FAST)
    second = await make_auth(database=str(store_target), **FAST)  # another relay, same store
    made = await first.register("disable-me@example.com")
    session, account = made["sessionToken"], made["id"]
    other = await first.register("bystander@example.com")
    created = await first.call(
        "POST", "/auth/api-keys", session=session, json={"name": "bot", "scopes": ["world:info"]}
    )
    key = created.json()["key"]
    other_key = (
        await first.call(
            "POST", "/auth/api-keys", session=other["sessionToken"],
            json={"name": "theirs", "scopes": ["world:info"]},
        )
    ).json()["key"]  # fmt: skip
    token = first.relay.token(account, "disable-world")
    world = WorldDouble(first.relay.ws_url, "disable-world", token)
    first.relay.worlds.append(world)
    await world.connect()
    for relay in (first, second):
        assert (await relay.call("GET", "/auth/user-data", session=session)).status == 200
        assert (await key_answer(relay, key))[0] == 200

    code, _, said = await vttrelay(store_target, "accounts", "disable", "disable-me@example.com")
    assert code == 0, said
    assert "is disabled" in said
    # sessions: at once, on both relays
    for relay in (first, second):
        answer = await relay.call("GET", "/auth/user-data", session=session)
        assert answer.status == 401
    # sign-in is refused with the reference's text (after the password was checked)
    login = await first.call(
        "POST", "/auth/login", json={"email": "disable-me@example.com", "password": PASSWORD}
    )
    assert (login.status, login.json()) == (403, DISABLED)
    wrong = await first.call(
        "POST", "/auth/login", json={"email": "disable-me@example.com", "password": "Wrong1234"}
    )
    assert wrong.status == 401
    regenerate = await second.call(
        "POST", "/auth/regenerate-key",
        json={"email": "disable-me@example.com", "password": PASSWORD},
    )  # fmt: skip
    assert (regenerate.status, regenerate.json()) == (403, DISABLED)

    # its key, on both relays, within the key cache's refresh
    async def key_refused() -> bool:
        answers = [await key_answer(relay, key) for relay in (first, second)]
        return answers == [(403, DISABLED)] * 2

    await eventually(key_refused)
    # its world: closed 4005 (the module retries; it keeps its token), refused while it tries
    assert await world.wait_closed(5) == 4005
    assert world.close_reason == "Account disabled"
    again = WorldDouble(first.relay.ws_url, "disable-world", token)
    try:
        await again.connect()
        raise AssertionError("a disabled account's world connected")
    except WorldRefused as refused:
        assert (refused.code, refused.reason) == (4005, "Account disabled")
    # another account is untouched
    assert (await key_answer(second, other_key))[0] == 200
    assert (await first.call("GET", "/auth/user-data", session=other["sessionToken"])).status == 200
    code, listed, _ = await vttrelay(store_target, "accounts", "list")
    line = next(row for row in listed.splitlines() if "disable-me@example.com" in row)
    assert code == 0 and "disabled" in line.split()

    code, _, said = await vttrelay(store_target, "accounts", "enable", account)
    assert code == 0 and "is enabled" in said
    assert (await first.call("GET", "/auth/user-data", session=session)).status == 401  # ended

    async def key_works() -> bool:
        return [(await key_answer(r, key))[0] for r in (first, second)] == [200, 200]

    await eventually(key_works)
    new_session = await second.login("disable-me@example.com")
    assert (await first.call("GET", "/auth/user-data", session=new_session)).status == 200
    back = WorldDouble(first.relay.ws_url, "disable-world", token)  # the same token: no re-pair
    first.relay.worlds.append(back)
    await back.connect()
    answer = await first.relay.call(
        "GET", "/world-info", key=key, params={"clientId": "disable-world"}
    )
    assert answer.status == 200
    missing = await vttrelay(store_target, "accounts", "disable", "nobody@example.com")
    assert missing[0] == 1 and "No account" in missing[2]


async def test_a_disabled_account_is_refused_by_every_session_route(auth: Auth) -> None:
    """A session made before the operator disabled the account (a race) works nowhere: the
    routes the reference lets a disabled account use (change-password, export, delete) too."""
    made = await auth.register("raced@example.com")
    session = made["sessionToken"]
    store: Any = auth.relay.store
    store.db.run("UPDATE users SET disabled = 1 WHERE account = ?", (made["id"],))
    for method, path in (
        ("GET", "/auth/user-data"),
        ("GET", "/auth/export-data"),
        ("GET", "/auth/api-keys"),
        ("POST", "/auth/change-password"),
        ("DELETE", "/auth/account"),
    ):
        answer = await auth.call(method, path, session=session, json={})
        assert (answer.status, answer.json()) == (403, DISABLED), path
