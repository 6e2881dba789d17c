"""The event hub: subscriptions of SSE streams and /ws/api sockets, their counts, history, fan-out.

`EventHub` is the I/O-light core: it keeps, per world and channel, the subscribers (bounded
mailboxes), the replay log (a `backends.EventLog`) and the subscriber count it announces to the
world with `event-subscription-update` (on every change, and again when the world reconnects). It
implements the registry's `WorldListener`: a world's event frame is unwrapped and named once
(`model.unwrap`), logged, and put into the mailbox of every subscriber whose filter matches. A
subscriber that does not keep up overflows its mailbox and is cut off with an error event, so the
relay's memory stays bounded.

Lingering: when the last subscriber of a channel leaves, the world is not told `count: 0` at once.
The channel stays on for `subscription_linger` seconds (the world keeps seeing `count: 1`, and the
hub keeps logging its events), so a client that reconnects with `Last-Event-ID` within that time
gets what it missed. A subscriber that comes back cancels the pending 0; the world always sees
the real count when there are subscribers. In short, the world is told `max(real, 1)` while a
channel lingers, `real` otherwise.

The transports are beside it: `sse.py` serves the six `*/subscribe` routes, `ws_api.py` serves
`/ws/api`, and `streams.Streams` holds the hub and both for the application.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from vttrelay import protocol
from vttrelay.relay.backends.local import LocalCounters, LocalEventLog
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.backends.ports import EventLog as EventLogBackend
from vttrelay.relay.events.model import LoggedEvent, MessageIndex, Resume, unwrap
from vttrelay.relay.events.settings import StreamSettings
from vttrelay.relay.events.subscriber import (
    FELL_BEHIND,
    Keepalives,
    Kind,
    Subscriber,
    error_frame,
    keepalive_comment,
)
from vttrelay.relay.events.sweeper import is_watched, sweep
from vttrelay.relay.timers import Later, Timer, loop_later

log = logging.getLogger("vttrelay.relay.streams")  # the name it had before the move


class WorldLike(Protocol):
    """What the hub needs of a connected world (link.connection.WorldConnection)."""

    client_id: str

    async def send(self, frame: protocol.SubscriptionUpdateFrame) -> None: ...


class RegistryLike(Protocol):
    """What the hub needs of the registry of worlds (backends.WorldDirectory)."""

    def get(self, client_id: str) -> Any: ...


class EventHub:
    """Subscribers, counts and replay logs per (world, channel); a registry `WorldListener`."""

    def __init__(
        self,
        registry: RegistryLike,
        settings: StreamSettings | None = None,
        events: EventLogBackend | None = None,
        counters: Counters | None = None,
        key_problem: Callable[[str], str | None] | None = None,
        later: Later = loop_later,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = registry
        # schedules the grace, linger and retention timers and the sweeper's passes
        # (`relay.timers`); `clock` is the time they are on (the sweeper's key checks read it)
        self.later = later
        self.clock = clock
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
        self._timers: set[Timer] = set()  # abort timers of cut-off subscribers
        self._forgetting: dict[str, Timer] = {}  # gone worlds' history, by id
        self._lingering: dict[tuple[str, str], Timer] = {}  # pending `count: 0`s
        self._told: dict[tuple[str, str], int] = {}  # the count each world last got
        self.keepalives = Keepalives(lambda: self.settings.keepalive_interval, keepalive_comment)
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
        if is_watched(self, sub):
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
        self._send(world, protocol.subscription_update(channel, told))

    def _start_lingering(self, key: tuple[str, str]) -> None:
        """Keep a channel that just lost its last subscriber on for `subscription_linger`."""
        linger = self.settings.subscription_linger
        if linger <= 0 or self._closing or key in self._lingering:
            return
        self._lingering[key] = self.later(linger, self._linger_over, key)

    def _stop_lingering(self, key: tuple[str, str]) -> None:
        handle = self._lingering.pop(key, None)
        if handle is not None:
            handle.cancel()

    def _linger_over(self, key: tuple[str, str]) -> None:
        """Nobody came back in time: the world is told the real count (0)."""
        self._lingering.pop(key, None)
        self._announce(*key)

    def _send(self, world: WorldLike, frame: protocol.SubscriptionUpdateFrame) -> None:
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
                self._send(world, protocol.subscription_update(channel, count))

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
        self._forgetting[world.client_id] = self.later(
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
            handle = self.later(self.settings.slow_close_grace, self._abort, sub)
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

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.ensure_future(sweep(self))

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
            async with asyncio.timeout(1.0):
                await self.flush()


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


async def _send_after(
    previous: asyncio.Future[None] | None, world: WorldLike, frame: protocol.SubscriptionUpdateFrame
) -> None:
    if previous is not None and not previous.done():
        await asyncio.wait([previous])
    try:
        await world.send(frame)
    except Exception as exc:  # the world went away: it gets the counts again when it is back
        log.debug("could not send %s to %s: %r", frame["type"], world.client_id, exc)
