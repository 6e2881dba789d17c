"""Shared parts of the dnd5e actions: reading parameters, the module's actor and item
resolution variants (world-behaviour §2.2-2.3: their not-found texts differ), saving an actor,
its chat speaker, and rolling d20 tests for a reply and a chat card."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from vttrelay.world.errors import ActionError, DiceError
from vttrelay.world.model import documents
from vttrelay.world.rules.dice import Roll
from vttrelay.world.runtime.context import ActionContext

# Parameters ---------------------------------------------------------------------------------


def text(frame: dict[str, Any], key: str) -> str | None:
    """A non-empty string parameter, else None."""
    value = frame.get(key)
    return value if isinstance(value, str) and value != "" else None


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def number(frame: dict[str, Any], key: str) -> float | None:
    """A numeric parameter (not a bool), else None."""
    value = frame.get(key)
    return value if is_number(value) else None


def flag(frame: dict[str, Any], key: str, default: bool = False) -> bool:
    value = frame.get(key)
    return value if isinstance(value, bool) else default


def check_choice(value: str, name: str, valid: Iterable[str], plural: str) -> None:
    """`Invalid <name> '<value>'. Valid <plural>: <valid, joined>` unless `value` is valid."""
    if value not in valid:
        raise ActionError(f"Invalid {name} '{value}'. Valid {plural}: {', '.join(valid)}")


# Resolution (world-behaviour §2.2, §2.3) ------------------------------------------------------


def actor_uuid(actor: dict[str, Any]) -> str:
    """`actor.uuid`: a token's synthetic actor answers with its token actor uuid."""
    return documents.actor_uuid_of(actor)


def actor_from_uuid(ctx: ActionContext, uuid: str) -> dict[str, Any] | None:
    resolved = documents.resolve_uuid(ctx.tx, uuid)
    if resolved is None:
        return None
    if resolved.kind == "Actor":
        return resolved.doc
    if resolved.kind == "Token":
        return resolved.actor
    return None


def actor_direct(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """`fromUuid(actorUuid)`: `actorUuid is required` / `Actor not found with UUID: <uuid>`."""
    uuid = text(frame, "actorUuid")
    if uuid is None:
        raise ActionError("actorUuid is required")
    return actor_direct_checked(ctx, uuid)


def actor_direct_checked(ctx: ActionContext, uuid: str) -> dict[str, Any]:
    actor = actor_from_uuid(ctx, uuid)
    if actor is None:
        raise ActionError(f"Actor not found with UUID: {uuid}")
    return actor


def require_actor_or_selected(frame: dict[str, Any]) -> None:
    if text(frame, "actorUuid") is None and frame.get("selected") is not True:
        raise ActionError("Either actorUuid or selected must be provided")


def actor_or_selected(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """`actorUuid`, else the first selected token's actor (rests, experience)."""
    uuid = text(frame, "actorUuid")
    if uuid is not None:
        actor = actor_from_uuid(ctx, uuid)
        if actor is None:
            raise ActionError("Actor not found")
        return actor
    actor = selected_actor(ctx)
    if actor is None:
        raise ActionError("Actor not found")
    return actor


def selected_actor(ctx: ActionContext) -> dict[str, Any] | None:
    """The actor of the GM's first controlled token (`No token selected` when none is); None
    if that token's actor is gone."""
    tokens = ctx.selected_tokens()
    if not tokens:
        raise ActionError("No token selected")
    scene = documents.active_scene(ctx.tx)
    return documents.token_actor(ctx.tx, scene, tokens[0]) if scene is not None else None


def resolve_actor(
    ctx: ActionContext,
    frame: dict[str, Any],
    uuid_key: str = "actorUuid",
    name_key: str = "actorName",
    *,
    allow_selected: bool = False,
) -> dict[str, Any]:
    """`resolveActor`: uuid (an Actor, or a Token's actor) else a world actor by name; with
    `allow_selected` and `selected: true`, the selected token's actor when neither is given
    (spec §4.0: `actorUuid` is optional if `selected` is true)."""
    uuid, name = text(frame, uuid_key), text(frame, name_key)
    if uuid is None and name is None:
        if allow_selected and frame.get("selected") is True:
            selected = selected_actor(ctx)
            if selected is None:
                raise ActionError("Actor not found: selected token")
            return selected
        raise ActionError(f"{uuid_key} or {name_key} is required")
    actor = (
        actor_from_uuid(ctx, uuid)
        if uuid is not None
        else documents.find_named(ctx.tx, "Actor", name)
    )
    if actor is None:
        raise ActionError(f"Actor not found: {uuid if uuid is not None else name}")
    return actor


def resolve_item(
    ctx: ActionContext, actor: dict[str, Any], frame: dict[str, Any]
) -> dict[str, Any]:
    """`resolveItem` (equip/attune): uuid's last segment, or the full uuid, else the name."""
    uuid, name = text(frame, "itemUuid"), text(frame, "itemName")
    if uuid is None and name is None:
        raise ActionError("itemUuid or itemName is required")
    items = actor.get("items") or []
    item: dict[str, Any] | None = None
    if uuid is not None:
        item_id = uuid.rsplit(".", 1)[-1]
        item = next((i for i in items if i.get("_id") == item_id), None)
        if item is None:
            item = next((i for i in items if f"{actor_uuid(actor)}.Item.{i['_id']}" == uuid), None)
    else:
        item = documents.find_by_name(items, name)
    if item is None:
        raise ActionError(
            f"Item not found on actor {actor.get('name', '')}: {uuid if uuid is not None else name}"
        )
    return item


def save_actor(ctx: ActionContext, actor: dict[str, Any], *items: dict[str, Any]) -> None:
    now = ctx.now_ms()
    user_id = ctx.acting_user_id
    for item in items:
        documents.touch_stats(item, now, user_id)
    documents.touch_stats(actor, now, user_id)
    documents.put_actor(ctx.tx, actor)


def speaker_for(ctx: ActionContext, actor: dict[str, Any]) -> dict[str, Any]:
    """The chat speaker of an actor: its token on the active scene, if it has one (a token's
    synthetic actor: that token)."""
    scene = documents.active_scene(ctx.tx)
    token = None
    if isinstance(actor, documents.TokenActor):
        scene = ctx.tx.get("Scene", actor.scene_id)
        token = next(
            (t for t in (scene or {}).get("tokens") or [] if t.get("_id") == actor.token_id), None
        )
    elif scene is not None:
        token = next(
            (t for t in scene.get("tokens") or [] if t.get("actorId") == actor["_id"]), None
        )
    return {
        "scene": scene["_id"] if scene is not None and token is not None else None,
        "actor": actor["_id"],
        "token": token["_id"] if token is not None else None,
        "alias": token.get("name") if token is not None else actor.get("name", ""),
    }


def roll_message(
    ctx: ActionContext, actor: dict[str, Any], roll: Roll, flavor: str, roll_flags: dict[str, Any]
) -> dict[str, Any]:
    return ctx.create_chat_message(
        content=str(roll.total),
        speaker=speaker_for(ctx, actor),
        flavor=flavor,
        rolls=[roll.to_chat()],
        flags={"dnd5e": {"roll": roll_flags}},
    )


def roll_reply(roll: Roll) -> dict[str, Any]:
    return {"total": roll.total, "formula": roll.formula, "result": roll.result}


def roll_options(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """advantage / disadvantage / bonus of a d20 roll; a bonus that is not a formula fails."""
    bonus = frame.get("bonus")
    if bonus is not None and not isinstance(bonus, str | int | float):
        raise ActionError("bonus must be a string")
    text_bonus = str(bonus).strip() if bonus is not None else ""
    if text_bonus:
        try:
            ctx.dice.check(re.sub(r"@[A-Za-z_][\w.]*", "0", text_bonus.lstrip("+")))
        except DiceError as exc:
            raise ActionError(f"Invalid bonus formula '{text_bonus}'") from exc
    return {
        "advantage": flag(frame, "advantage"),
        "disadvantage": flag(frame, "disadvantage"),
        "bonus": text_bonus or None,
    }
