"""The chat tools: read the latest messages, post one."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import (
    READ,
    Tool,
    dry,
    flags,
    plain,
)


async def read_chat(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.chat.messages(limit=args.get("limit", 10))
    data = plain(reply.get("data") or {})
    return {"total": data.get("total"), "messages": views.chat_view(data.get("messages") or [])}


async def send_chat(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.chat.send(
        args["content"], alias=args.get("alias"), flavor=args.get("flavor")
    )
    return views.chat_view([plain(reply.get("data") or {})])[0]


async def preview_send_chat(relay: Relay, args: dict[str, Any]) -> Any:
    params = flags(args, "content", "alias", "flavor")
    who = f" as {args['alias']}" if args.get("alias") else ""
    text = views.plain_text(args["content"])
    return dry("chat-send", params, change=f"would post {text!r}{who}")


TOOLS: tuple[Tool, ...] = (
    Tool(
        "read_chat",
        "The latest chat messages (newest first) as speaker and plain text, with roll totals.",
        {"limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}},
        scopes=("chat:read",),
        run=read_chat,
        annotations=READ,
    ),
    Tool(
        "send_chat",
        "Post a chat message to the table, optionally under another speaker name.",
        {
            "content": {"type": "string", "description": "The message (HTML allowed)."},
            "alias": {"type": "string", "description": "Speaker name to show."},
            "flavor": {"type": "string", "description": "A short heading."},
        },
        ("content",),
        scopes=("chat:write",),
        run=send_chat,
        preview=preview_send_chat,
    ),
)
