"""Short and long rests (world-behaviour §3.3) as actions: resolve the actor (`actorUuid` or
the selected token), gate on ownership, run the pure rest rules, put the actor, and post the hit
die rolls and the rest summary to chat, all in the action's one transaction.

`VTTRELAY_CRASH_AFTER=<action>` (tests only) kills the process after the rest's writes are put
but before the transaction commits: the database must show the actor as it was.
"""

from __future__ import annotations

import os
from typing import Any, Final

from vttrelay.world.actions.dnd5e.common import (
    actor_or_selected,
    actor_uuid,
    flag,
    is_number,
    require_actor_or_selected,
    save_actor,
    speaker_for,
)
from vttrelay.world.errors import ActionError
from vttrelay.world.rules.permissions import assert_owner
from vttrelay.world.rules.rests import RestOutcome, long_rest, short_rest
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

CRASH_ENV: Final = "VTTRELAY_CRASH_AFTER"
RULES_SETTING: Final = "dnd5e.rulesVersion"  # "modern" (2024, default) or "legacy" (2014)
REST_TYPES: Final = ("character", "npc")


def _crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os._exit(1)


def _finish(ctx: ActionContext, name: str, actor: dict[str, Any], out: RestOutcome) -> None:
    save_actor(ctx, out.actor)
    speaker = speaker_for(ctx, actor)
    for roll in out.hit_die_rolls:
        ctx.create_chat_message(
            content=str(roll.total),
            speaker=speaker,
            flavor="Roll Hit Die",
            rolls=[roll.to_chat()],
            flags={"dnd5e": {"roll": {"type": "hitDie"}}},
        )
    ctx.create_chat_message(
        content=out.content,
        speaker=speaker,
        flavor=out.flavor,
        msg_type="rest",
        flags={"dnd5e": {"rest": {"type": out.result["type"]}}},
    )
    _crash_point(name)


@action("short-rest")
def short_rest_action(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    require_actor_or_selected(frame)
    actor = actor_or_selected(ctx, frame)
    assert_owner(ctx, actor, "perform a short rest on")
    threshold = frame.get("autoHDThreshold")
    if threshold is None:
        threshold = 1.0
    elif not is_number(threshold) or not 0 <= threshold <= 1:
        raise ActionError("autoHDThreshold must be a number from 0 to 1 (a fraction of max HP)")
    if actor.get("type") not in REST_TYPES:
        return {"data": {"actorUuid": actor_uuid(actor), "result": {"completed": True}}}
    out = short_rest(
        actor,
        ctx.dice,
        auto_hd=flag(frame, "autoHD"),
        threshold=float(threshold),
        new_day=flag(frame, "newDay"),
    )
    _finish(ctx, "short-rest", actor, out)
    return {"data": {"actorUuid": actor_uuid(actor), "result": out.result}}


@action("long-rest")
def long_rest_action(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    require_actor_or_selected(frame)
    actor = actor_or_selected(ctx, frame)
    assert_owner(ctx, actor, "perform a long rest on")
    if actor.get("type") not in REST_TYPES:
        return {"data": {"actorUuid": actor_uuid(actor), "result": {"completed": True}}}
    rules = ctx.setting(RULES_SETTING, "modern")
    out = long_rest(
        actor,
        ctx.dice,
        new_day=flag(frame, "newDay", True),
        rules=rules if rules in ("modern", "legacy") else "modern",
    )
    _finish(ctx, "long-rest", actor, out)
    return {"data": {"actorUuid": actor_uuid(actor), "result": out.result}}
