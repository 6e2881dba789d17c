"""Redis pub/sub channels an instance follows while it needs them, for the shared event log and
counters.

`Subscriptions(redis, on_message)`: `await listen(name)` returns once Redis has confirmed the
subscription (so anything published after it reaches this instance: a snapshot read next cannot
miss an event); `unlisten(name)` drops it (unless it is wanted again meanwhile). One reader task
hands each message of a followed channel to `await on_message(name, data)`, in order. redis-py
reconnects and resubscribes after a dropped connection; what was published meanwhile is lost, so
the users of this class detect gaps themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from redis.asyncio import Redis
from redis.asyncio.client import PubSub

log = logging.getLogger("vttrelay.relay.redis")

OnMessage = Callable[[str, bytes], Awaitable[None]]
CONFIRM_TIMEOUT: Final = 2.0  # seconds to wait for a subscription's confirmation, then again
CONFIRM_ATTEMPTS: Final = 3


class Subscriptions:
    """The channels this instance follows on one pub/sub connection (see the module docstring)."""

    def __init__(self, redis: Redis, on_message: OnMessage) -> None:
        self.redis = redis
        self.on_message = on_message
        self.names: set[str] = set()  # the channels wanted
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._lock = asyncio.Lock()  # (un)subscribe commands, one at a time
        self._pubsub: PubSub | None = None
        self._reader: asyncio.Task[None] | None = None

    async def listen(self, name: str) -> None:
        """Follow `name`; returns once the subscription is confirmed."""
        self.names.add(name)
        confirmed = self._confirmed.get(name)
        if confirmed is None:
            confirmed = self._confirmed[name] = asyncio.get_running_loop().create_future()
            if self._pubsub is None:
                self._pubsub = self.redis.pubsub()
            try:
                async with self._lock:
                    await self._pubsub.subscribe(name)
            except BaseException:
                self._confirmed.pop(name, None)
                raise
            if self._reader is None or self._reader.done():
                self._reader = asyncio.ensure_future(self._read(self._pubsub))
        for _ in range(CONFIRM_ATTEMPTS):
            try:
                async with asyncio.timeout(CONFIRM_TIMEOUT):
                    await asyncio.shield(confirmed)
                return
            except TimeoutError:  # no confirmation: ask again (Redis confirms every SUBSCRIBE)
                if name not in self.names or self._pubsub is None:
                    return
                log.warning("no confirmation of the subscription to %s: subscribing again", name)
                async with self._lock:
                    await self._pubsub.subscribe(name)
        raise ConnectionError(f"Redis did not confirm the subscription to {name}")

    def unlisten(self, name: str) -> None:
        """Stop following `name` (the UNSUBSCRIBE is sent in the background)."""
        if name not in self.names:
            return
        self.names.discard(name)
        self._confirmed.pop(name, None)
        task = asyncio.ensure_future(self._unsubscribe(name))
        task.add_done_callback(_log_failure)

    async def _unsubscribe(self, name: str) -> None:
        async with self._lock:
            if name not in self.names and self._pubsub is not None:  # not wanted again
                await self._pubsub.unsubscribe(name)

    async def _read(self, pubsub: PubSub) -> None:
        """Until closed: a blocking read (no read timeout that could cut a message in two)."""
        while True:
            try:
                message = await pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the connection dropped: redis-py reconnects, resubscribes
                log.warning("pub/sub interrupted: %r", exc)
                await asyncio.sleep(0.2)
                continue
            if message is None:
                continue
            name = message["channel"].decode()
            kind = message["type"]
            if kind == "subscribe":
                confirmed = self._confirmed.get(name)
                if confirmed is not None and not confirmed.done():
                    confirmed.set_result(None)
            elif kind == "message" and name in self.names:
                try:
                    await self.on_message(name, message["data"])
                except Exception:
                    log.exception("pub/sub message on %s failed", name)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        for confirmed in self._confirmed.values():
            confirmed.cancel()
        self._confirmed.clear()
        self.names.clear()


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("pub/sub unsubscribe failed: %r", task.exception())
