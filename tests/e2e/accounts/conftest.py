"""Fixtures of the /auth tests: a relay with sign-up open and no per-IP limits, on SQLite and
then on PostgreSQL (`store_target`), and `Auth`, a small caller of its account routes.

- `auth` -> `Auth` over that relay: `await auth.register(email, password=PASSWORD)` (asserts
  201, returns the body), `await auth.login(email, password)` (asserts 200, returns the
  session token), `await auth.call(method, path, session=None, json=None, data=None,
  headers=None, key=None) -> Answer`.
- `make_auth(**AccountSettings fields, database=None, **RelayConfig fields) -> Auth`: another
  relay (on the same store when `database` is given).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vttrelay.relay.accounts.settings import AccountSettings

PASSWORD = "TestPassword123!"
HEX64 = re.compile(r"^[0-9a-f]{64}$")
OPEN: dict[str, Any] = {
    "signup": "open",
    "auth_rate_limit": 0,
    "reset_rate_limit": 0,
    "account_rate_limit": 0,
}


@dataclass
class Auth:
    relay: Any

    async def call(
        self,
        method: str,
        path: str,
        session: str | None = None,
        json: Any = None,
        data: Any = None,
        headers: dict[str, str] | None = None,
        key: str | None = None,
    ) -> Any:
        all_headers = dict(headers or {})
        if session is not None:
            all_headers["Authorization"] = f"Bearer {session}"
        return await self.relay.call(
            method, path, key=key, json=json, data=data, headers=all_headers
        )

    async def register(self, email: str, password: str = PASSWORD, **extra: Any) -> Any:
        answer = await self.call(
            "POST", "/auth/register", json={"email": email, "password": password, **extra}
        )
        assert answer.status == 201, answer.body
        return answer.json()

    async def login(self, email: str, password: str = PASSWORD) -> str:
        answer = await self.call("POST", "/auth/login", json={"email": email, "password": password})
        assert answer.status == 200, answer.body
        token: str = answer.json()["sessionToken"]
        return token


@pytest.fixture
def make_auth(relay_factory: Any, store_target: str | Path) -> Callable[..., Awaitable[Auth]]:
    async def make(database: str | None = None, **fields: Any) -> Auth:
        account_fields = {
            k: v for k, v in fields.items() if k in AccountSettings.__dataclass_fields__
        }
        config = {k: v for k, v in fields.items() if k not in account_fields}
        settings = AccountSettings(**{**OPEN, **account_fields})
        relay = await relay_factory(
            database=database or str(store_target), accounts=settings, **config
        )
        return Auth(relay)

    return make


@pytest.fixture
async def auth(make_auth: Callable[..., Awaitable[Auth]]) -> Auth:
    return await make_auth()
