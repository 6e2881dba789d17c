"""The event hub with in-process fakes: mailboxes, counting, fan-out, replay, limits, faults."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from tests.support.clock import FakeClock, FakeTimer

from vttrelay import protocol
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.events.hub import EventHub
from vttrelay.relay.events.mailbox import Mailbox
from vttrelay.relay.events.model import EventFilter, Gap
from vttrelay.relay.events.settings import StreamSettings, settings_from
from vttrelay.relay.events.subscriber import FELL_BEHIND, Subscriber, error_frame


class FakeWorld:
    def __init__(self, client_id: str = "w1") -> None:
        self.client_id = client_id
        self.sent: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any]) -> None:
        await asyncio.sleep(0)  # a real socket yields; order must survive it
        self.sent.append(frame)

    def counts(self) -> list[tuple[str, int]]:
        return [(f["channel"], f["count"]) for f in self.sent]


class FakeRegistry:
    def __init__(self) -> None:
        self.worlds: dict[str, FakeWorld] = {}

    def get(self, client_id: str) -> FakeWorld | None:
        return self.worlds.get(client_id)


class FakeTransport:
    """An SSE stream's connection: what was written, whether it is closing or backed up."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False
        self.backlog = 0  # unsent bytes
        self.aborted = False

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.backlog

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def abort(self) -> None:
        self.aborted = self.closing = True


def hub_with_world(**settings: Any) -> tuple[EventHub, FakeRegistry, FakeWorld]:
    registry = FakeRegistry()
    world = registry.worlds["w1"] = FakeWorld()
    return EventHub(registry, StreamSettings(**settings)), registry, world


def hub_on_clock(**settings: Any) -> tuple[EventHub, FakeRegistry, FakeWorld, FakeClock]:
    """A hub whose grace, linger and retention timers run on a fake clock the test advances."""
    registry = FakeRegistry()
    world = registry.worlds["w1"] = FakeWorld()
    clock = FakeClock()
    return (
        EventHub(registry, StreamSettings(**settings), later=clock.call_later, clock=clock),
        registry,
        world,
        clock,
    )


async def tick(clock: FakeClock, seconds: float) -> None:
    """Advance the clock, then let the tasks it woke (the sweeper) run to their next wait."""
    await asyncio.sleep(0)  # a sweeper just started reaches its first wait
    clock.advance(seconds)
    for _ in range(3):
        await asyncio.sleep(0)


def sub(channel: str = protocol.CHAT_CHANNEL, kind: Any = "sse", **kw: Any) -> Subscriber:
    return Subscriber(
        "w1", channel, kw.pop("filter", EventFilter()), kind, Mailbox(kw.pop("queue", 10)), **kw
    )


def chat_frame(i: int, **over: Any) -> dict[str, Any]:
    msg = {"id": f"m{i}", "content": f"hello {i}", "speaker": {}, "whisper": [], "flags": {}}
    msg.update(over)
    return {"type": "chat-event", "data": {"eventType": "create", "data": msg}}


async def test_mailbox_batches_timeouts_and_close() -> None:
    box = Mailbox(2)
    assert await box.next_batch(0.01) is None
    assert box.put(b"a") and box.put(b"b") and not box.put(b"c")
    assert await box.next_batch(1) == [b"a", b"b"]
    waiter = asyncio.ensure_future(box.next_batch(5))
    await asyncio.sleep(0)
    box.put(b"x")
    assert await waiter == [b"x"]
    box.put(b"y")
    box.close()
    assert await box.next_batch(1) == [b"y"]
    assert await box.next_batch(1) == []
    assert box.put(b"z") and len(box) == 0  # closed: ignored
    final = Mailbox(3)
    final.put(b"1")
    final.close(b"end")
    assert await final.next_batch(None) == [b"end"]


async def test_mailbox_arrival_and_take_as_the_sse_handler_reads_it() -> None:
    box = Mailbox(5)
    arrival = box.arrival()
    assert arrival is not None and not arrival.done()
    box.put(b"a")
    box.put(b"b")
    assert arrival.done() and box.arrival() is None  # something queued: no need to wait
    assert box.take() == [b"a", b"b"] and box.take() == []
    arrival = box.arrival()
    box.close()
    assert arrival is not None and arrival.done()
    assert box.arrival() is None and box.take() == []  # closed and drained: the stream ends


async def test_counts_are_announced_in_order_on_every_change() -> None:
    hub, _, world = hub_with_world(subscription_linger=0)  # no grace: 0 is told at once
    a, b = sub(), sub(kind="ws")
    r = sub(protocol.ROLL_CHANNEL)
    assert await hub.subscribe(a) is not None
    assert await hub.subscribe(b) is not None
    assert await hub.subscribe(r) is not None
    hub.unsubscribe(a)
    assert not hub.unsubscribe(a)  # idempotent, no announcement
    hub.unsubscribe(b)
    await hub.flush()
    assert world.counts() == [
        ("chat-events", 1),
        ("chat-events", 2),
        ("roll-events", 1),
        ("chat-events", 1),
        ("chat-events", 0),
    ]
    assert all(f["type"] == "event-subscription-update" for f in world.sent)


async def test_reconnected_world_gets_every_live_count_once() -> None:
    hub, registry, _ = hub_with_world()
    await hub.subscribe(sub())
    await hub.subscribe(sub())
    await hub.subscribe(sub(protocol.SCENE_CHANNEL))
    await hub.flush()
    fresh = registry.worlds["w1"] = FakeWorld()
    hub.world_connected(fresh)
    await hub.flush()
    assert fresh.counts() == [("chat-events", 2), ("scene-events", 1)]


async def test_a_returning_world_unknown_to_this_relay_hears_every_count() -> None:
    """After a relay restart nothing is known of what the world was told: all six, 0 included."""
    registry = FakeRegistry()
    hub = EventHub(registry, StreamSettings())
    await hub.subscribe(sub(protocol.ROLL_CHANNEL))  # a /ws/api client waiting for the world
    back = registry.worlds["w1"] = FakeWorld()
    back.returning = True  # type: ignore[attr-defined]
    hub.world_connected(back)
    await hub.flush()
    assert back.counts() == [(c, int(c == protocol.ROLL_CHANNEL)) for c in protocol.CHANNELS]
    new = registry.worlds["w2"] = FakeWorld("w2")  # never connected anywhere: nothing to stop
    hub.world_connected(new)
    await hub.flush()
    assert new.counts() == []
    await hub.close()


async def test_a_world_back_after_its_streams_ended_hears_0_for_them() -> None:
    """Its SSE streams ended while it was away (count 0, never told): it hears 0 on return."""
    hub, registry, world = hub_with_world(subscription_linger=0)
    stream = sub()
    await hub.subscribe(stream)
    del registry.worlds["w1"]
    hub.world_disconnected(world)
    assert stream.reason == "world-gone"
    fresh = registry.worlds["w1"] = FakeWorld()
    hub.world_connected(fresh)
    await hub.flush()
    assert fresh.counts() == [("chat-events", 0)]
    again = registry.worlds["w1"] = FakeWorld()
    hub.world_connected(again)  # told 0 already: nothing more to say
    await hub.flush()
    assert again.counts() == []
    await hub.close()


async def test_fan_out_applies_filters_and_encodes_once() -> None:
    hub, _, world = hub_with_world()
    everyone, whispers = sub(), sub(filter=EventFilter(whisper_only=True))
    ws = sub(kind="ws")
    for s in (everyone, whispers, ws):
        await hub.subscribe(s)
    hub.world_event(world, chat_frame(1))
    hub.world_event(world, chat_frame(2, whisper=["u"]))
    hub.world_event(world, {"type": "chat-event", "data": "junk"})  # dropped
    first = await everyone.mailbox.next_batch(1)
    assert first is not None and len(first) == 2
    assert first[0].startswith(b"id: 1\nevent: chat-create\ndata: {")
    assert await whispers.mailbox.next_batch(1) == [first[1]]
    assert await whispers.mailbox.next_batch(0.01) is None
    frames = [orjson.loads(f) for f in await ws.mailbox.next_batch(1) or []]
    assert [(f["type"], f["event"], f["id"]) for f in frames] == [
        ("chat-event", "chat-create", 1),
        ("chat-event", "chat-create", 2),
    ]


async def test_resume_replays_what_matches_and_announces_gaps() -> None:
    hub, _, world = hub_with_world(event_buffer_size=3)
    for i in range(1, 6):
        hub.world_event(world, chat_frame(i, whisper=["u"] if i % 2 else []))
    resume = await hub.subscribe(sub(filter=EventFilter(whisper_only=True)), last_seen=1)
    assert resume is not None
    assert resume.gap == Gap(2, 3)
    assert [e.seq for e in resume.replay] == [3, 5]
    fresh = await hub.subscribe(sub())
    assert fresh is not None and (fresh.cursor, fresh.gap, fresh.replay) == (5, None, [])


async def test_limit_per_key_world_channel_and_kind() -> None:
    hub, _, _ = hub_with_world(max_streams_per_channel=2)
    first = sub(key_id="player")
    assert await hub.subscribe(first) and await hub.subscribe(sub(key_id="player"))
    assert await hub.subscribe(sub(key_id="player")) is None
    assert await hub.subscribe(sub(key_id="gm")) is not None  # another key still gets in
    assert await hub.subscribe(sub(kind="ws", key_id="player")) is not None
    assert await hub.subscribe(sub(protocol.ROLL_CHANNEL, key_id="player")) is not None
    assert hub.count("w1", protocol.CHAT_CHANNEL) == 4
    hub.unsubscribe(first)  # a slot freed is the key's again
    assert await hub.subscribe(sub(key_id="player")) is not None
    assert await hub.subscribe(sub(key_id="player")) is None


async def test_slow_subscriber_is_cut_off_with_an_error_and_memory_stays_bounded() -> None:
    hub, _, world, clock = hub_on_clock(slow_close_grace=5)
    transport = FakeTransport()
    slow = sub(queue=3, transport=transport)
    fast = sub(queue=100)
    await hub.subscribe(slow)
    await hub.subscribe(fast)
    for i in range(10):
        hub.world_event(world, chat_frame(i))
        assert len(slow.mailbox) <= 3
    assert slow.dropped and slow.reason == "fell-behind"
    assert await slow.mailbox.next_batch(1) == [error_frame("sse", FELL_BEHIND)]
    assert await slow.mailbox.next_batch(1) == []
    assert len(await fast.mailbox.next_batch(1) or []) == 10
    clock.advance(4.9)
    assert not transport.aborted  # still within its grace
    clock.advance(0.1)
    assert transport.aborted  # never finished: its connection is cut
    await hub.flush()
    assert world.counts()[-1] == ("chat-events", 1)
    assert error_frame("sse", "x") == b'event: error\ndata: {"error":"x"}\n\n'


async def test_finished_consumer_is_not_aborted() -> None:
    hub, _, world, clock = hub_on_clock(slow_close_grace=5)
    transport = FakeTransport()
    slow = sub(queue=1, transport=transport)
    await hub.subscribe(slow)
    hub.world_event(world, chat_frame(1))
    hub.world_event(world, chat_frame(2))
    timer = slow.abort_timer
    assert timer is not None
    hub.finished(slow)
    assert isinstance(timer, FakeTimer) and timer.cancelled() and slow.abort_timer is None
    clock.advance(10)
    assert not transport.aborted


async def test_world_disconnect_ends_sse_streams_but_not_ws_or_a_replaced_world() -> None:
    hub, registry, world = hub_with_world()
    sse, ws = sub(), sub(kind="ws")
    await hub.subscribe(sse)
    await hub.subscribe(ws)
    # replaced by a reconnect: the registry already holds another connection
    registry.worlds["w1"] = FakeWorld()
    hub.world_disconnected(world)
    assert not sse.dropped
    del registry.worlds["w1"]
    hub.world_disconnected(world)
    assert sse.dropped and sse.reason == "world-gone" and sse.mailbox.closed
    assert not ws.dropped
    assert hub.count("w1", protocol.CHAT_CHANNEL) == 1


async def test_sweeper_drops_clients_that_went_away() -> None:
    hub, _, world, clock = hub_on_clock(sweep_interval=30)
    transport = FakeTransport()
    s = sub(transport=transport)
    await hub.subscribe(s)
    for _ in range(3):
        await tick(clock, 30)  # passes over a client still there
    assert not s.dropped
    transport.closing = True
    await tick(clock, 29.9)
    assert not s.dropped  # the next pass has not come
    await tick(clock, 0.1)
    assert s.dropped and s.mailbox.closed
    await hub.close()
    await hub.flush()
    assert world.counts() == [("chat-events", 1), ("chat-events", 0)]


async def test_direct_writes_keep_order_behind_queued_events() -> None:
    hub, _, world = hub_with_world()
    transport = FakeTransport()
    s = sub(transport=transport, direct=True, chunked=True)
    await hub.subscribe(s)

    def wire() -> list[bytes]:  # the ids written, from their HTTP chunks
        return [chunk.split(b"\r\n", 1)[1].split(b"\n", 1)[0] for chunk in transport.written]

    hub.world_event(world, chat_frame(1))
    assert wire() == [b"id: 1"] and len(s.mailbox) == 0  # straight to the socket
    size, rest = transport.written[0].split(b"\r\n", 1)  # one HTTP chunk: size, frame, CRLF
    assert int(size, 16) == len(rest) - 2 and rest.endswith(b"\n\n\r\n")
    transport.backlog = 1 << 20  # the socket is backed up: events queue
    hub.world_event(world, chat_frame(2))
    transport.backlog = 0
    hub.world_event(world, chat_frame(3))  # must not overtake event 2
    assert wire() == [b"id: 1"]
    queued = await s.mailbox.next_batch(1) or []
    assert [frame.split(b"\n", 1)[0] for frame in queued] == [b"id: 2", b"id: 3"]
    hub.world_event(world, chat_frame(4))  # queue drained: direct again
    assert wire() == [b"id: 1", b"id: 4"]
    transport.closing = True  # gone: queued for the handler, whose write then fails
    hub.world_event(world, chat_frame(5))
    assert wire() == [b"id: 1", b"id: 4"] and len(s.mailbox) == 1


async def test_history_of_a_world_that_stays_away_is_forgotten() -> None:
    hub, registry, world, clock = hub_on_clock(history_retention=60)
    hub.world_event(world, chat_frame(1))
    del registry.worlds["w1"]
    hub.world_disconnected(world)
    back = registry.worlds["w1"] = FakeWorld()
    clock.advance(61)
    assert hub.events.last_id("w1", protocol.CHAT_CHANNEL) == 1  # it came back in time: kept
    del registry.worlds["w1"]
    hub.world_disconnected(back)
    clock.advance(59)
    assert hub.events.last_id("w1", protocol.CHAT_CHANNEL) == 1
    clock.advance(1)
    assert hub.events.last_id("w1", protocol.CHAT_CHANNEL) == 0  # gone for good: forgotten
    await hub.close()


async def test_last_subscriber_leaving_keeps_the_channel_on_for_the_grace_period() -> None:
    hub, _, world, clock = hub_on_clock(subscription_linger=10)
    first = sub()
    await hub.subscribe(first)
    hub.finished(first)
    assert hub.count("w1", protocol.CHAT_CHANNEL) == 0
    assert hub.lingering("w1", protocol.CHAT_CHANNEL)
    assert hub.announced_count("w1", protocol.CHAT_CHANNEL) == 1
    for i in range(1, 4):  # the world keeps emitting; the hub keeps logging
        hub.world_event(world, chat_frame(i))
    back = sub()
    resume = await hub.subscribe(back, last_seen=0)
    assert resume is not None and [e.seq for e in resume.replay] == [1, 2, 3]
    assert not hub.lingering("w1", protocol.CHAT_CHANNEL)
    clock.advance(15)  # the cancelled 0 never comes
    await hub.flush()
    assert world.counts() == [("chat-events", 1)]  # the world saw 1 all along, told once

    hub.finished(back)
    await hub.flush()
    assert world.counts() == [("chat-events", 1)]
    clock.advance(9.9)
    await hub.flush()
    assert world.counts() == [("chat-events", 1)]  # still lingering
    clock.advance(0.1)
    await hub.flush()
    assert world.counts() == [("chat-events", 1), ("chat-events", 0)]
    assert not hub.lingering("w1", protocol.CHAT_CHANNEL)
    assert hub.announced_count("w1", protocol.CHAT_CHANNEL) == 0


async def test_real_counts_above_one_are_told_while_lingering_is_only_at_zero() -> None:
    hub, _, world, clock = hub_on_clock(subscription_linger=10)
    a, b, c = sub(), sub(kind="ws"), sub()
    await hub.subscribe(a)
    await hub.subscribe(b)
    hub.finished(a)
    hub.finished(b)  # lingers at 1
    await hub.subscribe(c)  # real 1: nothing new to tell
    await hub.subscribe(a := sub())  # real 2
    hub.finished(a)
    hub.finished(c)
    clock.advance(10)
    await hub.flush()
    assert [n for _, n in world.counts()] == [1, 2, 1, 2, 1, 0]


async def test_a_world_reconnecting_while_a_channel_lingers_hears_1_then_0() -> None:
    hub, registry, world, clock = hub_on_clock(subscription_linger=10)
    only = sub(protocol.SCENE_CHANNEL)
    await hub.subscribe(only)
    hub.finished(only)
    del registry.worlds["w1"]
    hub.world_disconnected(world)
    fresh = registry.worlds["w1"] = FakeWorld()
    hub.world_connected(fresh)
    await hub.flush()
    assert fresh.counts() == [("scene-events", 1)]
    clock.advance(10)
    await hub.flush()
    assert fresh.counts() == [("scene-events", 1), ("scene-events", 0)]
    await hub.close()


async def test_world_disconnect_lingers_its_sse_channels_for_their_clients_return() -> None:
    hub, registry, world = hub_with_world(subscription_linger=5)
    stream = sub()
    await hub.subscribe(stream)
    del registry.worlds["w1"]
    hub.world_disconnected(world)
    assert stream.reason == "world-gone" and hub.lingering("w1", protocol.CHAT_CHANNEL)
    fresh = registry.worlds["w1"] = FakeWorld()
    hub.world_connected(fresh)  # the world is back before its SSE client: the channel is on
    await hub.flush()
    assert fresh.counts() == [("chat-events", 1)]
    await hub.close()


async def test_no_linger_when_disabled_and_shutdown_ends_lingering_with_0() -> None:
    hub, _, world = hub_with_world(subscription_linger=0)
    s = sub()
    await hub.subscribe(s)
    hub.finished(s)
    assert not hub.lingering("w1", protocol.CHAT_CHANNEL)
    await hub.flush()
    assert world.counts() == [("chat-events", 1), ("chat-events", 0)]

    hub, _, world = hub_with_world(subscription_linger=60)
    s, r = sub(), sub(protocol.ROLL_CHANNEL)
    await hub.subscribe(s)
    await hub.subscribe(r)
    hub.finished(s)  # lingers
    await hub.close()  # r ends too; no channel may stay on for a relay that stops
    assert world.counts() == [
        ("chat-events", 1),
        ("roll-events", 1),
        ("roll-events", 0),
        ("chat-events", 0),
    ]
    assert not hub.lingering("w1", protocol.CHAT_CHANNEL)


def test_linger_comes_from_the_relay_config() -> None:
    assert settings_from(RelayConfig()).subscription_linger == 30.0
    assert settings_from(RelayConfig(subscription_linger=2.5)).subscription_linger == 2.5
    assert StreamSettings().subscription_linger == 30.0


async def test_one_timer_sends_every_stream_its_keepalive_comment_each_interval() -> None:
    hub, _, _ = hub_with_world(keepalive_interval=15.0)
    keepalives = hub.keepalives
    quiet, backed_up, busy, plain = (FakeTransport() for _ in range(4))
    streams = [
        sub(transport=quiet, direct=True, chunked=True),
        sub(transport=backed_up, direct=True, chunked=True),
        sub(transport=busy, direct=True, chunked=True),
        sub(transport=plain, direct=True),  # an HTTP/1.0 client: no chunks
    ]
    for s in streams:
        await hub.subscribe(s)
        keepalives.enqueue(s, 100.0)  # their first frames went out at t = 100 s
    assert len(keepalives) == 4
    backed_up.backlog = 1 << 20
    streams[2].mailbox.put(b"queued event")  # events waiting: no comment before them
    assert keepalives.send_due(114.9) == 115.0  # not before the interval
    assert quiet.written == []
    assert keepalives.send_due(115.0) == 130.0
    assert quiet.written == [b"d\r\n: keepalive\n\n\r\n"]
    assert plain.written == [b": keepalive\n\n"]
    assert backed_up.written == [] and streams[1].mailbox.items == [b": keepalive\n\n"]
    assert busy.written == [] and streams[2].mailbox.items == [b"queued event"]
    assert keepalives.send_due(130.0) == 145.0
    assert len(quiet.written) == 2  # and again, one interval later
    hub.finished(streams[0])  # a stream that ended leaves at its next turn
    keepalives.send_due(145.0)
    assert len(quiet.written) == 2 and len(keepalives) == 3
    await hub.close()
    assert len(keepalives) == 0


async def test_keepalives_arm_one_timer_for_the_first_stream_due() -> None:
    hub, _, _ = hub_with_world(keepalive_interval=15.0)
    first, second = sub(transport=FakeTransport()), sub(transport=FakeTransport())
    hub.keepalives.add(first)
    timer = hub.keepalives._timer
    assert timer is not None
    hub.keepalives.add(second)
    assert hub.keepalives._timer is timer  # one timer, however many streams
    loop = asyncio.get_running_loop()
    assert 14.0 < timer.when() - loop.time() <= 15.0
    await hub.close()
    assert timer.cancelled()


async def test_sweeper_checks_each_key_once_per_pass_and_refuses_its_streams() -> None:
    checked: list[str] = []
    revoked = {"old"}

    def key_problem(secret: str) -> str | None:
        checked.append(secret)
        return "API key revoked" if secret in revoked else None

    registry = FakeRegistry()
    world = registry.worlds["w1"] = FakeWorld()
    clock = FakeClock()
    settings = StreamSettings(sweep_interval=30, key_check_interval=60)
    hub = EventHub(registry, settings, key_problem=key_problem, later=clock.call_later, clock=clock)
    olds = [sub(secret="old", key_id=f"k{i}") for i in range(3)]
    new = sub(secret="new")
    for s in [*olds, new]:
        await hub.subscribe(s)
    await tick(clock, 30)
    assert checked == [] and not olds[0].dropped  # a pass, but no key check due yet
    await tick(clock, 30)
    assert all(s.dropped and s.reason == "refused" for s in olds)
    assert await olds[0].mailbox.next_batch(1) == [error_frame("sse", "API key revoked")]
    assert not new.dropped
    assert checked[:2] == ["old", "new"]  # one check per key in a pass, not per stream
    await hub.close()
    await hub.flush()
    assert world.counts()[-1] == ("chat-events", 0)
