"""Event streams: SSE subscriptions and /ws/api subscriptions, their counts, history and fan-out.

`EventHub` is the I/O-light core: it keeps, per world and channel, the subscribers (bounded
mailboxes), the replay log (a `backends.EventLog`) and the subscriber count it announces to the
world with `event-subscription-update` (on every change, and again when the world reconnects). It
implements the registry's `WorldListener`: a world's event frame is unwrapped and named once
(`events.unwrap`), logged, and put into the mailbox of every subscriber whose filter matches. A
subscriber that does not keep up overflows its mailbox and is cut off with an error event, so the
relay's memory stays bounded.

Lingering: when the last subscriber of a channel leaves, the world is not told `count: 0` at once.
The channel stays on for `subscription_linger` seconds (the world keeps seeing `count: 1`, and the
hub keeps logging its events), so a client that reconnects with `Last-Event-ID` within that time
gets what it missed. A subscriber that comes back cancels the pending 0; the world always sees
the real count when there are subscribers. In short, the world is told `max(real, 1)` while a
channel lingers, `real` otherwise.

`Streams` adds the HTTP side: `handle_sse` serves the six `*/subscribe` routes and
`handle_client_ws` hands `/ws/api` to `client_ws.ClientSocket`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from aiohttp import web

from vttrelay import protocol
from vttrelay.relay import core
from vttrelay.relay.backends.base import Counters
from vttrelay.relay.backends.base import EventLog as EventLogBackend
from vttrelay.relay.backends.local import LocalCounters, LocalEventLog
from vttrelay.relay.events.model import (
    SSE_KEEPALIVE,
    EventFilter,
    LoggedEvent,
    MessageIndex,
    Resume,
    dumps,
    parse_last_event_id,
    sse_frame,
    unwrap,
)
from vttrelay.relay.forward import API_KEY_HEADER, CORS_HEADERS, admit_request, read_params
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.app import RelayState
    from vttrelay.relay.events.ws_api import ClientSocket

log = logging.getLogger("vttrelay.relay.events.hub")

TOO_MANY: Final = "Too many SSE connections"
FELL_BEHIND: Final = (
    "Subscriber fell behind: too many undelivered events; reconnect with Last-Event-ID"
)

Kind = Literal["sse", "ws"]

SWEEP_SLICE: Final = 1000  # subscribers the sweeper checks before it yields to the loop


@dataclass
class StreamSettings:
    """Limits and intervals of the event streams.

    `settings_from` takes the fields a RelayConfig carries (keepalive, buffer size, stream limit,
    queue size, linger); the others keep these defaults (tests change them on `hub.settings`).
    """

    keepalive_interval: float = 15.0  # seconds between `: keepalive` comments
    event_buffer_size: int = 1000  # events kept per world and channel for Last-Event-ID replay
    event_buffer_bytes: int = 8 * 1024 * 1024  # and at most about this much of their JSON
    history_retention: float = 600.0  # seconds a gone world's history is kept for its return
    max_streams_per_channel: int = 10  # per API key, world, channel and kind (SSE or /ws/api)
    subscriber_queue_size: int = 1000  # undelivered events a subscriber may have before it is cut
    subscription_linger: float = 30.0  # seconds a channel stays on after its last sub; 0: off
    slow_close_grace: float = 5.0  # seconds a cut-off subscriber gets to take its error event
    sweep_interval: float = 1.0  # seconds between checks for SSE clients that went away
    key_check_interval: float = 5.0  # seconds between checks that open streams' keys still work
    message_memory: int = 2000  # chat messages remembered per world to filter their deletes


class WorldLike(Protocol):
    """What the hub needs of a connected world (worlds.WorldConnection)."""

    client_id: str

    async def send(self, frame: dict[str, Any]) -> None: ...


class RegistryLike(Protocol):
    """What the hub needs of the registry of worlds (backends.WorldDirectory)."""

    def get(self, client_id: str) -> Any: ...


class Mailbox:
    """A bounded queue of encoded frames for one consumer, read in batches.

    `put` refuses (returns False) when full; `close` ends the mailbox after what is queued, or
    replaces what is queued by a final frame. `items` is what is queued (read-only outside).
    """

    __slots__ = ("capacity", "closed", "items", "_waiter")

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self.closed = False
        # A list, not a deque: an empty list holds no item storage, an empty deque a 64-slot
        # block (~700 B per stream, 10,000 idle SSE streams: -7 MiB RSS; bench/RESULTS.md).
        # It is emptied whole by each batch, so appending is all it does.
        self.items: list[bytes] = []
        self._waiter: asyncio.Future[None] | None = None

    def __len__(self) -> int:
        return len(self.items)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def put(self, item: bytes) -> bool:
        if self.closed:
            return True
        if len(self.items) >= self.capacity:
            return False
        self.items.append(item)
        self._wake()
        return True

    def close(self, final: bytes | None = None) -> None:
        """No more items. With `final`, drop what is queued and deliver only `final`."""
        if self.closed:
            return
        self.closed = True
        if final is not None:
            self.items = [final]
        self._wake()

    def arrival(self) -> asyncio.Future[None] | None:
        """A future done when something is queued or the mailbox closes (None: it is already).
        One consumer at a time."""
        if self.items or self.closed:
            return None
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    def take(self) -> list[bytes]:
        """Everything queued, in order ([] once closed and drained)."""
        items = self.items
        self.items = []
        return items

    async def next_batch(self, timeout: float | None) -> list[bytes] | None:
        """Everything queued, in order; None after `timeout` seconds with nothing; [] once
        closed and drained."""
        waiter = self.arrival()
        if waiter is not None:
            handle = (
                asyncio.get_running_loop().call_later(timeout, _wake_future, waiter)
                if timeout
                else None
            )
            try:
                await waiter
            finally:
                if handle is not None:
                    handle.cancel()
                if self._waiter is waiter:
                    self._waiter = None
            if not self.items and not self.closed:
                return None
        return self.take()


def _wake_future(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class TransportLike(Protocol):
    """What the hub uses of an SSE stream's connection (an asyncio transport)."""

    def is_closing(self) -> bool: ...

    def get_write_buffer_size(self) -> int: ...

    def write(self, data: bytes) -> None: ...

    def abort(self) -> None: ...


@dataclass(eq=False, slots=True)
class Subscriber:
    """One subscription: a world, a channel, a filter and where matching events go.

    Plain fields rather than callbacks per stream (the hub reads the transport, the secret):
    with 10,000 idle SSE streams each closure is ~0.2 KiB of RSS (bench/RESULTS.md).
    """

    client_id: str
    channel: str
    filter: EventFilter
    kind: Kind
    mailbox: Mailbox
    # the API key's id: stream slots are counted per key, so one key cannot take them all
    key_id: str = ""
    # called when the subscriber overflows its mailbox (after the hub has dropped it)
    on_overflow: Callable[[Subscriber], None] | None = None
    # called with the reason when its key stopped working (after the hub has dropped it);
    # without it, the mailbox ends with the error
    on_refused: Callable[[str], None] | None = None
    # the API key it listens with: the hub's sweeper checks it still works (`key_problem`)
    secret: str = ""
    # for SSE: the HTTP connection. The sweeper ends the stream once it is closing (aiohttp
    # does not always tell), and cuts it when a cut-off subscriber does not take its error
    transport: TransportLike | None = None
    # for SSE: True once the stream's first frames are out: events and keep-alive comments are
    # then written straight to `transport` when nothing is queued before them and the socket
    # keeps up (`chunked`: as HTTP/1.1 chunks, as the response was prepared)
    direct: bool = False
    chunked: bool = False
    dropped: bool = False
    # why the hub dropped it: "gone", "world-gone", "fell-behind", "refused" or "shutdown"
    reason: str | None = None
    done: bool = False  # its consumer has returned
    # the newest event id its replay covered: a shared log's snapshot can run ahead of the
    # events still on their way to this instance, which must not be delivered twice (0: none)
    covered: int = 0
    abort_timer: asyncio.TimerHandle | None = field(default=None, repr=False)
    # its filter lets every event of its channel through (decided once, skips `matches`)
    everything: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.everything = self.filter == EVERYTHING

    def encode(self, logged: LoggedEvent) -> bytes:
        return logged.sse if self.kind == "sse" else logged.ws

    def write_now(self, data: bytes, chunk: bytes) -> bool:
        """Write an SSE frame (`chunk`: the same as one HTTP chunk) straight to the socket when
        nothing is queued before it and the socket keeps up; False: it must be queued."""
        transport = self.transport
        if (
            not self.direct
            or self.mailbox.items
            or transport is None
            or transport.is_closing()
            or transport.get_write_buffer_size() > DIRECT_WRITE_LIMIT
        ):
            return False
        transport.write(chunk if self.chunked else data)
        return True


EVERYTHING: Final = EventFilter()  # the filter of a subscriber that asked for no filter

# A socket whose unsent bytes exceed this gets its events through the mailbox, whose writer
# waits for the socket to drain (aiohttp's own limit before it drains).
DIRECT_WRITE_LIMIT: Final = 64 * 1024
KEEPALIVE_CHUNK: Final = b"%x\r\n" % len(SSE_KEEPALIVE) + SSE_KEEPALIVE + b"\r\n"


class Keepalives:
    """One timer for the `: keepalive` comments of every SSE stream, instead of one per stream.

    A stream gets a comment every `interval()` seconds from the moment its first frames are out
    (as the reference relay's ticker does). Every stream waits the same interval, so the streams
    due next are always at the front of one FIFO: a tick pops those that are due, writes their
    comment and puts them back at the end. Per stream that is one queue entry instead of a
    TimerHandle, a future and a libuv timer re-armed every 15 s (~0.5 KiB each with 10,000 idle
    streams; bench/RESULTS.md). A tick writes at most `BATCH` comments, then yields to the loop.
    """

    BATCH: Final = 500

    def __init__(self, interval: Callable[[], float], send: Callable[[Subscriber], None]) -> None:
        self.interval = interval
        self.send = send
        self._queue: deque[tuple[float, Subscriber]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, sub: Subscriber) -> None:
        """Start the comments of a stream (dropped ones leave at their next turn)."""
        loop = asyncio.get_running_loop()
        self._queue.append((loop.time() + self.interval(), sub))
        if self._timer is None:
            self._timer = loop.call_at(self._queue[0][0], self._tick)

    def _tick(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        queue = self._queue
        due = now + self.interval()
        for _ in range(self.BATCH):
            if not queue or queue[0][0] > now:
                break
            _, sub = queue.popleft()
            if not sub.dropped:
                self.send(sub)
                queue.append((due, sub))
        if queue:
            self._timer = loop.call_at(queue[0][0], self._tick)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queue.clear()


class EventHub:
    """Subscribers, counts and replay logs per (world, channel); a registry `WorldListener`."""

    def __init__(
        self,
        registry: RegistryLike,
        settings: StreamSettings | None = None,
        events: EventLogBackend | None = None,
        counters: Counters | None = None,
        key_problem: Callable[[str], str | None] | None = None,
    ) -> None:
        self.registry = registry
        # why an API key no longer works (None: it does); the sweeper asks it of the secrets
        # of open streams every `key_check_interval`
        self.key_problem = key_problem
        self.settings = settings = settings or StreamSettings()
        # the replay history and the events of other instances (backends.EventLog)
        self.events: EventLogBackend = events or LocalEventLog(
            settings.event_buffer_size, settings.event_buffer_bytes
        )
        self.events.bind(self.deliver)
        # the subscriber counts over all instances (backends.Counters)
        self.counters: Counters = counters or LocalCounters()
        self.counters.bind(self)
        self._subs: dict[tuple[str, str], list[Subscriber]] = {}
        # subscribers waiting for their replay snapshot, with the live events meanwhile
        self._joining: dict[tuple[str, str], list[tuple[Subscriber, list[LoggedEvent]]]] = {}
        # subscribers per (world, channel, kind), kept on (un)subscribe: no recount per open
        self._kind_counts: dict[tuple[str, str, str], int] = {}
        # and per (world, channel, kind, key): the limit holds per key
        self._key_counts: dict[tuple[str, str, str, str], int] = {}
        self._messages: dict[str, MessageIndex] = {}
        self._sending: dict[str, asyncio.Future[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()  # abort timers of cut-off subscribers
        self._forgetting: dict[str, asyncio.TimerHandle] = {}  # gone worlds' history, by id
        self._lingering: dict[tuple[str, str], asyncio.TimerHandle] = {}  # pending `count: 0`s
        self._told: dict[tuple[str, str], int] = {}  # the count each world last got
        self.keepalives = Keepalives(lambda: self.settings.keepalive_interval, _keepalive)
        self._closing = False

    # Inspection ---------------------------------------------------------------------------------

    def count(self, client_id: str, channel: str, kind: Kind | None = None) -> int:
        """Subscribers of a world's channel (of one kind, or all)."""
        if kind is not None:
            return self._kind_counts.get((client_id, channel, kind), 0)
        key = (client_id, channel)
        return len(self._subs.get(key, ())) + len(self._joining.get(key, ()))

    def announced_count(self, client_id: str, channel: str) -> int:
        """The count the world is told: the real one, or 1 while the channel lingers."""
        real = self.count(client_id, channel)
        return 1 if real == 0 and (client_id, channel) in self._lingering else real

    def lingering(self, client_id: str, channel: str) -> bool:
        """Whether a channel without subscribers is still kept on for a returning one."""
        return (client_id, channel) in self._lingering

    def subscribers(self, client_id: str | None = None) -> list[Subscriber]:
        """Every subscriber (of one world, or of all)."""
        found = [
            s for (cid, _), subs in self._subs.items() if client_id in (None, cid) for s in subs
        ]
        for (cid, _), joining in self._joining.items():
            if client_id in (None, cid):
                found.extend(s for s, _ in joining)
        return found

    # Subscribing --------------------------------------------------------------------------------

    async def subscribe(self, sub: Subscriber, last_seen: int | None = None) -> Resume | None:
        """Add a subscriber unless its key holds `max_streams_per_channel` of this world,
        channel and kind already (then None).

        Returns where it resumes: from `last_seen` (a Last-Event-ID) with the events it missed,
        or from now. Until the log's snapshot is known (in-process: at once, with no await; a
        shared log: one round trip) the live events it would get are kept aside, then those the
        snapshot does not cover are added to its replay: nothing is delivered twice or lost in
        between. The caller queues the replay before its next await.
        """
        per_key = (sub.client_id, sub.channel, sub.kind, sub.key_id)
        if self._key_counts.get(per_key, 0) >= self.settings.max_streams_per_channel:
            return None
        key = (sub.client_id, sub.channel)
        live: list[LoggedEvent] = []
        joining = self._joining.setdefault(key, [])
        joining.append((sub, live))
        counted = (sub.client_id, sub.channel, sub.kind)
        self._kind_counts[counted] = self._kind_counts.get(counted, 0) + 1
        self._key_counts[per_key] = self._key_counts.get(per_key, 0) + 1
        self._stop_lingering(key)
        self._announce(sub.client_id, sub.channel)
        if self._watched(sub):
            self._ensure_sweeper()
        try:
            resume = await self.events.resume(sub.client_id, sub.channel, last_seen)
        except BaseException:
            self.unsubscribe(sub, "gone")
            raise
        if not _remove_joining(joining, sub):
            return resume  # dropped meanwhile (its world left, the relay stops...)
        if not joining:
            del self._joining[key]
        self._subs.setdefault(key, []).append(sub)
        newest = resume.newest
        matches = sub.filter.matches
        resume.replay = [e for e in resume.replay if matches(e.event)]
        resume.replay.extend(e for e in live if e.seq > newest and matches(e.event))
        sub.covered = max(newest, live[-1].seq) if live else newest
        return resume

    def unsubscribe(self, sub: Subscriber, reason: str = "gone") -> bool:
        """Remove a subscriber (idempotent); announces the new count when it changed.

        The last subscriber's leaving starts the channel's linger instead of announcing 0.
        """
        key = (sub.client_id, sub.channel)
        subs = self._subs.get(key)
        if subs and sub in subs:
            subs.remove(sub)
            if not subs:
                del self._subs[key]
        else:
            joining = self._joining.get(key)
            if not joining or not _remove_joining(joining, sub):
                return False
            if not joining:
                del self._joining[key]
        _decrement(self._kind_counts, (sub.client_id, sub.channel, sub.kind))
        _decrement(self._key_counts, (sub.client_id, sub.channel, sub.kind, sub.key_id))
        if key not in self._subs and key not in self._joining:
            self.events.unlisten(*key)
            self._start_lingering(key)
        sub.dropped = True
        sub.reason = sub.reason or reason
        self._announce(sub.client_id, sub.channel)
        return True

    # Counting -----------------------------------------------------------------------------------

    def _announce(self, client_id: str, channel: str) -> None:
        """Report this instance's share of a channel's count (its subscribers, and whether it
        lingers here); the instance holding the world tells it the total (`total_changed`)."""
        key = (client_id, channel)
        self.counters.report(
            client_id, channel, self.count(client_id, channel), key in self._lingering
        )

    def total_changed(self, client_id: str, channel: str, count: int, lingering: bool) -> None:
        """Tell a world held here its channel's count over all instances, if it differs from
        what it was last told: the real count, or 1 while the channel lingers somewhere."""
        world = self.registry.get(client_id)
        if world is None or getattr(world, "instance_id", None) is not None:
            return
        key = (client_id, channel)
        told = 1 if count == 0 and lingering else count
        if self._told.get(key, 0) == told:
            return
        self._told[key] = told
        self._send(world, {"type": protocol.SUBSCRIPTION_UPDATE, "channel": channel, "count": told})

    def _start_lingering(self, key: tuple[str, str]) -> None:
        """Keep a channel that just lost its last subscriber on for `subscription_linger`."""
        linger = self.settings.subscription_linger
        if linger <= 0 or self._closing or key in self._lingering:
            return
        loop = asyncio.get_running_loop()
        self._lingering[key] = loop.call_later(linger, self._linger_over, key)

    def _stop_lingering(self, key: tuple[str, str]) -> None:
        handle = self._lingering.pop(key, None)
        if handle is not None:
            handle.cancel()

    def _linger_over(self, key: tuple[str, str]) -> None:
        """Nobody came back in time: the world is told the real count (0)."""
        self._lingering.pop(key, None)
        self._announce(*key)

    def _send(self, world: WorldLike, frame: dict[str, Any]) -> None:
        """Send a frame to a world after the ones sent before it (counts must not reorder)."""
        client_id = world.client_id
        previous = self._sending.get(client_id)
        task = asyncio.ensure_future(_send_after(previous, world, frame))
        self._sending[client_id] = task

        def done(finished: asyncio.Future[None]) -> None:
            if self._sending.get(client_id) is finished:
                del self._sending[client_id]

        task.add_done_callback(done)

    async def flush(self) -> None:
        """Wait until every frame queued for the worlds has been sent (tests, shutdown)."""
        while self._sending:
            await asyncio.gather(*self._sending.values(), return_exceptions=True)

    # WorldListener ------------------------------------------------------------------------------

    def world_connected(self, world: Any) -> None:
        """Watch a (re)connected world's counts: `totals_known` tells it every channel that is
        on, and 0 for every channel it may still be sending (the module keeps its channels on
        across reconnects)."""
        self.counters.watch(world.client_id)

    def totals_known(self, client_id: str, totals: Mapping[str, tuple[int, bool]]) -> None:
        """A world held here and its counts over all instances (channel -> (count, lingering);
        a channel not named has none).

        What the world last heard is kept across its reconnects (`_told`). When this relay never
        told it anything (its first connection since the relay started, or after its history was
        forgotten) and the store says it connected before (`world.returning`), it may be sending
        any channel a relay before a restart or crash switched on: every channel is told, zeros
        included. A world that never connected anywhere is told only the live channels.
        """
        world = self.registry.get(client_id)
        if world is None or getattr(world, "instance_id", None) is not None:
            return
        unknown = bool(getattr(world, "returning", False)) and not any(
            k[0] == client_id for k in self._told
        )
        for channel in protocol.CHANNELS:
            key = (client_id, channel)
            real, lingering = totals.get(channel, (0, False))
            count = 1 if real == 0 and lingering else real
            heard = None if unknown else self._told.get(key, 0)
            self._told[key] = count
            if count or heard != 0:
                self._send(
                    world,
                    {"type": protocol.SUBSCRIPTION_UPDATE, "channel": channel, "count": count},
                )

    def world_disconnected(self, world: Any) -> None:
        """End the SSE streams of a world that went away (they end after what is queued).

        /ws/api subscriptions stay: they resume when the world comes back.
        """
        current = self.registry.get(world.client_id)
        if current is not None and current is not world:
            return  # replaced by a reconnect: its streams live on
        self.counters.unwatch(world.client_id)
        # `_told` stays: what the world last heard decides what it is told when it comes back
        for sub in self.subscribers(world.client_id):
            if sub.kind == "sse":
                self.unsubscribe(sub, "world-gone")
                sub.mailbox.close()
        previous = self._forgetting.pop(world.client_id, None)
        if previous is not None:
            previous.cancel()
        loop = asyncio.get_running_loop()
        self._forgetting[world.client_id] = loop.call_later(
            self.settings.history_retention, self._forget, world.client_id
        )

    def _forget_told(self, client_id: str) -> None:
        for key in [k for k in self._told if k[0] == client_id]:
            del self._told[key]

    def _forget(self, client_id: str) -> None:
        """Drop the history of a world that did not come back (nor kept any subscriber)."""
        self._forgetting.pop(client_id, None)
        if self.registry.get(client_id) is not None or self.subscribers(client_id):
            return
        self.events.forget(client_id)
        self._forget_told(client_id)
        self._messages.pop(client_id, None)

    def world_event(self, world: Any, frame: dict[str, Any]) -> None:
        """Name and log one event frame of a world held here; the log hands it to `deliver`."""
        event = unwrap(frame)
        if event is None:
            log.debug("world %s sent a malformed %r: dropped", world.client_id, frame.get("type"))
            return
        client_id = world.client_id
        if event.channel == protocol.CHAT_CHANNEL:
            index = self._messages.get(client_id)
            if index is None:
                index = self._messages[client_id] = MessageIndex(self.settings.message_memory)
            event = index.observe(event)
        self.events.append(client_id, event)

    def deliver(self, client_id: str, logged: LoggedEvent) -> None:
        """Fan one logged event (of a world here or on another instance) out to the mailbox of
        every subscriber whose filter matches; the log calls it in order, once per event."""
        event = logged.event
        key = (client_id, event.channel)
        joining = self._joining.get(key)
        if joining:
            for _, live in joining:
                live.append(logged)
        subs = self._subs.get(key)
        if not subs:
            return
        overflowed: list[Subscriber] = []
        for sub in subs:
            if sub.covered:
                if logged.seq <= sub.covered:
                    continue  # already in its replay
                sub.covered = 0  # caught up: the log's order holds from here on
            if not sub.everything and not sub.filter.matches(event):
                continue
            if sub.direct and sub.write_now(logged.sse, logged.sse_chunk):
                continue
            if not sub.mailbox.put(sub.encode(logged)):
                overflowed.append(sub)
        for sub in overflowed:
            self._overflow(sub)

    # Faults -------------------------------------------------------------------------------------

    def _overflow(self, sub: Subscriber) -> None:
        log.info(
            "subscriber of %s/%s fell behind (%d queued): cutting it off",
            sub.client_id,
            sub.channel,
            len(sub.mailbox),
        )
        self.unsubscribe(sub, "fell-behind")
        if sub.on_overflow is not None:
            sub.on_overflow(sub)
        else:
            sub.mailbox.close(error_frame(sub.kind, FELL_BEHIND))
        if sub.transport is not None and not sub.done:
            loop = asyncio.get_running_loop()
            handle = loop.call_later(self.settings.slow_close_grace, self._abort, sub)
            self._timers.add(handle)
            sub.abort_timer = handle

    def _abort(self, sub: Subscriber) -> None:
        """A cut-off subscriber did not take its error event in time: cut its connection."""
        if sub.abort_timer is not None:
            self._timers.discard(sub.abort_timer)
            sub.abort_timer = None
        if sub.transport is not None and not sub.done:
            log.info("subscriber of %s/%s did not take its error event: aborting", *_key(sub))
            sub.transport.abort()

    def finished(self, sub: Subscriber) -> None:
        """The consumer of a subscriber is done (its handler returned)."""
        sub.done = True
        sub.transport = None  # nothing more to write or cut (its keep-alive turn may be pending)
        if sub.abort_timer is not None:
            sub.abort_timer.cancel()
            self._timers.discard(sub.abort_timer)
            sub.abort_timer = None
        self.unsubscribe(sub)

    def _watched(self, sub: Subscriber) -> bool:
        """Whether the sweeper looks after this subscriber (its connection, its key)."""
        return sub.transport is not None or (bool(sub.secret) and self.key_problem is not None)

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.ensure_future(self._sweep())

    async def _sweep(self) -> None:
        """End subscriptions whose HTTP client went away (aiohttp does not always tell), and,
        every `key_check_interval`, those whose key no longer works (SSE and /ws/api alike).

        Each key is checked once per pass, however many streams use it, and a pass yields to
        the loop every `SWEEP_SLICE` subscribers: with 10,000 streams a pass is a few ms of CPU,
        which must not hold up the requests meanwhile."""
        loop = asyncio.get_running_loop()
        next_key_check = loop.time() + self.settings.key_check_interval
        while True:
            await asyncio.sleep(self.settings.sweep_interval)
            watched = [s for s in self.subscribers() if self._watched(s)]
            if not watched:
                return
            key_problem = self.key_problem
            if loop.time() < next_key_check:
                key_problem = None
            elif key_problem is not None:
                next_key_check = loop.time() + self.settings.key_check_interval
            problems: dict[str, str | None] = {}
            for index, sub in enumerate(watched):
                if index and not index % SWEEP_SLICE:
                    await asyncio.sleep(0)
                if sub.dropped:  # gone meanwhile, or an earlier one's refusal ended its socket
                    continue
                transport = sub.transport
                if transport is not None and transport.is_closing():
                    self.unsubscribe(sub, "gone")
                    sub.mailbox.close()
                elif key_problem is not None and sub.secret:
                    if sub.secret not in problems:
                        problems[sub.secret] = key_problem(sub.secret)
                    if reason := problems[sub.secret]:
                        self.refuse(sub, reason)

    def refuse(self, sub: Subscriber, reason: str) -> None:
        """Drop a subscriber whose key no longer works, telling it why."""
        self.unsubscribe(sub, "refused")
        if sub.on_refused is not None:
            sub.on_refused(reason)
        else:
            sub.mailbox.close(error_frame(sub.kind, reason))

    async def close(self) -> None:
        """Stop the sweeper and timers; end every stream; tell the worlds 0 (relay shutdown)."""
        self._closing = True
        self.keepalives.close()
        for sub in self.subscribers():
            self.unsubscribe(sub, "shutdown")
            sub.mailbox.close()
        for key in list(self._lingering):
            self._stop_lingering(key)
            self._announce(*key)
        for handle in [*self._timers, *self._forgetting.values()]:
            handle.cancel()
        self._timers.clear()
        self._forgetting.clear()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), timeout=1.0)


def _remove_joining(joining: list[tuple[Subscriber, list[LoggedEvent]]], sub: Subscriber) -> bool:
    for i, (waiting, _) in enumerate(joining):
        if waiting is sub:
            del joining[i]
            return True
    return False


def _decrement(counts: dict[Any, int], key: Any) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]


def _key(sub: Subscriber) -> tuple[str, str]:
    return sub.client_id, sub.channel


def _keepalive(sub: Subscriber) -> None:
    """A stream's `: keepalive` comment: straight to its socket, or after what it has queued
    unless events are waiting there anyway (a slow client: the queue's writer drains first)."""
    if not sub.mailbox.items and not sub.write_now(SSE_KEEPALIVE, KEEPALIVE_CHUNK):
        sub.mailbox.put(SSE_KEEPALIVE)


async def _send_after(
    previous: asyncio.Future[None] | None, world: WorldLike, frame: dict[str, Any]
) -> None:
    if previous is not None and not previous.done():
        await asyncio.wait([previous])
    try:
        await world.send(frame)
    except Exception as exc:  # the world went away: it gets the counts again when it is back
        log.debug("could not send %s to %s: %r", frame.get("type"), world.client_id, exc)


def error_frame(kind: Kind, message: str) -> bytes:
    """The error a stream ends with: an SSE `event: error` or a /ws/api error frame."""
    if kind == "sse":
        return sse_frame("error", dumps({"error": message}))
    return dumps({"type": "error", "error": message})


# The HTTP side -----------------------------------------------------------------------------------

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
    **CORS_HEADERS,
}


def settings_from(config: Any) -> StreamSettings:
    """StreamSettings from a RelayConfig (any field it lacks keeps its default)."""
    defaults = StreamSettings()
    return StreamSettings(
        **{
            name: getattr(config, name, getattr(defaults, name))
            for name in StreamSettings.__dataclass_fields__
        }
    )


def connected_data(route_channel: str, client_id: str, params: dict[str, Any]) -> dict[str, Any]:
    """The `connected` event's data (the actor stream also names its filter)."""
    if route_channel == protocol.ACTOR_CHANNEL:  # keys in the reference relay's (sorted) order
        return {"actorUuid": params.get("actorUuid") or "", "clientId": client_id}
    return {"clientId": client_id}


def resume_frames(resume: Resume, connected: dict[str, Any]) -> bytes:
    """What a new SSE stream starts with: `connected`, a `gap` if any, the replayed events.

    `connected` and `gap` carry the position the stream resumes from as their id, so a client
    that reconnects before any event still tells the relay where it was.
    """
    parts = [sse_frame("connected", dumps(connected), resume.cursor)]
    if resume.gap is not None:
        parts.append(sse_frame("gap", dumps(resume.gap.as_json()), resume.cursor))
    parts.extend(e.sse for e in resume.replay)
    return b"".join(parts)


class Streams:
    """The relay's event streams: the six SSE routes and /ws/api, over one `EventHub`.

    Registered as a listener of the world registry (it forwards to the hub).
    """

    def __init__(self, state: RelayState) -> None:
        self.state = state
        self.settings = settings_from(state.config)
        self.hub = EventHub(
            state.registry,
            self.settings,
            state.backends.events,
            state.backends.counters,
            key_problem=lambda secret: key_refused(state, secret),
        )
        self.sockets: set[ClientSocket] = set()  # open /ws/api connections

    # WorldListener: the hub does the work
    def world_connected(self, world: Any) -> None:
        self.hub.world_connected(world)

    def world_disconnected(self, world: Any) -> None:
        self.hub.world_disconnected(world)

    def world_event(self, world: Any, frame: dict[str, Any]) -> None:
        self.hub.world_event(world, frame)

    async def close(self, *_: Any) -> None:
        """End every stream and client socket (relay shutdown)."""
        await asyncio.gather(*(s.shutdown() for s in list(self.sockets)), return_exceptions=True)
        await self.hub.close()

    async def handle_sse(self, request: web.Request, route: Route) -> web.StreamResponse:
        """Serve one `*/subscribe` route (wire-protocol §5.2 with DESIGN §6 items 1 and 5)."""
        state = self.state
        key = await core.admitted(admit_request(request, route, state))
        params = await read_params(request, route)
        world = core.resolve_world(key, params.get("clientId"), state.registry)
        channel = route.channel or ""
        event_filter = core.build_filter(
            channel, params, key.forced_user(world.client_id), world.users
        )
        if event_filter == EVERYTHING:
            event_filter = EVERYTHING  # one shared instance for every unfiltered stream
        last_seen = parse_last_event_id(request.headers.get("Last-Event-ID"))

        response = web.StreamResponse(status=200, headers=SSE_HEADERS)
        sub = Subscriber(
            world.client_id,
            channel,
            event_filter,
            "sse",
            Mailbox(self.settings.subscriber_queue_size),
            key.id,
            secret=request.headers.get(API_KEY_HEADER, ""),
            transport=request.transport,
        )
        resume = await self.hub.subscribe(sub, last_seen)
        subscribed = resume is not None
        try:
            await response.prepare(request)
            if resume is None:
                await response.write(error_frame("sse", TOO_MANY))
                return response
            if state.registry.get(world.client_id) is not world:
                return response  # the world left while we were setting up
            first = resume_frames(resume, connected_data(channel, world.client_id, params))
            del resume, params  # not kept for the stream's lifetime (a replay can be long)
            await response.write(first)
            del first
            # From here on, fan-out and keep-alive comments write straight to the socket when
            # they can (one shared, pre-encoded chunk for every subscriber), without waking
            # this task; it writes only what had to be queued. Only for what aiohttp itself
            # would write unchanged: no compression; chunked or not as the response was prepared
            sub.chunked = response.headers.get("Transfer-Encoding", "").lower() == "chunked"
            sub.direct = not response.compression
            self.hub.keepalives.add(sub)
            mailbox = sub.mailbox
            while True:
                # the mailbox's future, not `next_batch`: a coroutine object less per open
                # stream (~0.25 KiB; 10,000 idle streams: -2.4 MiB RSS, bench/RESULTS.md)
                if (arrival := mailbox.arrival()) is not None:
                    await arrival
                if not (batch := mailbox.take()):
                    break
                await response.write(b"".join(batch))
        except (ConnectionError, RuntimeError) as exc:  # the client went away
            log.debug("SSE client of %s/%s went away: %r", world.client_id, channel, exc)
        finally:
            if subscribed:
                self.hub.finished(sub)
        return response

    async def handle_client_ws(self, request: web.Request) -> web.StreamResponse:
        """Serve `/ws/api` (wire-protocol §8)."""
        from vttrelay.relay.events.ws_api import ClientSocket

        return await ClientSocket(self, request).run()


def key_refused(state: RelayState, secret: str) -> str | None:
    """Why an open stream's API key no longer works (revoked, expired...), or None."""
    return core.key_problem(state.keys.lookup(secret))
