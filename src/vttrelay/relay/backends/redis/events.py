"""The event log shared by every instance, on Redis Streams and pub/sub (`backends.EventLog`).

Layout, per world id `<w>` and channel `<c>` (the `{<w>}` hash tag keeps a world's keys in one
cluster slot):

- `vttrelay:ev:{<w>}:<c>`, a stream: one entry per event, its id `0-<n>` where `<n>` is the
  event's id (`XADD ... 0-*`: Redis numbers them 1, 2, 3... and keeps counting after trims), with
  the fields `n` (event name), `d` (data, JSON) and `s` (the chat subject, JSON, or empty). It is
  bounded exactly as the in-process log: at most `event_buffer_size` entries and about
  `event_buffer_bytes` of data (the newest entry is always kept), trimmed oldest first in the
  append script; `vttrelay:evsize:{<w>}:<c>` holds the bytes kept.
- the pub/sub channel of the same name: every appended event is published in the same script
  (so in the order of its ids) as `<n>\\n<[origin, name, subject]>\\n<data>`.

Both keys expire `history_retention` seconds after the last append or refresh: the instance
holding the world and every instance with subscribers refresh them, so a world's history is kept
while anyone uses it and about `history_retention` after.

The instance holding a world appends its events through one writer task (pipelined, in order)
and hands each to its own hub when Redis has numbered it. An instance with subscribers of a
channel listens to its pub/sub channel (ignoring what it published itself); `resume` first waits
until the subscription is confirmed, then snapshots the stream in one script, so an event is
either in the snapshot or arrives live (the hub drops the overlap by id). When a listened
channel skips ids (pub/sub lost messages during a reconnect), the missing ones are read back
from the stream before the next is delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Final

import orjson
from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from vttrelay.relay.backends.ports import EventSink
from vttrelay.relay.backends.redis.client import open_redis, stop_tasks
from vttrelay.relay.backends.redis.pubsub import Subscriptions
from vttrelay.relay.events.model import LoggedEvent, Resume, StreamEvent, plan_resume

log = logging.getLogger("vttrelay.relay.redis_events")

PREFIX: Final = "vttrelay:ev:"
SIZE_PREFIX: Final = "vttrelay:evsize:"

# KEYS: stream, size. ARGV: capacity, max bytes (0: none), ttl ms, name, data, subject, header.
APPEND: Final = """
local id = redis.call('XADD', KEYS[1], '0-*', 'n', ARGV[4], 'd', ARGV[5], 's', ARGV[6])
local size = redis.call('INCRBY', KEYS[2], #ARGV[5])
local cap = tonumber(ARGV[1])
local maxb = tonumber(ARGV[2])
local len = redis.call('XLEN', KEYS[1])
while len > 0 and (len > cap or (maxb > 0 and size > maxb and len > 1)) do
  local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  local fields = first[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'd' then size = redis.call('DECRBY', KEYS[2], #fields[i + 1]) end
  end
  redis.call('XDEL', KEYS[1], first[1])
  len = len - 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local seq = string.sub(id, 3)
redis.call('PUBLISH', KEYS[1], seq .. '\\n' .. ARGV[7] .. '\\n' .. ARGV[5])
return tonumber(seq)
"""

# KEYS: stream. ARGV: last seen id (-1: none). Returns {newest id, oldest kept id or 0, entries
# after the last seen one (all of them when it is past the newest; none without one)}.
SNAPSHOT: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, {}} end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local last = 0
for i = 1, #info, 2 do
  if info[i] == 'last-generated-id' then last = tonumber(string.sub(info[i + 1], 3)) end
end
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
local oldest = 0
if first then oldest = tonumber(string.sub(first[1], 3)) end
local want = tonumber(ARGV[1])
if want < 0 or want == last then return {last, oldest, {}} end
local from = '-'
if want < last then from = '(0-' .. want end
return {last, oldest, redis.call('XRANGE', KEYS[1], from, '+')}
"""


def stream_key(client_id: str, channel: str) -> str:
    """The stream (and pub/sub channel) of a world's channel."""
    return f"{PREFIX}{{{client_id}}}:{channel}"


def size_key(client_id: str, channel: str) -> str:
    return f"{SIZE_PREFIX}{{{client_id}}}:{channel}"


def parse_key(name: str) -> tuple[str, str] | None:
    """(world, channel) of a stream key, or None when it is not one."""
    if not name.startswith(PREFIX + "{"):
        return None
    client_id, sep, channel = name[len(PREFIX) + 1 :].rpartition("}:")
    return (client_id, channel) if sep else None


def decode_entry(channel: str, entry: Any) -> LoggedEvent:
    """A stream entry `[b"0-<n>", [b"n", name, b"d", data, b"s", subject]]` as a LoggedEvent
    (its data bytes kept as they are: no re-encoding)."""
    raw_id, flat = entry
    fields = dict(zip(flat[::2], flat[1::2], strict=True))
    subject = fields.get(b"s") or b""
    data: bytes = fields[b"d"]
    event = StreamEvent(
        channel,
        fields[b"n"].decode(),
        orjson.loads(data),
        orjson.loads(subject) if subject else None,
    )
    return LoggedEvent(int(raw_id.split(b"-", 1)[1]), event, _data=data)


def decode_message(channel: str, message: bytes) -> tuple[str, LoggedEvent]:
    """A published event: (the instance that appended it, the event)."""
    seq, header, data = message.split(b"\n", 2)
    origin, name, subject = orjson.loads(header)
    event = StreamEvent(channel, name, orjson.loads(data), subject)
    return origin, LoggedEvent(int(seq), event, _data=data)


@dataclass(slots=True)
class _Append:
    client_id: str
    event: StreamEvent
    data: bytes


class RedisEventLog:
    """`backends.EventLog` on Redis: see the module docstring for the layout."""

    def __init__(
        self,
        url: str,
        instance_id: str,
        capacity: int,
        max_bytes: int | None,
        retention: float = 600.0,
    ) -> None:
        self.url = url
        self.instance_id = instance_id
        self.capacity = max(0, capacity)
        self.max_bytes = max_bytes or 0
        self.retention = retention
        self._redis: Redis | None = None
        self._subscriptions: Subscriptions | None = None
        self._sink: EventSink | None = None
        self._queue: list[_Append] = []
        self._queued = asyncio.Event()
        self._unwritten = 0  # appended, not yet numbered by Redis (or failed)
        self._cursors: dict[tuple[str, str], int] = {}  # newest id delivered here
        self._appended: set[tuple[str, str]] = set()  # channels of worlds held here
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("the Redis event log is not started")
        return self._redis

    @property
    def subscriptions(self) -> Subscriptions:
        if self._subscriptions is None:
            raise RuntimeError("the Redis event log is not started")
        return self._subscriptions

    def bind(self, sink: EventSink) -> None:
        self._sink = sink

    # Appending (the instance holding the world) ---------------------------------------------------

    def append(self, client_id: str, event: StreamEvent) -> None:
        """Queue an event for the writer task (no await: world frames are read in order)."""
        self._queue.append(_Append(client_id, event, orjson.dumps(event.data)))
        self._unwritten += 1
        self._queued.set()

    async def _write(self) -> None:
        """Append what is queued, in order, one pipeline per batch; deliver each here."""
        while True:
            await self._queued.wait()
            self._queued.clear()
            batch, self._queue = self._queue, []
            if not batch:
                continue
            try:
                results = await self._append_batch(batch)
                if any(isinstance(r, NoScriptError) for r in results):  # Redis restarted
                    self._append_sha = await self.redis.script_load(APPEND)
                    results = await self._append_batch(batch)
            except Exception as exc:  # Redis is unreachable: these events cannot be numbered
                log.warning("could not append %d events: %r", len(batch), exc)
                self._unwritten -= len(batch)
                continue
            self._unwritten -= len(batch)
            for item, result in zip(batch, results, strict=True):
                if isinstance(result, Exception):
                    log.warning("could not append an event of %s: %r", item.client_id, result)
                    continue
                key = (item.client_id, item.event.channel)
                self._appended.add(key)
                self._deliver(key, LoggedEvent(int(result), item.event, _data=item.data))

    async def _append_batch(self, batch: list[_Append]) -> list[Any]:
        """One pipeline of append scripts, in order; each result is an id or an exception."""
        ttl = int(self.retention * 1000)
        pipe = self.redis.pipeline(transaction=False)
        for item in batch:
            event = item.event
            subject = b"" if event.subject is None else orjson.dumps(event.subject)
            header = orjson.dumps([self.instance_id, event.name, event.subject])
            pipe.evalsha(
                self._append_sha,
                2,
                stream_key(item.client_id, event.channel),
                size_key(item.client_id, event.channel),
                self.capacity,
                self.max_bytes,
                ttl,
                event.name,
                item.data,
                subject,
                header,
            )
        results: list[Any] = await pipe.execute(raise_on_error=False)
        return results

    def _deliver(self, key: tuple[str, str], logged: LoggedEvent) -> None:
        self._cursors[key] = logged.seq
        if self._sink is not None:
            self._sink(key[0], logged)

    # Listening (instances with subscribers) -------------------------------------------------------

    async def resume(self, client_id: str, channel: str, last_seen: int | None) -> Resume:
        """Listen to the channel (subscription confirmed), then snapshot its stream."""
        name = stream_key(client_id, channel)
        await self.subscriptions.listen(name)
        newest, oldest, entries = await self._snapshot(
            keys=[name], args=[-1 if last_seen is None else last_seen]
        )
        kept = [decode_entry(channel, e) for e in entries]
        key = (client_id, channel)
        if newest > self._cursors.get(key, 0):
            self._cursors[key] = newest
        if last_seen is None:
            return Resume(newest, None, [], newest)
        cursor, gap, replay = plan_resume(last_seen, newest, oldest or None, kept)
        return Resume(cursor, gap, replay, newest)

    def unlisten(self, client_id: str, channel: str) -> None:
        if self._subscriptions is None:
            return
        self._subscriptions.unlisten(stream_key(client_id, channel))
        if (client_id, channel) not in self._appended:
            self._cursors.pop((client_id, channel), None)

    async def _received(self, name: str, data: bytes) -> None:
        """A published event: delivered here unless this instance appended it; ids it skipped
        are read back from the stream first."""
        key = parse_key(name)
        if key is None:
            return
        try:
            origin, logged = decode_message(key[1], data)
        except (ValueError, orjson.JSONDecodeError):
            log.warning("undecodable event on %s: dropped", name)
            return
        if origin == self.instance_id:
            return  # delivered here when it was appended
        last = self._cursors.get(key, 0)
        if last and logged.seq > last + 1:
            await self._backfill(key, last, logged.seq)
        self._deliver(key, logged)

    async def _backfill(self, key: tuple[str, str], after: int, before: int) -> None:
        """Deliver the events between two ids that pub/sub did not bring (still in the log)."""
        try:
            entries: Any = await self.redis.xrange(stream_key(*key), f"(0-{after}", f"(0-{before}")
        except Exception as exc:
            log.warning("could not read back events %d-%d of %s: %r", after, before, key, exc)
            return
        for raw_id, fields in entries:
            flat = [x for pair in fields.items() for x in pair]
            self._deliver(key, decode_entry(key[1], [raw_id, flat]))

    # Upkeep ------------------------------------------------------------------------------------

    def last_id(self, client_id: str, channel: str) -> int:
        return self._cursors.get((client_id, channel), 0)

    def forget(self, client_id: str) -> None:
        for key in [k for k in self._appended if k[0] == client_id]:
            self._appended.discard(key)
            if self._subscriptions is None or stream_key(*key) not in self._subscriptions.names:
                self._cursors.pop(key, None)

    async def _refresh(self) -> None:
        """Keep the streams of worlds held here and of listened channels from expiring."""
        ttl = int(self.retention * 1000)
        while True:
            await asyncio.sleep(max(self.retention / 4, 0.05))
            names = {stream_key(*k) for k in self._appended} | self.subscriptions.names
            if not names:
                continue
            pipe = self.redis.pipeline(transaction=False)
            for name in names:
                key = parse_key(name)
                if key is None:
                    continue
                pipe.pexpire(name, ttl)
                pipe.pexpire(size_key(*key), ttl)
            try:
                await pipe.execute(raise_on_error=False)
            except Exception as exc:
                log.warning("could not refresh event history: %r", exc)

    async def start(self) -> None:
        self._redis = open_redis(self.url, self.instance_id)
        self._subscriptions = Subscriptions(self._redis, self._received)
        self._append_sha = await self._redis.script_load(APPEND)
        self._snapshot = self._redis.register_script(SNAPSHOT)
        self._tasks = [asyncio.ensure_future(self._write()), asyncio.ensure_future(self._refresh())]

    async def stop(self) -> None:
        """Append what is still queued (briefly), then stop listening."""
        if self._unwritten:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self.flush()
        await stop_tasks(self._tasks)
        self._tasks = []
        if self._subscriptions is not None:
            await self._subscriptions.close()
            self._subscriptions = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def flush(self) -> None:
        """Wait until every appended event has been numbered and delivered here."""
        while self._unwritten:
            await asyncio.sleep(0.005)
