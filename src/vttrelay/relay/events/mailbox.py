"""A bounded queue of encoded frames for one consumer (an SSE stream, a `/ws/api` socket)."""

from __future__ import annotations

import asyncio


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
