"""The wire protocol between a relay and a world: the only module both sides import.

A world (the Foundry module, or our embedded world) connects out to the relay's `/relay`
WebSocket, sends `{"type": "auth", "token": ...}` first, and then exchanges one JSON object per
text frame. Requests to the world are flat: `{"type": <action>, "requestId": ..., <params>...}`;
replies are `{"type": "<action>-result", "requestId": ..., ...}`. Events flow from the world only
for channels the relay has switched on with `event-subscription-update`.

See `shared/reference/wire-protocol.md` sections 2, 3 and 5 for the full story.
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any, Final, Literal, TypedDict

# Frame types exchanged on /relay ----------------------------------------------------------------

AUTH: Final = "auth"
AUTH_SUCCESS: Final = "auth-success"
PING: Final = "ping"
PONG: Final = "pong"
PLAYER_LIST: Final = "player-list"
# a world asks for its account's other worlds (accounts-auth.md §7.12), answered with the result
GET_KNOWN_CLIENTS: Final = "get-known-clients"
KNOWN_CLIENTS_RESULT: Final = "known-clients-result"
# a world's call to another world of its account through the relay (the cross-world tunnel),
# answered with `remote-response`
REMOTE_REQUEST: Final = "remote-request"
REMOTE_RESPONSE: Final = "remote-response"
# a world reports something done in it (a setting changed, ...) for its owner's activity log:
# `{type, event, details, actor, world}` (wire-protocol.md §3), never answered
MODULE_NOTIFY: Final = "module-notify"
KNOWN_CLIENTS_FAILED: Final = "failed to retrieve known clients"
KNOWN_CLIENTS_BUSY: Final = "a get-known-clients request is already being answered"


def known_clients_error(request_id: str, text: str) -> dict[str, Any]:
    """A refused `get-known-clients`: the result type, no clients, the error."""
    return {"type": KNOWN_CLIENTS_RESULT, "requestId": request_id, "clients": [], "error": text}


SUBSCRIPTION_UPDATE: Final = "event-subscription-update"

RESULT_SUFFIX: Final = "-result"


def result_type(action: str) -> str:
    """The reply type of an action: `skill-check` -> `skill-check-result`."""
    return action + RESULT_SUFFIX


# Typed frames: the shapes of the control frames both sides write and read -----------------------


class AuthFrame(TypedDict):
    """The world's first frame on /relay: its connection token."""

    type: Literal["auth"]
    token: str


class AuthSuccessFrame(TypedDict):
    """The relay's answer once the world is registered (after the duplicate-id check)."""

    type: Literal["auth-success"]


class PingFrame(TypedDict):
    """An application-level ping (the module sends one every `pingInterval` seconds)."""

    type: Literal["ping"]


class PongFrame(TypedDict):
    """The answer to a `PingFrame`."""

    type: Literal["pong"]


class WorldUser(TypedDict, total=False):
    """A user of a world as `player-list` names it (`role` 3 and up: a GM)."""

    id: str
    name: str
    role: int
    active: bool


class PlayerListFrame(TypedDict):
    """The world's users, sent after `auth-success` and whenever they change."""

    type: Literal["player-list"]
    users: list[WorldUser]


class SubscriptionUpdateFrame(TypedDict):
    """How many subscribers a channel has: the world sends its events while `count` > 0."""

    type: Literal["event-subscription-update"]
    channel: str
    count: int


class EventFrame(TypedDict):
    """An event of a channel the relay switched on: `type` is a key of `EVENT_FRAME_CHANNEL`
    and `data` the event's payload (a world document or a change to one: free-form JSON)."""

    type: str
    data: dict[str, Any]


def subscription_update(channel: str, count: int) -> SubscriptionUpdateFrame:
    """The frame that tells a world a channel's subscriber count."""
    return {"type": SUBSCRIPTION_UPDATE, "channel": channel, "count": count}


# Query parameters the module puts on the /relay URL (wire-protocol §2.1). `id` is required.
WORLD_QUERY_KEYS: Final = (
    "id",
    "worldId",
    "worldTitle",
    "foundryVersion",
    "systemId",
    "systemTitle",
    "systemVersion",
    "customName",
)


# Identifiers a world or a client chooses (client ids, world ids; DESIGN §6 item 11): letters,
# digits, `_`, `-` and `.`, not starting with `.`, at most 128 characters. Such an id is safe as
# one URL path segment (never `.`, `..` or a `/`), in a query, in HTML and in a log line. The
# module's ids (`fvtt_<16 hex>`), Foundry's world ids and the embedded world's all match.
ID_PATTERN: Final = r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}"
_ID = re.compile(ID_PATTERN)
INVALID_CLIENT_ID: Final = "Invalid client ID"
INVALID_WORLD_ID: Final = "Invalid world ID"
# An account its operator disabled (`vttrelay accounts disable`): the 403 of its sessions and
# keys, and the reason its worlds are closed with (4005: the module keeps its token and retries)
ACCOUNT_DISABLED: Final = "Account disabled"


def valid_id(text: object) -> bool:
    """Whether `text` is an identifier a world or client may choose (`ID_PATTERN`)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


class Close(IntEnum):
    """WebSocket close codes on /relay and how the module reacts to each (wire-protocol §2.3)."""

    NORMAL = 1000  # replaced by a reconnect from the same host: the module stops for good
    GOING_AWAY = 1001  # relay shutting down: the module reconnects with backoff
    AUTH_FAILED = 1008  # unknown token: the module wipes its token and asks to pair again
    INTERNAL_ERROR = 1011  # transient: the module reconnects
    SERVICE_RESTART = 1012  # transient: the module reconnects
    AUTH_PROTOCOL = 4002  # bad/late auth frame, revoked token: the module wipes its token
    DUPLICATE = 4004  # another host holds this client id: the module retries every 30 s
    TRY_AGAIN = 4005  # transient: the module reconnects


# Close codes after which the module gives up and forgets its token.
PERMANENT_CLOSE_CODES: Final = frozenset({Close.AUTH_FAILED, 4001, Close.AUTH_PROTOCOL})


# Event channels ---------------------------------------------------------------------------------

CHAT_CHANNEL: Final = "chat-events"
ROLL_CHANNEL: Final = "roll-events"
HOOK_CHANNEL: Final = "hooks"
COMBAT_CHANNEL: Final = "combat-events"
ACTOR_CHANNEL: Final = "actor-events"
SCENE_CHANNEL: Final = "scene-events"

CHANNELS: Final = (
    CHAT_CHANNEL,
    ROLL_CHANNEL,
    HOOK_CHANNEL,
    COMBAT_CHANNEL,
    ACTOR_CHANNEL,
    SCENE_CHANNEL,
)

# The frame type a world uses for an event, and the channel that switches it on.
EVENT_FRAME_CHANNEL: Final = {
    "chat-event": CHAT_CHANNEL,
    "roll-data": ROLL_CHANNEL,
    "hook-event": HOOK_CHANNEL,
    "combat-event": COMBAT_CHANNEL,
    "actor-event": ACTOR_CHANNEL,
    "scene-event": SCENE_CHANNEL,
}


# Limits both sides apply -------------------------------------------------------------------------

# A chat message's text, whoever writes it: the relay refuses a longer `content` or `flavor`
# (413) and the world refuses one from a script or another relay.
CHAT_CONTENT_MAX: Final = 100_000  # characters of a chat message (a rich item card is ~10,000)
FLAVOR_MAX: Final = 10_000  # characters of a chat message's flavor text
