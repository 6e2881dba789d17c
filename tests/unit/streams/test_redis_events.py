"""The shared event log and counters on a real redis-server: the stream layout's bounds (count
and bytes, as the in-process log), resume rules, the token bucket, and the pure helpers."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from vttrelay import protocol
from vttrelay.relay.backends.redis.counters import RedisCounters, client_of, sum_shares
from vttrelay.relay.backends.redis.events import (
    RedisEventLog,
    decode_message,
    parse_key,
    stream_key,
)
from vttrelay.relay.events.model import EventLog, Gap, LoggedEvent, StreamEvent

CHAT = protocol.CHAT_CHANNEL


def roll(n: int, size: int = 0) -> StreamEvent:
    return StreamEvent(protocol.ROLL_CHANNEL, "roll", {"n": n, "pad": "x" * size})


async def started(redis_url: str, capacity: int = 5, max_bytes: int | None = None) -> Any:
    log = RedisEventLog(redis_url, "i1", capacity, max_bytes)
    delivered: list[tuple[str, LoggedEvent]] = []
    log.bind(lambda client_id, logged: delivered.append((client_id, logged)))
    await log.start()
    return log, delivered


async def test_ids_bounds_and_resume_match_the_in_process_log(redis_server: Any) -> None:
    shared, delivered = await started(redis_server.url, capacity=3)
    local = EventLog(3)
    try:
        for n in range(1, 8):
            shared.append("w", roll(n))
            local.append(roll(n))
        await shared.flush()
        assert [(c, e.seq, e.event.data["n"]) for c, e in delivered] == [
            ("w", n, n) for n in range(1, 8)
        ]
        assert shared.last_id("w", protocol.ROLL_CHANNEL) == 7
        for last_seen in (0, 3, 4, 5, 7, 9):
            resume = await shared.resume("w", protocol.ROLL_CHANNEL, last_seen)
            cursor, gap, replay = local.since(last_seen)
            assert (resume.cursor, resume.gap, resume.newest) == (cursor, gap, 7)
            assert [(e.seq, e.event) for e in resume.replay] == [(e.seq, e.event) for e in replay]
            assert [e.sse for e in resume.replay] == [e.sse for e in replay]  # same bytes
        fresh = await shared.resume("w", protocol.ROLL_CHANNEL, None)
        assert (fresh.cursor, fresh.gap, fresh.replay) == (7, None, [])
        unknown = await shared.resume("other", CHAT, 2)
        assert (unknown.cursor, unknown.gap, unknown.replay) == (0, Gap(3, None), [])
    finally:
        await shared.stop()


async def test_the_stream_is_bounded_by_bytes_and_keeps_the_newest(redis_server: Any) -> None:
    shared, _ = await started(redis_server.url, capacity=100, max_bytes=2500)
    try:
        for n in range(1, 11):
            shared.append("w", roll(n, size=1000))
        shared.append("w", roll(11, size=5000))  # larger than the bound alone: still kept
        await shared.flush()
        kept = await shared.redis.xrange(stream_key("w", protocol.ROLL_CHANNEL))
        assert [k[0] for k in kept] == [b"0-11"]
        shared.append("w", roll(12, size=1000))
        shared.append("w", roll(13, size=1000))
        await shared.flush()
        resume = await shared.resume("w", protocol.ROLL_CHANNEL, 10)
        assert resume.gap == Gap(11, 12)
        assert [e.seq for e in resume.replay] == [12, 13]
        ttl = await shared.redis.pttl(stream_key("w", protocol.ROLL_CHANNEL))
        assert 0 < ttl <= 600_000
    finally:
        await shared.stop()


async def test_a_listening_instance_gets_what_another_appends_and_fills_gaps(
    redis_server: Any,
) -> None:
    writer, mine = await started(redis_server.url)
    reader = RedisEventLog(redis_server.url, "i2", 5, None)
    theirs: list[tuple[str, LoggedEvent]] = []
    reader.bind(lambda client_id, logged: theirs.append((client_id, logged)))
    await reader.start()
    try:
        assert (await reader.resume("w", CHAT, None)).cursor == 0
        event = StreamEvent(CHAT, "chat-create", {"id": "m1"}, subject={"whisper": ["u"]})
        writer.append("w", event)
        await writer.flush()
        for _ in range(200):
            if theirs:
                break
            await asyncio.sleep(0.01)
        assert [(c, e.seq, e.event) for c, e in theirs] == [("w", 1, event)]
        # ids published while this instance missed them are read back from the stream
        for n in range(2, 5):
            writer.append("w", StreamEvent(CHAT, "chat-create", {"id": f"m{n}"}))
        await writer.flush()
        for _ in range(200):  # Redis delivers them over pub/sub: real I/O, waited for
            if len(theirs) >= 4:
                break
            await asyncio.sleep(0.01)
        assert [e.seq for _, e in theirs] == [1, 2, 3, 4]
        del theirs[:]
        reader._cursors[("w", CHAT)] = 1  # as if 2-4 had been lost by pub/sub
        writer.append("w", StreamEvent(CHAT, "chat-create", {"id": "m5"}))
        await writer.flush()
        for _ in range(200):
            if len(theirs) >= 4:
                break
            await asyncio.sleep(0.01)
        assert [e.seq for _, e in theirs] == [2, 3, 4, 5]
        assert [e.seq for _, e in mine] == [1, 2, 3, 4, 5]  # the writer's own, not doubled
    finally:
        await reader.stop()
        await writer.stop()


async def test_a_shared_token_bucket(redis_server: Any) -> None:
    one = RedisCounters(redis_server.url, "i1", lambda: ["i1", "i2"])
    two = RedisCounters(redis_server.url, "i2", lambda: ["i1", "i2"])
    await one.start()
    await two.start()
    try:
        assert one.allow("k", 0) is True  # unlimited: no round trip
        taken = [await counters.allow("k", 3) for counters in (one, two, one, two)]  # type: ignore[misc]
        assert taken == [True, True, True, False]
        assert await two.allow("other", 3)  # type: ignore[misc]
        ttl = await one.redis.pttl("vttrelay:rate:k")
        assert 0 < ttl <= 60_001
    finally:
        await one.stop()
        await two.stop()


def test_keys_messages_and_shares() -> None:
    assert parse_key(stream_key("a}:b", CHAT)) == ("a}:b", CHAT)
    assert parse_key("vttrelay:other") is None
    assert client_of("vttrelay:subs:{w1}") == "w1" and client_of("vttrelay:x") is None
    header = orjson.dumps(["i9", "chat-delete", {"whisper": []}])
    origin, logged = decode_message(CHAT, b"12\n" + header + b'\n{"id":"m\\n1"}')
    assert origin == "i9" and logged.seq == 12
    assert logged.event == StreamEvent(CHAT, "chat-delete", {"id": "m\n1"}, {"whisper": []})
    raw = {
        b"a|chat-events": b"2 0",
        b"b|chat-events": b"0 1",
        b"b|roll-events": b"1 0",
        b"gone|chat-events": b"5 0",
        b"new|chat-events": b"7 0",
    }
    totals, dead = sum_shares(raw, {"a", "b"}, {"gone"})
    assert totals == {"chat-events": (2, True), "roll-events": (1, False)}
    assert dead == [b"gone|chat-events"]  # `new` may not be known alive yet: kept
