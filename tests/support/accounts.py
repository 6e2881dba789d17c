"""Helpers for the /auth tests: `Auth`, a small caller of a relay's account routes, the
test password `PASSWORD` and `HEX64`, the shape of a 64-hex-digit secret.

- `await auth.register(email, password=PASSWORD)` (asserts 201, returns the body),
  `await auth.login(email, password)` (asserts 200, returns the session token),
  `await auth.call(method, path, session=None, json=None, data=None, headers=None, key=None)
  -> Answer`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PASSWORD = "TestPassword123!"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


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
