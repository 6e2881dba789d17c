"""Helpers for the file, sheet and scene-picture tests.

- `raw(relay, key, method, path, data=None, headers=None, **query) -> Answer`: a call whose
  body is bytes (or None) and whose answer is read as bytes.
- `png(width, height, color) -> bytes`: a solid PNG; `data_url(mime, data) -> str`.
"""

from __future__ import annotations

import base64
import io
from typing import Any


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
