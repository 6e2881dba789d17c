"""Roll actions (endpoints-beyond-seed §3): `roll` (POST /roll), `rolls` (GET /rolls) and
`last-roll` (GET /lastroll).

Order as the module: (unknown userId, by the dispatcher; no gate) -> speaker -> roll -> the chat
message when `createChatMessage` is true -> the recent-rolls entry. A formula the dice library
cannot roll fails with `Failed to roll formula: <message>` and changes nothing.

The recent-rolls list lives in the world's memory (newest first, at most 20, lost on restart, as
in the module). The module fills it from /roll and, only while a roll subscriber exists, from
chat messages with rolls; this world records every roll (deliberately: the dnd5e endpoints' rolls
too, subscriber or not). A /roll roll goes out on the roll stream once: as its chat message's
roll when it posts one, else as its own entry.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.actions.chat import whisper_recipients
from vttrelay.world.errors import ActionError, DiceError
from vttrelay.world.model import documents
from vttrelay.world.rules import rolls as rules
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}


def roll_speaker(ctx: ActionContext, ref: Any) -> dict[str, Any]:
    """The speaker of a /roll: a Token uuid -> `{token, actor, scene, alias}`; an Actor uuid ->
    the same with its token on the active scene, else `{actor, alias}`; with no active scene, an
    unknown uuid or anything else -> `{}` (the module only logs these)."""
    resolved = documents.resolve_uuid(ctx.tx, ref) if isinstance(ref, str) and ref else None
    if resolved is None:
        return {}
    if resolved.kind == "Token":
        token, actor = resolved.doc, resolved.actor
        scene_id = resolved.scene["_id"] if resolved.scene else None
        return {
            "token": token["_id"],
            "actor": actor["_id"] if actor else None,
            "scene": scene_id,
            "alias": token.get("name") or (actor or {}).get("name", ""),
        }
    if resolved.kind != "Actor":
        return {}
    actor = resolved.doc
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        return {}
    tokens: list[dict[str, Any]] = list(scene.get("tokens") or ())
    on_scene = next((t for t in tokens if t.get("actorId") == actor["_id"]), None)
    if on_scene is None:
        return {"actor": actor["_id"], "alias": actor.get("name", "")}
    return {
        "token": on_scene["_id"],
        "actor": actor["_id"],
        "scene": scene["_id"],
        "alias": on_scene.get("name") or actor.get("name", ""),
    }


@action("roll", error_extra=FAILED)
def roll(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Roll a formula; post it to chat when asked; record it in the recent-rolls list."""
    speaker = roll_speaker(ctx, frame.get("speaker"))
    formula = frame.get("formula")
    text = formula if isinstance(formula, str) else "" if formula is None else str(formula)
    try:
        result = ctx.dice.roll(text)
    except DiceError as exc:
        raise ActionError(f"Failed to roll formula: {exc}") from None
    now = ctx.now_ms()
    data = rules.roll_data(result, text, now)
    roll_id = rules.manual_roll_id(now, ctx.random)
    flavor = frame.get("flavor")
    flavor = "" if flavor is None else flavor
    chat = frame.get("createChatMessage") is True
    if chat:
        ctx.create_chat_message(
            content=str(result.total),
            speaker=speaker,
            flavor=flavor if isinstance(flavor, str) else str(flavor),
            rolls=[
                {key: data[key] for key in ("formula", "total", "isCritical", "isFumble", "dice")}
            ],
            whisper=whisper_recipients(ctx, frame.get("whisper") or None),
        )
    entry = rules.manual_entry(
        roll_id, chat_created=chat, speaker=speaker, flavor=flavor, data=data
    )
    ctx.record_roll(entry, emit=not chat)
    return {"success": True, "data": {"id": roll_id, "chatMessageCreated": chat, "roll": data}}


@action("rolls")
def rolls(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The recent rolls, newest first (`limit`, default and at most 20)."""
    return {"data": ctx.recent_rolls()[: rules.list_limit(frame.get("limit"))]}


@action("last-roll")
def last_roll(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The newest recent roll, or null."""
    recent = ctx.recent_rolls()
    return {"data": recent[0] if recent else None}
