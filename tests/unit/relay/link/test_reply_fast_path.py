"""The reply fast path: requestId read from the frame's head, the 400 rule without parsing.

`peek_reply` may only say "no error" when the full parse would agree; everything it is unsure
of goes to the full parse (None, or True for "maybe an error").
"""

from __future__ import annotations

import asyncio

import orjson
import pytest

from vttrelay.relay.link.pending import FAST_PATH_MIN_BYTES, Reply, peek_reply


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            b'{"type":"chat-send-result","requestId":"chat-send_1_ab","success":true}',
            ("chat-send_1_ab", False),
        ),
        (b'{"type":"x-result","requestId":"r1","data":{"a":1}}\n', ("r1", False)),
        (b'{"type":"x-result","requestId":"r\xc3\xa9"}', ("r\u00e9", False)),
        # "error" anywhere (a key, a nested key, a string value) -> parse to decide
        (b'{"type":"x-result","requestId":"r1","error":"Actor not found"}', ("r1", True)),
        (b'{"type":"x-result","requestId":"r1","data":{"error":"nested"}}', ("r1", True)),
        (b'{"type":"x-result","requestId":"r1","text":"say \\"error"}', ("r1", True)),
        # an escaped quote before it: not the bytes "error" (and no top-level error): fast
        (b'{"type":"x-result","requestId":"r1","text":"\\"error\\" said"}', ("r1", False)),
        (b'{"type":"x-result","requestId":"r1","content":"error"}', ("r1", True)),
        (b'{"type":"x-result","requestId":"r1","error":{"message":"x"}}', ("r1", True)),
        # a \u escape could spell the key: parse
        (b'{"type":"x-result","requestId":"r1","\\u0065rror":"x"}', ("r1", True)),
        # anything but the usual head: None (full parse)
        (b'{"requestId":"r1","type":"x-result"}', None),
        (b'{"type": "x-result", "requestId": "r1"}', None),
        (b'{"type":"x-result","data":1,"requestId":"r1"}', None),
        (b'{"type":"x\\"y","requestId":"r1"}', None),
        (b'{"type":"x-result","requestId":"r\\"1"}', None),
        (b'{"type":"x-result","requestId":"r\\u0031"}', None),
        (b'{"type":"x-result","requestId":42}', None),
        (b'{"type":"x-result","requestId":"r1","requestId":"r2"}', None),
        (b'{"type":"x-result","requestId":"r1"', None),
        (b'{"type":"x-result","requestId":"r1', None),
        (b'{"type":"x-result', None),
        (b'{"type":"x-result","requestId":"\xff"}', None),
        (b"[1,2]", None),
        (b"", None),
    ],
)
def test_peek_reply(raw: bytes, expected: tuple[str, bool] | None) -> None:
    assert peek_reply(raw) == expected


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "a-result", "requestId": "r", "error": "Actor not found"},
        {"type": "a-result", "requestId": "r", "error": None},
        {"type": "a-result", "requestId": "r", "error": {"message": "x"}},
        {"type": "a-result", "requestId": "r", "data": {"error": "nested"}},
        {"type": "a-result", "requestId": "r", "content": "error"},
        {"type": "a-result", "requestId": "r", "success": True, "data": {"n": [1, 2]}},
        {"type": "a-result", "requestId": "r", "note": "caf\u00e9 \u2603 \x01"},
    ],
)
def test_fast_path_never_contradicts_the_full_parse(frame: dict) -> None:
    raw = orjson.dumps(frame)
    head = peek_reply(raw)
    assert head is not None and head[0] == "r"
    if not head[1]:
        assert Reply(raw, orjson.loads(raw)).is_error is False
    else:
        assert "error" in raw.decode() or "\\u" in raw.decode()


def test_an_unparsed_reply_parses_its_frame_on_use() -> None:
    raw = b'{"type":"a-result","requestId":"r","data":{"n":1}}'
    reply = Reply(raw, None, False)
    assert reply.frame == {"type": "a-result", "requestId": "r", "data": {"n": 1}}
    assert reply.raw is raw and reply.is_error is False
    assert Reply(b'{"type":"a-result","requestId":"r",oops}', None, False).frame == {}


async def test_world_resolves_a_plain_reply_without_parsing_and_errors_with_it() -> None:
    from vttrelay.relay.link.connection import WorldConnection

    world = WorldConnection.__new__(WorldConnection)
    world.pending = {}
    loop = asyncio.get_running_loop()
    plain, err = loop.create_future(), loop.create_future()
    world.pending.update({"p": plain, "e": err})
    pad = b',"pad":"' + b"x" * FAST_PATH_MIN_BYTES + b'"}'
    assert not world.resolve_unparsed(b'{"type":"a-result","requestId":"p"}')  # small: parse
    assert world.resolve_unparsed(b'{"type":"a-result","requestId":"p","ok":true' + pad)
    assert plain.result().raw.endswith(b'x"}') and plain.result().is_error is False
    assert not world.resolve_unparsed(b'{"type":"a-result","requestId":"e","error":"no"' + pad)
    assert not world.resolve_unparsed(b'{"type":"a-result","requestId":"unknown"' + pad)
    assert not err.done()
