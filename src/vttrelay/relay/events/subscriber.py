"""One subscription: its world, channel and filter, the mailbox its events go to, the SSE socket
it may write to directly, the `: keepalive` comments of SSE streams, and the error it ends with.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from vttrelay.relay.events.mailbox import Mailbox
from vttrelay.relay.events.model import SSE_KEEPALIVE, EventFilter, LoggedEvent, dumps, sse_frame
from vttrelay.relay.timers import Timer

FELL_BEHIND: Final = (
    "Subscriber fell behind: too many undelivered events; reconnect with Last-Event-ID"
)

Kind = Literal["sse", "ws"]


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
    abort_timer: Timer | None = field(default=None, repr=False)
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
        self.enqueue(sub, loop.time())
        if self._timer is None:
            self._timer = loop.call_at(self._queue[0][0], self._tick)

    def enqueue(self, sub: Subscriber, now: float) -> None:
        """A stream's first comment is due one interval after `now` (a monotonic time)."""
        self._queue.append((now + self.interval(), sub))

    def send_due(self, now: float) -> float | None:
        """Write the comments due at `now` (at most `BATCH`), each stream's next one due an
        interval later; returns when the next is due (None: no stream left)."""
        queue = self._queue
        due = now + self.interval()
        for _ in range(self.BATCH):
            if not queue or queue[0][0] > now:
                break
            _, sub = queue.popleft()
            if not sub.dropped:
                self.send(sub)
                queue.append((due, sub))
        return queue[0][0] if queue else None

    def _tick(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        wake = self.send_due(loop.time())
        if wake is not None:
            self._timer = loop.call_at(wake, self._tick)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queue.clear()


def keepalive_comment(sub: Subscriber) -> None:
    """A stream's `: keepalive` comment: straight to its socket, or after what it has queued
    unless events are waiting there anyway (a slow client: the queue's writer drains first)."""
    if not sub.mailbox.items and not sub.write_now(SSE_KEEPALIVE, KEEPALIVE_CHUNK):
        sub.mailbox.put(SSE_KEEPALIVE)


def error_frame(kind: Kind, message: str) -> bytes:
    """The error a stream ends with: an SSE `event: error` or a /ws/api error frame."""
    if kind == "sse":
        return sse_frame("error", dumps({"error": message}))
    return dumps({"type": "error", "error": message})
