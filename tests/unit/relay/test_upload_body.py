"""`upload_body.spool`: a JSON or raw upload body split into its fields and its decoded file,
whatever the pieces it arrives in, with the module's texts for bad data and 413 past the limit."""

from __future__ import annotations

import asyncio
import base64
import io
import os
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from vttrelay.relay.upload_body import BAD_DATA_URL, NO_DATA, BodyError, Spooled, spool


async def _pieces(data: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def run(body: bytes, json_mode: bool = True, size: int = 7, limit: int = 10**9) -> Any:
    out = io.BytesIO()
    spooled: Spooled = asyncio.run(spool(_pieces(body, size), json_mode, out, limit))
    return spooled, out.getvalue()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 10**6])
def test_file_data_is_decoded_and_the_rest_kept(size: int) -> None:
    payload = os.urandom(3001)
    body = orjson.dumps(
        {
            "path": "a",
            "fileData": "data:image/png;base64," + base64.b64encode(payload).decode(),
            "filename": "x.png",
            "nested": {"fileData": "kept"},
        }
    )
    spooled, data = run(body, size=size)
    assert data == payload and spooled.problem is None and spooled.size == len(payload)
    assert spooled.media_type == "image/png"
    assert spooled.fields == {
        "path": "a",
        "fileData": "",
        "filename": "x.png",
        "nested": {"fileData": "kept"},
    }
    escaped, data = run(body.replace(b"/", b"\\/"), size=size)  # JSON may escape "/"
    assert data == payload and escaped.problem is None


@pytest.mark.parametrize(
    ("file_data", "problem"),
    [
        ("abc", BAD_DATA_URL),
        ("data:text/plain", BAD_DATA_URL),
        ("data:text/plain;base64,", "No base64 data found in file data"),
        ("data:text/plain;base64,@@@@", "Invalid base64 data: Only base64 data is allowed"),
    ],
)
def test_bad_data_urls_get_the_modules_texts(file_data: str, problem: str) -> None:
    spooled, data = run(orjson.dumps({"fileData": file_data}))
    assert (spooled.problem, data) == (problem, b"")


def test_unpadded_base64_and_binary_data() -> None:
    assert run(b'{"fileData":"data:text/plain;base64,SGk"}')[1] == b"Hi"
    spooled, data = run(b'{"binaryData":[104,105]}')
    assert (spooled.problem, data) == (None, b"hi")
    assert run(b'{"binaryData":[]}')[0].problem == "Invalid binary data: must be non-empty array"
    assert run(b"{}")[0].problem == NO_DATA
    assert run(b"")[0].problem == NO_DATA


@pytest.mark.parametrize(
    "body", [b"[1]", b'{"a":', b'{"fileData":"data:text/plain;base64,SGk', b"nope"]
)
def test_invalid_json(body: bytes) -> None:
    with pytest.raises(BodyError) as refused:
        run(body)
    assert refused.value.status == 400 and refused.value.text.startswith("invalid JSON: ")


def test_raw_bodies() -> None:
    assert run(b"hello raw", json_mode=False, size=2)[1] == b"hello raw"
    assert run(b"dat", json_mode=False, size=2)[1] == b"dat"
    text = b"data:text/plain;base64,SGVsbG8="
    spooled, data = run(text, json_mode=False, size=2)
    assert (data, spooled.media_type) == (b"Hello", "text/plain")
    assert run(b"", json_mode=False)[0].problem == "Decoded file data is empty"


def test_the_limit_counts_decoded_bytes() -> None:
    body = orjson.dumps({"fileData": "data:,".join(["", base64.b64encode(b"x" * 100).decode()])})
    assert run(body, limit=100)[1] == b"x" * 100
    for json_mode, data in [(True, body), (False, b"x" * 101)]:
        with pytest.raises(BodyError) as refused:
            run(data, json_mode=json_mode, limit=99)
        assert (refused.value.status, refused.value.text) == (413, "Request body too large")
    with pytest.raises(BodyError):  # the other fields are bounded too
        run(orjson.dumps({"other": "y" * (1024 * 1024 + 1)}), size=65536)
