"""The event stream routes (`/…/subscribe`): Server-Sent Events of the world's events, one
channel each."""

from __future__ import annotations

from typing import Final

from vttrelay import protocol
from vttrelay.relay.routes.common import CLIENT_ID, USER_ID_QUERY, Q
from vttrelay.relay.routes.model import Group, Param, Route, Sdk

NAME: Final = "Events"

HOOK_FILTERS = (
    Param("hooks", "string", Q, description="Comma-separated hook names (hooks stream)."),
    Param("encounterId", "string", Q, description="Only this encounter (encounters stream)."),
    Param("actorUuid", "string", Q, description="Only this actor (actor stream)."),
    Param("sceneId", "string", Q, description="Only this scene (scene stream)."),
)


def _stream(path: str, channel: str, summary: str, *params: Param, sdk: Sdk) -> Route:
    """A stream route; its `sdk` reply is the type of its events' data. Without `clientId` the
    stream finds its world as a REST call does (the key's one world, or the account's only live
    one)."""
    return Route(
        "GET",
        path,
        "stream",
        summary,
        NAME,
        scope="events:subscribe",
        channel=channel,
        params=(CLIENT_ID, *params),
        sdk=sdk,
    )


ROUTES: Final = (
    _stream(
        "/chat/subscribe",
        protocol.CHAT_CHANNEL,
        "Chat events: chat-create, chat-update, chat-delete.",
        Param("speaker", "string", Q, description="Only this speaker (name or actor id)."),
        Param("type", "integer", Q, description="Only this chat type (0-4)."),
        Param("whisperOnly", "boolean", Q, description="Only whispered messages."),
        USER_ID_QUERY,
        sdk=Sdk("chat", "ChatEventData"),
    ),
    _stream(
        "/rolls/subscribe",
        protocol.ROLL_CHANNEL,
        "Dice rolls: roll.",
        USER_ID_QUERY,
        sdk=Sdk("rolls", "RollEventData"),
    ),
    _stream(
        "/hooks/subscribe",
        protocol.HOOK_CHANNEL,
        "Hook events by hook name.",
        *HOOK_FILTERS,
        sdk=Sdk("hooks", "DocumentEventData"),
    ),
    _stream(
        "/encounters/subscribe",
        protocol.COMBAT_CHANNEL,
        "Combat events: combat-<eventType>.",
        *HOOK_FILTERS,
        sdk=Sdk("encounters", "DocumentEventData"),
    ),
    _stream(
        "/actor/subscribe",
        protocol.ACTOR_CHANNEL,
        "Actor events: actor-<eventType>.",
        *HOOK_FILTERS,
        sdk=Sdk("actor", "DocumentEventData"),
    ),
    _stream(
        "/scene/subscribe",
        protocol.SCENE_CHANNEL,
        "Scene events: scene-<eventType>.",
        *HOOK_FILTERS,
        sdk=Sdk("scene", "DocumentEventData"),
    ),
)

GROUP: Final = Group(NAME, "streams", ROUTES)
