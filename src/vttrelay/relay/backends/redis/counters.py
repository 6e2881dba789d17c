"""Counters shared by every instance, on Redis (`backends.Counters`): one rate budget per API key,
and subscriber counts summed over the live instances.

Rate budgets: `vttrelay:rate:<key id>` is a hash `{tokens, ts}`, a token bucket of `per_minute`
tokens refilled over 60 s (or the window asked: the per-IP limits of `relay.peer_limits`, under
`vttrelay:rate:ip:<limit>:<peer>`), taken from by one script (`BUCKET`) on Redis's clock, so
every instance draws from the same budget; the key expires when a bucket would be full again.
`allow` answers an awaitable of the decision, `has_token` the same without taking a token; an
unlimited budget (0) is a bool at once. The checks asked in one event-loop iteration go to Redis
together, in one pipeline (one round trip; each still takes its own token, in the order asked):
a check sent alone cost the relay 62-65 us of CPU, two-thirds of a whole forwarded call
(bench/RESULTS.md, "Issue 15: --workers 2").

Subscriber counts: `vttrelay:subs:{<world>}` is a hash whose fields `<instance>|<channel>` hold
each instance's share, `"<count> <lingering 0|1>"` (a share of 0 not lingering is deleted). An
instance writes its changes in order (one writer task) and publishes the channel's name on the
pub/sub channel of the same name. The instance holding the world follows that channel: on each
message it re-reads the hash and sums the shares of the instances the directory knows alive
(`live()`); it also re-reads every world it holds when that set changes, so a dead instance's
share disappears one heartbeat TTL after its last beat (shares of dead instances are deleted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, NamedTuple

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from vttrelay import protocol
from vttrelay.relay.backends.ports import CountListener
from vttrelay.relay.backends.redis.client import open_redis, stop_tasks
from vttrelay.relay.backends.redis.pubsub import Subscriptions

log = logging.getLogger("vttrelay.relay.redis_counters")

RATE_PREFIX: Final = "vttrelay:rate:"
SUBS_PREFIX: Final = "vttrelay:subs:"
TAKE: Final = 1  # BUCKET's third argument: take a token
PEEK: Final = 0  # ... or only say whether one is there
SHARES_TTL_MS: Final = 24 * 3600 * 1000  # a world's hash outlives any share written in a day

# KEYS: bucket. ARGV: capacity, window ms, take (1: take a token; 0: only say whether one is
# there, changing nothing). Returns 1 (a token taken, or there) or 0.
BUCKET: Final = """
local cap = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil or ts == nil then tokens = cap; ts = now end
tokens = math.min(cap, tokens + math.max(0, now - ts) * cap / window)
if ARGV[3] == '0' then
  if tokens >= 1 then return 1 end
  return 0
end
local ok = 0
if tokens >= 1 then tokens = tokens - 1; ok = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) * window / cap) + 1)
return ok
"""


def shares_key(client_id: str) -> str:
    """The hash of a world's subscriber shares, and the pub/sub channel of its changes."""
    return f"{SUBS_PREFIX}{{{client_id}}}"


def client_of(name: str) -> str | None:
    if not name.startswith(SUBS_PREFIX + "{") or not name.endswith("}"):
        return None
    return name[len(SUBS_PREFIX) + 1 : -1]


def sum_shares(
    raw: dict[bytes, bytes], live: set[str], departed: set[str]
) -> tuple[dict[str, tuple[int, bool]], list[bytes]]:
    """A world's shares summed per channel over the live instances: channel -> (count, lingering
    anywhere); and the fields of the `departed` instances (seen alive, then dead: to delete).

    The share of an instance not (yet) known alive is left out but kept: it may have joined
    since the directory last looked."""
    totals: dict[str, tuple[int, bool]] = {}
    dead: list[bytes] = []
    for field, value in raw.items():
        instance, _, channel = field.decode().rpartition("|")
        if instance not in live:
            if instance in departed:
                dead.append(field)
            continue
        count_text, _, lingering_text = value.decode().partition(" ")
        count, lingering = totals.get(channel, (0, False))
        totals[channel] = (count + int(count_text), lingering or lingering_text == "1")
    return totals, dead


class Check(NamedTuple):
    """One budget check asked in this event-loop iteration: BUCKET's arguments and the future
    its answer goes to."""

    bucket: str
    capacity: int
    window_ms: int
    take: int
    decision: asyncio.Future[bool]

    @property
    def argv(self) -> tuple[str, int, int, int]:
        return (self.bucket, self.capacity, self.window_ms, self.take)


class RedisCounters:
    """`backends.Counters` on Redis: see the module docstring."""

    def __init__(
        self,
        url: str,
        instance_id: str,
        live: Callable[[], list[str]],
        check_interval: float = 0.25,
    ) -> None:
        self.url = url
        self.instance_id = instance_id
        self.live = live
        self.check_interval = check_interval
        self._redis: Redis | None = None
        self._subscriptions: Subscriptions | None = None
        self._listener: CountListener | None = None
        self._writes: list[tuple[str, str, int, bool]] = []
        self._written = asyncio.Event()
        self._mine: set[tuple[str, str]] = set()  # shares this instance has in Redis
        self._watched: dict[str, bool] = {}  # world held here -> its totals were told
        self._dirty: set[str] = set()
        self._recount = asyncio.Event()
        self._departed: set[str] = set()  # instances seen alive, then dead
        self._tasks: list[asyncio.Task[None]] = []
        self._checks: list[Check] = []  # this iteration's
        self._checking: set[asyncio.Future[None]] = set()
        self._bucket_sha = ""

    @property
    def redis(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("the Redis counters are not started")
        return self._redis

    # Rate budgets ------------------------------------------------------------------------------

    def allow(self, key: str, per_minute: int, *, window: float = 60.0) -> bool | Awaitable[bool]:
        return self._ask(key, per_minute, window, TAKE)

    def has_token(
        self, key: str, per_minute: int, *, window: float = 60.0
    ) -> bool | Awaitable[bool]:
        return self._ask(key, per_minute, window, PEEK)

    def _ask(self, key: str, per_minute: int, window: float, take: int) -> bool | Awaitable[bool]:
        if per_minute <= 0:
            return True
        loop = asyncio.get_running_loop()
        decision: asyncio.Future[bool] = loop.create_future()
        if not self._checks:
            loop.call_soon(self._send_checks)
        self._checks.append(
            Check(RATE_PREFIX + key, per_minute, int(window * 1000), take, decision)
        )
        return decision

    def _send_checks(self) -> None:
        checks, self._checks = self._checks, []
        task = asyncio.ensure_future(self._check(checks))
        self._checking.add(task)
        task.add_done_callback(self._checking.discard)

    async def _check(self, checks: list[Check]) -> None:
        """Take one token for each check in one pipeline; answer each (or fail it)."""
        try:
            results = await self._take(checks)
        except Exception as exc:
            results = [exc] * len(checks)
        for check, result in zip(checks, results, strict=True):
            decision = check.decision
            if decision.done():
                continue
            if isinstance(result, Exception):
                decision.set_exception(result)
            else:
                decision.set_result(bool(result))

    async def _take(self, checks: list[Check]) -> list[Any]:
        if not self._bucket_sha:
            self._bucket_sha = await self.redis.script_load(BUCKET)
        for attempt in range(2):
            if len(checks) == 1:  # alone: a plain command costs less than a pipeline of one
                check = checks[0]
                try:
                    return [await self.redis.evalsha(self._bucket_sha, 1, *check.argv)]
                except NoScriptError:
                    if attempt:
                        raise
                    self._bucket_sha = await self.redis.script_load(BUCKET)
                    continue
            pipe = self.redis.pipeline(transaction=False)
            for check in checks:
                pipe.evalsha(self._bucket_sha, 1, *check.argv)
            results: list[Any] = await pipe.execute(raise_on_error=False)
            if attempt or not any(isinstance(r, NoScriptError) for r in results):
                return results
            # Redis lost its scripts (a restart): load it again; a NOSCRIPT took no token
            self._bucket_sha = await self.redis.script_load(BUCKET)
        return results  # pragma: no cover - the loop returns

    # Subscriber counts --------------------------------------------------------------------------

    def bind(self, listener: CountListener) -> None:
        self._listener = listener

    def report(self, client_id: str, channel: str, count: int, lingering: bool) -> None:
        self._writes.append((client_id, channel, count, lingering))
        self._written.set()

    async def _write(self) -> None:
        """Write this instance's share changes in order, each followed by its notice."""
        while True:
            await self._written.wait()
            self._written.clear()
            batch, self._writes = self._writes, []
            if not batch:
                continue
            pipe = self.redis.pipeline(transaction=False)
            for client_id, channel, count, lingering in batch:
                name = shares_key(client_id)
                field = f"{self.instance_id}|{channel}"
                if count or lingering:
                    pipe.hset(name, field, f"{count} {int(lingering)}")
                    pipe.pexpire(name, SHARES_TTL_MS)
                    self._mine.add((client_id, channel))
                else:
                    pipe.hdel(name, field)
                    self._mine.discard((client_id, channel))
                pipe.publish(name, channel)
            try:
                await pipe.execute()
            except Exception as exc:
                log.warning("could not write %d subscriber counts: %r", len(batch), exc)

    def watch(self, client_id: str) -> None:
        """Follow a world held here; its listener gets the totals once they are read."""
        self._watched[client_id] = False
        task = asyncio.ensure_future(self._follow(client_id))
        task.add_done_callback(_log_failure)

    async def _follow(self, client_id: str) -> None:
        if self._subscriptions is None:
            return
        await self._subscriptions.listen(shares_key(client_id))
        self._mark(client_id)

    def unwatch(self, client_id: str) -> None:
        self._watched.pop(client_id, None)
        self._dirty.discard(client_id)
        if self._subscriptions is not None:
            self._subscriptions.unlisten(shares_key(client_id))

    async def _changed(self, name: str, data: bytes) -> None:
        client_id = client_of(name)
        if client_id is not None:
            self._mark(client_id)

    def _mark(self, client_id: str) -> None:
        if client_id in self._watched:
            self._dirty.add(client_id)
            self._recount.set()

    async def _recounts(self) -> None:
        """Re-read the worlds marked changed and tell their totals, one world at a time."""
        while True:
            await self._recount.wait()
            self._recount.clear()
            while self._dirty:
                client_id = self._dirty.pop()
                try:
                    await self._recount_world(client_id)
                except Exception as exc:
                    log.warning("could not count the subscribers of %s: %r", client_id, exc)

    async def _recount_world(self, client_id: str) -> None:
        name = shares_key(client_id)
        raw: Any = await self.redis.hgetall(name)
        totals, dead = sum_shares(raw, set(self.live()), self._departed)
        if dead:
            await self.redis.hdel(name, *dead)
        told = self._watched.get(client_id)
        listener = self._listener
        if told is None or listener is None:
            return  # no longer held here
        if not told:
            self._watched[client_id] = True
            listener.totals_known(client_id, totals)
            return
        for channel in protocol.CHANNELS:
            count, lingering = totals.get(channel, (0, False))
            listener.total_changed(client_id, channel, count, lingering)

    async def _follow_instances(self) -> None:
        """Re-count every world held here when an instance joins or dies."""
        known = set(self.live())
        while True:
            await asyncio.sleep(self.check_interval)
            live = set(self.live())
            if live != known:
                self._departed |= known - live
                self._departed -= live
                known = live
                for client_id in self._watched:
                    self._mark(client_id)

    # Life ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._redis = open_redis(self.url, self.instance_id)
        self._subscriptions = Subscriptions(self._redis, self._changed)
        self._tasks = [
            asyncio.ensure_future(self._write()),
            asyncio.ensure_future(self._recounts()),
            asyncio.ensure_future(self._follow_instances()),
        ]

    async def stop(self) -> None:
        """Withdraw this instance's shares, then stop."""
        for client_id, channel in list(self._mine):
            self.report(client_id, channel, 0, False)
        if self._writes:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self._settle()
        await stop_tasks([*self._tasks, *self._checking])
        self._tasks = []
        if self._subscriptions is not None:
            await self._subscriptions.close()
            self._subscriptions = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def _settle(self) -> None:
        while self._writes or self._mine:
            await asyncio.sleep(0.01)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("could not follow a world's subscriber counts: %r", task.exception())
