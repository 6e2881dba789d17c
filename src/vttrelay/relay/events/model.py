"""World events as the relay's streams deliver them: pure rules, no I/O.

A world sends `{"type": "chat-event", "data": {...}}` and friends (wire-protocol §3.3). This module
turns such a frame into a `StreamEvent` with the documented name and payload (DESIGN.md §6 item 1:
the frame's `data` is unwrapped for every channel), decides which subscriber sees which event
(`EventFilter`), remembers enough about chat messages to filter their deletes (`MessageIndex`),
keeps the bounded per-world, per-channel history used to replay missed events (`EventLog`), and
frames events for Server-Sent Events and for the client WebSocket.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from vttrelay import protocol

# Event names and payloads ------------------------------------------------------------------------

# The `type` of an event pushed on /ws/api, per channel (wire-protocol §8).
WS_EVENT_TYPE: Final = {
    protocol.CHAT_CHANNEL: "chat-event",
    protocol.ROLL_CHANNEL: "roll-event",
    protocol.HOOK_CHANNEL: "hook-event",
    protocol.COMBAT_CHANNEL: "combat-event",
    protocol.ACTOR_CHANNEL: "actor-event",
    protocol.SCENE_CHANNEL: "scene-event",
}

# Channels whose event name is `<prefix><eventType>`.
_PREFIXED: Final = {
    protocol.CHAT_CHANNEL: "chat-",
    protocol.COMBAT_CHANNEL: "combat-",
    protocol.ACTOR_CHANNEL: "actor-",
    protocol.SCENE_CHANNEL: "scene-",
}

CHAT_DELETE: Final = "chat-delete"


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event as subscribers get it.

    `subject` is what the chat filters look at: the message itself for a create or update, the
    remembered message for a delete (None when the relay never saw it).
    """

    channel: str
    name: str
    data: Any
    subject: Mapping[str, Any] | None = None


def _inner(frame: Mapping[str, Any]) -> dict[str, Any] | None:
    """The frame's payload: its `data` object, or (tolerantly) its other top-level keys."""
    data = frame.get("data")
    if isinstance(data, dict):
        return data
    rest = {k: v for k, v in frame.items() if k != "type"}
    return rest or None


def unwrap(frame: Mapping[str, Any]) -> StreamEvent | None:
    """Name and payload of a world event frame, or None when the frame is malformed.

    chat -> `chat-<create|update|delete>` with the message (delete: `{"id": ...}`); rolls ->
    `roll` with the roll data; hooks -> the hook name with `{hook, args}`; combat, actor and
    scene -> `<prefix><eventType>` with the inner payload.
    """
    channel = protocol.EVENT_FRAME_CHANNEL.get(str(frame.get("type")))
    inner = _inner(frame)
    if channel is None or inner is None:
        return None
    if channel == protocol.ROLL_CHANNEL:
        return StreamEvent(channel, "roll", inner)
    if channel == protocol.HOOK_CHANNEL:
        hook = inner.get("hook")
        if not isinstance(hook, str) or not hook:
            return None
        return StreamEvent(channel, hook, inner)
    event_type = inner.get("eventType")
    if not isinstance(event_type, str) or not event_type:
        return None
    name = _PREFIXED[channel] + event_type
    if channel != protocol.CHAT_CHANNEL:
        return StreamEvent(channel, name, inner)
    message = inner.get("data")
    if not isinstance(message, dict):
        return None
    if name == CHAT_DELETE:
        return StreamEvent(channel, name, {"id": message.get("id")})
    return StreamEvent(channel, name, message, subject=message)


# Chat messages -----------------------------------------------------------------------------------

CHAT_OOC: Final = 0
CHAT_IC: Final = 1
CHAT_EMOTE: Final = 2
CHAT_WHISPER: Final = 3
CHAT_ROLL: Final = 4


def chat_type_of(message: Mapping[str, Any]) -> int:
    """The numeric chat type (0 OOC, 1 IC, 2 emote, 3 whisper, 4 roll) of a serialized message.

    The embedded world records it in `flags.vttrelay.chatType`; for other messages (the real
    module's) it is derived: roll if `isRoll`, whisper if whispered, in character if an actor
    speaks, else out of character.
    """
    flags = message.get("flags")
    ours = flags.get("vttrelay") if isinstance(flags, dict) else None
    stated = ours.get("chatType") if isinstance(ours, dict) else None
    if isinstance(stated, int) and not isinstance(stated, bool) and 0 <= stated <= 4:
        return stated
    if message.get("isRoll"):
        return CHAT_ROLL
    if message.get("whisper"):
        return CHAT_WHISPER
    speaker = message.get("speaker")
    if isinstance(speaker, dict) and speaker.get("actor"):
        return CHAT_IC
    return CHAT_OOC


def chat_summary(message: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a message the chat filters need (kept to filter its later delete)."""
    return {
        "speaker": message.get("speaker"),
        "whisper": message.get("whisper"),
        "author": message.get("author"),
        "isRoll": message.get("isRoll"),
        "flags": {"vttrelay": {"chatType": chat_type_of(message)}},
    }


class MessageIndex:
    """A bounded memory of the chat messages seen, so that deletes can be filtered like them."""

    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def observe(self, event: StreamEvent) -> StreamEvent:
        """Record a chat create/update; give a delete the message it deletes as its subject."""
        if event.channel != protocol.CHAT_CHANNEL:
            return event
        if event.name == CHAT_DELETE:
            message_id = event.data.get("id")
            known = self._items.pop(message_id, None) if isinstance(message_id, str) else None
            return StreamEvent(event.channel, event.name, event.data, subject=known)
        message_id = event.data.get("id")
        if isinstance(message_id, str):
            self._items[message_id] = chat_summary(event.data)
            self._items.move_to_end(message_id)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return event


# Users -------------------------------------------------------------------------------------------

GM_ROLE: Final = 3  # assistant GM and GM see everything


@dataclass(frozen=True, slots=True)
class Viewer:
    """A world user on whose behalf a stream is filtered."""

    id: str
    name: str
    role: int

    @property
    def is_gm(self) -> bool:
        return self.role >= GM_ROLE


def resolve_user(users: Iterable[Mapping[str, Any]] | None, wanted: str) -> Viewer | None:
    """Find a user by id, then by case-insensitive name (as the module does), else None."""
    listed = [u for u in users or () if isinstance(u, Mapping)]
    found = next((u for u in listed if u.get("id") == wanted), None)
    if found is None:
        folded = wanted.casefold()
        found = next((u for u in listed if str(u.get("name", "")).casefold() == folded), None)
    if found is None:
        return None
    role = found.get("role")
    return Viewer(
        id=str(found.get("id")),
        name=str(found.get("name", "")),
        role=role if isinstance(role, int) else 0,
    )


def can_see(message: Mapping[str, Any], viewer: Viewer) -> bool:
    """Whether a user may see a chat message: public, authored by them, whispered to them, GM."""
    if viewer.is_gm:
        return True
    whisper = message.get("whisper") or []
    if not whisper or viewer.id in whisper:
        return True
    author = message.get("author")
    return isinstance(author, dict) and author.get("id") == viewer.id


# Filters -----------------------------------------------------------------------------------------


def _same_doc(value: Any, wanted: str, kind: str) -> bool:
    """`Actor.abc` matches `Actor.abc` and `abc`."""
    return isinstance(value, str) and (value == wanted or f"{kind}.{value}" == wanted)


@dataclass(frozen=True, slots=True)
class EventFilter:
    """What one subscriber asked to see. Each field applies only to its own channel."""

    speaker: str | None = None  # chat: speaker alias or actor id
    chat_type: int | None = None  # chat: 0-4
    whisper_only: bool = False  # chat
    viewer: Viewer | None = None  # chat: what this user may see; rolls: this user's rolls
    hooks: frozenset[str] | None = None  # hooks: these hook names
    encounter_id: str | None = None  # combat
    actor_uuid: str | None = None  # actor
    scene_id: str | None = None  # scene

    @property
    def filters_content(self) -> bool:
        """True when the chat filters need the message itself to decide."""
        return self.speaker is not None or self.chat_type is not None or self.whisper_only

    def matches(self, event: StreamEvent) -> bool:
        """Whether this subscriber gets the event."""
        channel = event.channel
        data = event.data
        if channel == protocol.CHAT_CHANNEL:
            return self._matches_chat(event)
        if channel == protocol.ROLL_CHANNEL:
            if self.viewer is None:
                return True
            user = data.get("user")
            return isinstance(user, dict) and user.get("id") == self.viewer.id
        if channel == protocol.HOOK_CHANNEL:
            return self.hooks is None or event.name in self.hooks
        if channel == protocol.COMBAT_CHANNEL:
            return self.encounter_id is None or data.get("encounterId") == self.encounter_id
        if channel == protocol.ACTOR_CHANNEL:
            return self.actor_uuid is None or _same_doc(
                data.get("actorUuid"), self.actor_uuid, "Actor"
            )
        if channel == protocol.SCENE_CHANNEL:
            return self.scene_id is None or _same_doc(data.get("sceneId"), self.scene_id, "Scene")
        return False

    def _matches_chat(self, event: StreamEvent) -> bool:
        message = event.subject
        if message is None:  # a delete of a message the relay never saw: it names only an id
            return not self.filters_content
        if self.viewer is not None and not can_see(message, self.viewer):
            return False
        if self.whisper_only and not message.get("whisper"):
            return False
        if self.chat_type is not None and chat_type_of(message) != self.chat_type:
            return False
        if self.speaker is not None:
            speaker = message.get("speaker")
            if not isinstance(speaker, dict):
                return False
            actor = speaker.get("actor")
            if speaker.get("alias") != self.speaker and not _same_doc(actor, self.speaker, "Actor"):
                return False
        return True


def parse_hooks(value: str | None) -> frozenset[str] | None:
    """`createActor, updateActor` -> {"createActor", "updateActor"}; empty -> None (all hooks)."""
    if value is None:
        return None
    names = frozenset(part.strip() for part in value.split(",") if part.strip())
    return names or None


# Framing -----------------------------------------------------------------------------------------


def dumps(value: Any) -> bytes:
    """Single-line JSON (orjson escapes newlines inside strings)."""
    return orjson.dumps(value)


def sse_frame(name: str, data: bytes, event_id: int | None = None) -> bytes:
    """`id: <n>` / `event: <name>` / `data: <json>` and the blank line that ends an event."""
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


SSE_KEEPALIVE: Final = b": keepalive\n\n"


@dataclass(slots=True)
class LoggedEvent:
    """An event with its position in its channel's log; its encodings are built once."""

    seq: int
    event: StreamEvent
    _sse: bytes | None = field(default=None, repr=False)
    _ws: bytes | None = field(default=None, repr=False)
    _data: bytes | None = field(default=None, repr=False)
    _chunk: bytes | None = field(default=None, repr=False)

    @property
    def data_json(self) -> bytes:
        """The event's data as single-line JSON."""
        if self._data is None:
            self._data = dumps(self.event.data)
        return self._data

    @property
    def sse(self) -> bytes:
        """The SSE frame: `id:`, `event:`, `data:` lines and a blank line."""
        if self._sse is None:
            self._sse = sse_frame(self.event.name, self.data_json, self.seq)
        return self._sse

    @property
    def sse_chunk(self) -> bytes:
        """The SSE frame as one HTTP/1.1 chunk (`<hex length>\r\n<frame>\r\n`)."""
        if self._chunk is None:
            frame = self.sse
            self._chunk = b"%x\r\n" % len(frame) + frame + b"\r\n"
        return self._chunk

    @property
    def ws(self) -> bytes:
        """The /ws/api frame: `{"type":"chat-event","event":"chat-create","id":7,"data":...}`;
        a hook event also names its hook at the top level, as the reference relay sends it
        (`{"type":"hook-event","event":"createActor","id":7,"hook":"createActor","data":...}`)."""
        if self._ws is None:
            fields: dict[str, Any] = {
                "type": WS_EVENT_TYPE[self.event.channel],
                "event": self.event.name,
                "id": self.seq,
            }
            if self.event.channel == protocol.HOOK_CHANNEL:
                fields["hook"] = self.event.name
            head = dumps(fields)
            self._ws = head[:-1] + b',"data":' + self.data_json + b"}"
        return self._ws


@dataclass(frozen=True, slots=True)
class Gap:
    """Events a reconnecting subscriber missed that are no longer kept."""

    missed_from: int
    oldest_available: int | None

    def as_json(self) -> dict[str, Any]:
        return {"missedFrom": self.missed_from, "oldestAvailable": self.oldest_available}


@dataclass(slots=True)
class Resume:
    """Where a new subscriber starts: its position in the log (`cursor`, the `id` its first
    frames carry), the gap before it if any, the events to replay; `newest` is the newest id the
    snapshot covers (what comes after reaches the subscriber live)."""

    cursor: int
    gap: Gap | None
    replay: list[LoggedEvent]
    newest: int = 0


def parse_last_event_id(value: str | None) -> int | None:
    """The `Last-Event-ID` header as a position, or None when absent or not ours."""
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit():
        return None
    return int(value)


class EventLog:
    """The bounded history of one world's channel: events numbered 1, 2, 3 ... in order.

    At most `capacity` events and about `max_bytes` of their JSON are kept (the newest event is
    always kept). A subscriber that last saw position `n` can ask for everything after it; when
    some of it has already been dropped, a `Gap` says so.
    """

    def __init__(self, capacity: int, max_bytes: int | None = None) -> None:
        self.capacity = max(0, capacity)
        self.max_bytes = max_bytes
        self.last_seq = 0
        self.size = 0  # bytes of JSON kept
        self._events: deque[LoggedEvent] = deque()

    def __len__(self) -> int:
        return len(self._events)

    def append(self, event: StreamEvent) -> LoggedEvent:
        self.last_seq += 1
        logged = LoggedEvent(self.last_seq, event)
        if not self.capacity:
            return logged
        events = self._events
        events.append(logged)
        self.size += len(logged.data_json)
        while len(events) > self.capacity or (
            self.max_bytes is not None and self.size > self.max_bytes and len(events) > 1
        ):
            self.size -= len(events.popleft().data_json)
        return logged

    @property
    def oldest_seq(self) -> int | None:
        return self._events[0].seq if self._events else None

    def since(self, last_seen: int) -> tuple[int, Gap | None, list[LoggedEvent]]:
        """Events after position `last_seen`, the gap before them if some were dropped, and the
        position the subscriber resumes from (`plan_resume`)."""
        return plan_resume(last_seen, self.last_seq, self.oldest_seq, self._events)


def plan_resume(
    last_seen: int, last_seq: int, oldest: int | None, kept: Iterable[LoggedEvent]
) -> tuple[int, Gap | None, list[LoggedEvent]]:
    """Where a subscriber that last saw `last_seen` resumes in a log whose newest id is
    `last_seq` and oldest kept one `oldest` (None: nothing kept), given the events kept (all of
    them, or at least those after `last_seen`): (cursor, gap or None, events to replay).

    A position beyond the log's end (the relay or its history restarted since) cannot be
    trusted: it is announced as a gap and everything kept is replayed, resuming from position 0.
    """
    if last_seen > last_seq:
        return 0, Gap(last_seen + 1, oldest), list(kept)
    if last_seen == last_seq:
        return last_seen, None, []
    gap = None
    if oldest is None or oldest > last_seen + 1:
        gap = Gap(last_seen + 1, oldest)
    return last_seen, gap, [e for e in kept if e.seq > last_seen]
