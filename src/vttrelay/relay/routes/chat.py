"""The chat routes: read, send and delete chat messages."""

from __future__ import annotations

from typing import Final

from vttrelay.protocol import CHAT_CONTENT_MAX, FLAVOR_MAX
from vttrelay.relay.routes.common import B, P, Q, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Chat"

CHAT_PAGE_MAX: Final = 1_000  # chat messages per GET /chat page

ROUTES: Final = (
    forward(
        "GET",
        "/chat",
        "chat-messages",
        "List chat messages, newest first.",
        NAME,
        Param(
            "limit",
            "integer",
            Q,
            default=10,
            minimum=0,
            maximum=CHAT_PAGE_MAX,
            description="At most this many (default 10).",
        ),
        Param("offset", "integer", Q, default=0, minimum=0, description="Messages to skip."),
        Param("chatType", "integer", Q, description="0 OOC, 1 IC, 2 emote, 3 whisper, 4 roll."),
        Param("speaker", "string", Q, description="Speaker name or actor id."),
        scope="chat:read",
        sdk=Sdk("messages", "Envelope[ChatPage]"),
    ),
    forward(
        "POST",
        "/chat",
        "chat-send",
        "Send a chat message.",
        NAME,
        Param(
            "content",
            "string",
            B,
            required=True,
            max_length=CHAT_CONTENT_MAX,
            description="Message text (HTML).",
        ),
        Param(
            "whisper",
            "array",
            B,
            max_bytes=65_536,
            description="User ids to whisper to.",
            sdk_type="Sequence[str]",
        ),
        Param("speaker", "string", B, description="Actor id or uuid speaking."),
        Param("alias", "string", B, description="Display name of the speaker."),
        Param("chatType", "integer", B, description="0 OOC, 1 IC, 2 emote, 3 whisper, 4 roll."),
        Param("flavor", "string", B, max_length=FLAVOR_MAX, description="Flavor text."),
        scope="chat:write",
        sdk=Sdk("send", "Envelope[ChatMessage]"),
    ),
    forward(
        "DELETE",
        "/chat/{messageId}",
        "chat-delete",
        "Delete one chat message (its author or a GM).",
        NAME,
        Param("messageId", "string", P, required=True, description="Message id."),
        scope="chat:write",
        sdk=Sdk("delete", "Envelope[ChatDeleted]"),
    ),
    forward(
        "DELETE",
        "/chat",
        "chat-flush",
        "Delete all chat history (GM only).",
        NAME,
        scope="chat:write",
        sdk=Sdk("flush", "Envelope[Message]"),
    ),
)

GROUP: Final = Group(NAME, "chat", ROUTES)
