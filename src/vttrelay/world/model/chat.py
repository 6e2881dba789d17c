"""Chat-message rules: who may see a message, what a `speaker` filter matches, its chat type
number and the time a chat list is ordered by. Plain functions over a ChatMessage document.

The world's store keeps what these functions say about each message in its chat index
(`ChatIndexValues`, taken when the message is written), so that `GET /chat` can filter, count
and page messages without reading every one of them (a page holds at most `PAGE_BYTES` of
messages); `documents.can_see_message` and the chat
actions decide with the same functions, so the index and the documents never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from vttrelay.protocol import CHAT_CONTENT_MAX, FLAVOR_MAX

# Bytes of chat messages one page of `GET /chat` holds: a page stops before the message that
# would pass it (but always holds one), so `limit` = 1,000 can't answer 100 MB.
PAGE_BYTES: Final = 4 * 1024 * 1024

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


def text_problem(content: str, flavor: str) -> str | None:
    """The error for a chat message's text past the limits the relay applies to POST /chat
    (`protocol.CHAT_CONTENT_MAX`, `FLAVOR_MAX`), or None: what a script or another relay
    writing a message gets."""
    if len(content) > CHAT_CONTENT_MAX:
        return f"content is too long (at most {CHAT_CONTENT_MAX} characters)"
    if len(flavor) > FLAVOR_MAX:
        return f"flavor is too long (at most {FLAVOR_MAX} characters)"
    return None


def page_cut(sizes: list[int], budget: int = PAGE_BYTES) -> int:
    """How many of a page's messages (their sizes in bytes, in page order) fit in `budget`:
    at least one (when there is one), then as long as the total stays within it."""
    total = 0
    for count, size in enumerate(sizes):
        total += size
        if total > budget and count > 0:
            return count
    return len(sizes)


def fits_int64(value: int) -> bool:
    """True if SQLite can hold the integer as one (the chat index's integer columns)."""
    return INT64_MIN <= value <= INT64_MAX


def chat_type_of(doc: dict[str, Any]) -> int:
    """The message's chat type number 0-4 (flags.vttrelay.chatType)."""
    flags = doc.get("flags")
    ours = flags.get("vttrelay") if isinstance(flags, dict) else None
    value = ours.get("chatType", 0) if isinstance(ours, dict) else 0
    return int(value) if isinstance(value, int | float) else 0


def message_time(doc: dict[str, Any]) -> int | float:
    """The time a chat list orders the message by: its `timestamp` when that is a number, else 0
    (a message without one, or with one that is not a number, sorts as the oldest)."""
    value = doc.get("timestamp", 0)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if fits_int64(value) else float(value)
    return value if isinstance(value, float) else 0


def message_audience(doc: dict[str, Any]) -> list[str] | None:
    """Who sees the message besides game masters: None for everyone (it is not a whisper),
    else the ids of its whisper recipients and of its author."""
    whisper = doc.get("whisper") or []
    if not whisper:
        return None
    ids = [w for w in whisper if isinstance(w, str)] if isinstance(whisper, list) else []
    author = doc.get("author")
    if isinstance(author, str):
        ids.append(author)
    return list(dict.fromkeys(ids))


def speaker_keys(doc: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """What a `speaker` filter matches: the speaker's alias, its actor id and that actor's uuid
    (`Actor.<id>`, as `documents.actor_uuid` writes it); None where the message has none."""
    speaker = doc.get("speaker") or {}
    if not isinstance(speaker, dict):
        return (None, None, None)
    alias, actor = speaker.get("alias"), speaker.get("actor")
    return (
        alias if isinstance(alias, str) else None,
        actor if isinstance(actor, str) else None,
        f"Actor.{actor}" if actor is not None else None,
    )


def speaker_matches(doc: dict[str, Any], wanted: str) -> bool:
    """True if the `speaker` filter `wanted` names the message's speaker (alias or actor)."""
    return wanted in speaker_keys(doc)


@dataclass(frozen=True)
class ChatIndexValues:
    """One message's row of the store's chat index."""

    time: int | float
    chat_type: int | None  # None when outside SQLite's integer range (matches no filter)
    audience: list[str] | None
    alias: str | None
    actor: str | None
    actor_uuid: str | None


def index_values(doc: dict[str, Any]) -> ChatIndexValues:
    """The chat index row of a ChatMessage document."""
    chat_type = chat_type_of(doc)
    return ChatIndexValues(
        message_time(doc),
        chat_type if fits_int64(chat_type) else None,
        message_audience(doc),
        *speaker_keys(doc),
    )
