"""Limits and intervals of the event streams, and how a RelayConfig sets them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


def settings_from(config: Any) -> StreamSettings:
    """StreamSettings from a RelayConfig (any field it lacks keeps its default)."""
    defaults = StreamSettings()
    return StreamSettings(
        **{
            name: getattr(config, name, getattr(defaults, name))
            for name in StreamSettings.__dataclass_fields__
        }
    )
