"""Fixtures for the file, sheet and scene-picture tests (the connected demo world is the
`world` fixture of tests/e2e/conftest.py).

- `api` -> `async call(method, path, json=None, **query) -> (status, body)` with a key holding
  every scope.
- `raw(relay, key, method, path, data=None, headers=None, **query) -> Answer`: a call whose
  body is bytes (or None) and whose answer is read as bytes.
- `png(width, height, color) -> bytes`: a solid PNG; `data_url(mime, data) -> str`.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest

from vttrelay.relay.routes import ALL_SCOPES

Api = Callable[..., Awaitable[tuple[int, Any]]]


@pytest.fixture
def api(relay: Any) -> Api:
    """Like tests/e2e's `api_for`, with positional-only arguments: `path` is a query value."""
    key = relay.key(ALL_SCOPES, rate_per_minute=0)

    async def call(method: str, route: str, json: Any = None, /, **query: Any) -> tuple[int, Any]:
        params = {
            k: v if isinstance(v, str) else orjson.dumps(v).decode() for k, v in query.items()
        }
        answer = await relay.call(method, route, key=key, json=json, params=params)
        return answer.status, orjson.loads(answer.body)

    return call


async def raw(
    relay: Any,
    key: str,
    method: str,
    route: str,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
    /,
    **query: str,
) -> Any:
    return await relay.call(method, route, key=key, data=data, headers=headers, params=query)


def png(width: int, height: int, color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
