"""The event resources an MCP connection follows: `vtt://events/chat` and `vtt://events/rolls`,
each the relay's SSE stream (`/chat/subscribe`, `/rolls/subscribe`) read with the caller's key
in the world the session plays in (none chosen: the world the relay finds, as for any call),
its latest events kept and each new one told to the subscriber."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vttrelay.mcp import tools as tool_table
from vttrelay.mcp import views

if TYPE_CHECKING:
    from vttrelay.mcp.caller import Caller

log = logging.getLogger("vttrelay.mcp")

EVENT_STREAMS = {"chat": "/chat/subscribe", "rolls": "/rolls/subscribe"}
EVENTS_KEPT = 50  # events an updating resource keeps
EVENTS_PREFIX = "vtt://events/"


@dataclass
class Feed:
    """One followed event stream: its latest events and the task that reads it."""

    events: deque[Any]
    task: asyncio.Task[None]


class EventFeeds:
    """The event resources a connection subscribed to (per MCP connection)."""

    def __init__(self) -> None:
        self._feeds: dict[str, Feed] = {}

    def get(self, uri: str) -> Feed | None:
        return self._feeds.get(uri)

    async def follow(
        self, caller: Caller, uri: str, notify: Callable[[str], Awaitable[None]]
    ) -> None:
        kind = uri.removeprefix(EVENTS_PREFIX)
        if kind not in EVENT_STREAMS:
            raise tool_table.ToolInputError(f"{uri!r} is not an event resource")
        if uri in self._feeds:
            return
        events: deque[Any] = deque(maxlen=EVENTS_KEPT)
        started = asyncio.get_running_loop().create_future()

        async def run() -> None:
            try:
                stream = caller.relay.streams.chat if kind == "chat" else caller.relay.streams.rolls
                async for event in stream(client_id=caller.world):
                    if event.event == "connected":
                        if not started.done():
                            started.set_result(None)
                        continue
                    events.append({"event": event.event, "data": _compact_event(event.data)})
                    await notify(uri)
            except Exception as exc:  # the stream refused or ended: say so to the subscriber
                if not started.done():
                    started.set_exception(exc)
                log.info("event feed %s ended: %s", uri, exc)

        self._feeds[uri] = Feed(events, asyncio.create_task(run()))
        try:
            async with asyncio.timeout(10):
                await started
        except BaseException:
            await self.stop(uri)
            raise

    async def stop(self, uri: str) -> None:
        feed = self._feeds.pop(uri, None)
        if feed is not None:
            feed.task.cancel()
            with contextlib.suppress(BaseException):
                await feed.task

    async def close(self) -> None:
        for uri in list(self._feeds):
            await self.stop(uri)


def _compact_event(data: Any) -> Any:
    if isinstance(data, dict) and ("content" in data or "speaker" in data):
        return views.chat_view([data])[0]
    return data
