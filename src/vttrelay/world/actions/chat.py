"""Chat actions (world-behaviour §4): chat-messages, chat-send, chat-delete, chat-flush.

Deliberate differences from the module (DESIGN §6): `chatType` filters on the message's chat type
number 0-4 (flags.vttrelay.chatType), `speaker` matches the alias or the actor id, and the list
defaults to 10 messages. Whispers are visible only to their recipients, the author and GMs.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model import documents
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

DEFAULT_LIMIT: Final = 10
FAILED: Final = {"success": False}


def _int_param(value: Any, default: int) -> int:
    """A non-negative integer from a number parameter; `default` when absent or invalid."""
    if isinstance(value, bool) or value is None:
        return default
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        return default
    return max(0, number)


@action("chat-messages", error_extra=FAILED)
def chat_messages(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """List messages newest first, filtered by visibility, chat type and speaker. The store
    filters, counts and pages them on its chat index and reads only the page's messages."""
    limit = _int_param(params.get("limit"), DEFAULT_LIMIT) or DEFAULT_LIMIT
    offset = _int_param(params.get("offset"), 0)
    chat_type = params.get("chatType")
    speaker = params.get("speaker")
    total, page = ctx.tx.chat_page(
        viewer=documents.chat_viewer(ctx.user),
        chat_type=_int_param(chat_type, -1) if chat_type is not None and chat_type != "" else None,
        speaker=speaker if isinstance(speaker, str) and speaker else None,
        offset=offset,
        limit=limit,
    )
    users = documents.users_by_id(ctx.tx)
    return {
        "success": True,
        "data": {
            "messages": [documents.message_to_api(d, users) for d in page],
            "total": total,
            "offset": offset,
            "limit": limit,
        },
    }


def _speaker_for(ctx: ActionContext, ref: Any) -> dict[str, Any] | None:
    """The standard speaker object for an actor id, actor uuid or token uuid; None if unknown."""
    if not isinstance(ref, str) or not ref:
        return None
    tx = ctx.tx
    resolved = documents.resolve_uuid(tx, ref)
    if resolved is None:
        actor = tx.get("Actor", ref)
        token = None
    elif resolved.kind == "Token":
        actor, token = resolved.actor, resolved.doc
    elif resolved.kind == "Actor":
        actor, token = resolved.doc, None
    else:
        return None
    if actor is None:
        return None
    scene = documents.active_scene(tx)
    if token is None and scene is not None:
        token = next(
            (
                t
                for t in scene.get("tokens") or ()
                if t.get("actorId") == actor["_id"] and t.get("actorLink")
            ),
            None,
        )
    return {
        "scene": resolved.scene["_id"] if resolved and resolved.scene else scene and scene["_id"],
        "actor": actor["_id"],
        "token": token["_id"] if token else None,
        "alias": (token or actor).get("name") or actor.get("name", ""),
    }


def whisper_recipients(ctx: ActionContext, whisper: Any) -> list[str]:
    """The ids of the users a `whisper` list names (by id or name), each once; [] for None."""
    if whisper is None:
        return []
    if not isinstance(whisper, list):
        raise ActionError("whisper must be an array of user ids")
    out: list[str] = []
    for ref in whisper:
        user = documents.find_user(ctx.tx, str(ref)) if isinstance(ref, str) and ref else None
        if user is None:
            raise ActionError(f"Failed to create chat message: unknown whisper recipient '{ref}'")
        out.append(user["_id"])
    return list(dict.fromkeys(out))


@action("chat-send", error_extra=FAILED)
def chat_send(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a message; `userId` becomes its author (no permission check, as the module)."""
    content = params.get("content")
    if not isinstance(content, str) or not content:
        raise ActionError("content is required")
    chat_type = params.get("chatType")
    if chat_type is not None:
        number = _int_param(chat_type, -1)
        if number not in range(5) or number != chat_type:
            raise ActionError("chatType must be one of 0, 1, 2, 3, 4")
        chat_type = number
    whisper = whisper_recipients(ctx, params.get("whisper"))
    speaker = _speaker_for(ctx, params.get("speaker")) or {}
    alias = params.get("alias")
    if isinstance(alias, str) and alias:
        speaker["alias"] = alias
    flavor = params.get("flavor")
    flavor = flavor if isinstance(flavor, str) else ""
    problem = chat_rules.text_problem(content, flavor)
    if problem is not None:
        raise ActionError(problem)
    message = ctx.create_chat_message(
        content=content,
        speaker=speaker,
        flavor=flavor,
        whisper=whisper,
        chat_type=chat_type,
    )
    return {"success": True, "data": message}


@action("chat-delete", error_extra=FAILED)
def chat_delete(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one message: its author or a GM."""
    message_id = params.get("messageId")
    doc = ctx.tx.get("ChatMessage", message_id) if isinstance(message_id, str) else None
    if doc is None:
        raise ActionError(f"Chat message not found: {message_id}")
    user = ctx.user
    if not documents.is_gm(user) and user is not None and doc.get("author") != user["_id"]:
        raise ActionError(
            f"User '{user.get('name', '')}' does not have permission to delete this message"
        )
    ctx.tx.delete("ChatMessage", doc["_id"])
    ctx.emit("chat-event", {"eventType": "delete", "data": {"id": doc["_id"]}})
    return {"success": True, "data": {"messageId": doc["_id"]}}


@action("chat-flush", error_extra=FAILED)
def chat_flush(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete every message (GM only)."""
    assert_gm(ctx, "flush chat messages")
    for doc_id in ctx.tx.ids("ChatMessage"):  # no message is parsed to be deleted
        ctx.tx.delete("ChatMessage", doc_id)
        ctx.emit("chat-event", {"eventType": "delete", "data": {"id": doc_id}})
    return {"success": True, "data": {"message": "All chat messages have been deleted"}}
