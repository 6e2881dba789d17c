"""Fixtures of the /auth tests: a relay with sign-up open and no per-IP limits, on SQLite and
then on PostgreSQL (`store_target`), called through `Auth` (tests/support/accounts.py).

- `auth` -> `Auth` over that relay: `await auth.register(email, password=PASSWORD)` (asserts
  201, returns the body), `await auth.login(email, password)` (asserts 200, returns the
  session token), `await auth.call(method, path, session=None, json=None, data=None,
  headers=None, key=None) -> Answer`.
- `make_auth(**AccountSettings fields, database=None, **RelayConfig fields) -> Auth`: another
  relay (on the same store when `database` is given).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.accounts import Auth

from vttrelay.relay.accounts.settings import AccountSettings

OPEN: dict[str, Any] = {
    "signup": "open",
    "auth_rate_limit": 0,
    "reset_rate_limit": 0,
    "account_rate_limit": 0,
}


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
