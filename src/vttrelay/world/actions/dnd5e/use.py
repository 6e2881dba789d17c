"""use-ability / use-feature / use-spell / use-item (world-behaviour §3.14) with real
consumption: find the item (by uuid, or by name within the endpoint's item types), resolve the
optional target, run the pure use rules (slots, uses, ki, quantities, attack and damage rolls,
healing), start concentration for concentration spells, and post the item's chat card.

Reply `data`: `uuid` (the request's actorUuid), `ability` (the item name), `result` (the chat
card's message id, spec §4.1), for attacks `roll` with per-die results, and `outcome`: what
happened (`outcome_of`): hit or miss against the target's AC, the damage rolled, the target's
saving throw against a save DC (half or no damage on a success), the healing, the target's HP
after, and what was spent. With `applyDamage: true` the damage is taken by the target
(temporary hit points first, not below 0), in the same transaction as the use.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, Final

from vttrelay.world.actions.dnd5e.common import (
    actor_direct,
    actor_uuid,
    flag,
    save_actor,
    speaker_for,
    text,
)
from vttrelay.world.errors import ActionError, UseError
from vttrelay.world.model import documents
from vttrelay.world.rules import concentration as conc
from vttrelay.world.rules.dice import Dice
from vttrelay.world.rules.paths import as_int, get_path
from vttrelay.world.rules.permissions import assert_owner
from vttrelay.world.rules.use import (
    UseOutcome,
    apply_damage,
    apply_healing,
    damage_taken,
    saving_throw,
    use_item,
)
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FEATURE_TYPES: Final = ("feat", "class", "subclass", "background")
NOT_ITEMS: Final = ("feat", "spell", "class", "subclass", "background")

TYPE_FILTERS: Final[dict[str, Callable[[str], bool]]] = {
    "use-ability": lambda t: True,
    "use-feature": lambda t: t in FEATURE_TYPES,
    "use-spell": lambda t: t == "spell",
    "use-item": lambda t: t not in NOT_ITEMS,
}


def _find_ability(
    ctx: ActionContext, actor: dict[str, Any], frame: dict[str, Any], allowed: Callable[[str], bool]
) -> dict[str, Any] | None:
    uuid = text(frame, "abilityUuid")
    items = actor.get("items") or []
    if uuid is not None:
        resolved = documents.resolve_uuid(ctx.tx, uuid)
        if resolved is None or resolved.kind != "Item":
            return None
        # only an item of this actor can be used by it
        return next((i for i in items if i.get("_id") == resolved.doc.get("_id")), None)
    wanted = str(text(frame, "abilityName")).casefold()
    for item in items:
        if str(item.get("name", "")).casefold() == wanted and allowed(str(item.get("type"))):
            return item
    return None


def _target(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any] | None:
    """The target actor (from a Token or Actor uuid, or a token/actor name on the active
    scene); anything unresolvable is ignored."""
    uuid = text(frame, "targetUuid")
    if uuid is not None:
        resolved = documents.resolve_uuid(ctx.tx, uuid)
        if resolved is not None and resolved.kind in ("Actor", "Token"):
            return resolved.actor
        return None
    name = text(frame, "targetName")
    scene = documents.active_scene(ctx.tx)
    if name is None or scene is None:
        return None
    wanted = name.casefold()
    for token in scene.get("tokens") or []:
        actor = documents.token_actor(ctx.tx, scene, token)
        names = {str(token.get("name", "")).casefold()}
        if actor is not None:
            names.add(str(actor.get("name", "")).casefold())
        if wanted in names and actor is not None:
            return actor
    return None


def _card(item_name: str, description: str, notes: list[str]) -> str:
    parts = [f'<div class="dnd5e2 chat-card item-card"><h3>{html.escape(item_name)}</h3>']
    if description:
        parts.append(f'<div class="card-content">{description}</div>')
    if notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    parts.append("</div>")
    return "".join(parts)


def _hp(actor: dict[str, Any]) -> str:
    hp = get_path(actor, "system.attributes.hp") or {}
    return f"{as_int(hp.get('value'), 0)}/{as_int(hp.get('max'), 0)}"


def outcome_of(
    out: UseOutcome, target: dict[str, Any] | None, dice: Dice, *, apply: bool
) -> dict[str, Any]:
    """What the use did to its target: the attack against its AC, the damage (taken when
    `apply`), its saving throw, and its HP after. Changes `target` when damage is applied."""
    outcome: dict[str, Any] = {}
    if out.attack is not None:
        outcome["attack"] = {
            "total": out.attack.total,
            "natural": out.attack.natural,
            "critical": out.attack.is_critical,
            "fumble": out.attack.is_fumble,
        }
        if out.hit is not None:
            outcome["attack"].update(hit=out.hit, ac=out.target_ac)
    saved = False
    if out.save is not None:
        ability, dc, on_save = out.save
        outcome["save"] = {"ability": ability, "dc": dc, "onSave": on_save}
        if target is not None:
            roll, saved = saving_throw(target, ability, dc, dice)
            outcome["save"].update(total=roll.total, success=saved)
            out.rolls.append(roll)
            verdict = "succeeds on" if saved else "fails"
            out.notes.append(f"{target.get('name', '')} {verdict} the save ({roll.total})")
    if out.damage is not None:
        taken = damage_taken(out.damage.total, saved, out.save[2] if out.save else "none")
        outcome["damage"] = {"formula": out.damage.formula, "total": out.damage.total}
        if target is not None:
            outcome["damage"]["taken"] = taken
            outcome["damage"]["applied"] = apply
            if apply:
                lost = apply_damage(target, taken)
                out.notes.append(f"{target.get('name', '')} takes {lost} damage")
    if target is not None:
        outcome["target"] = {
            "name": target.get("name", ""),
            "uuid": actor_uuid(target),
            "hp": _hp(target),
        }
    return outcome


def _use(ctx: ActionContext, frame: dict[str, Any], endpoint: str) -> dict[str, Any]:
    request_uuid = text(frame, "actorUuid")
    if request_uuid is None:
        raise ActionError("actorUuid is required")
    if text(frame, "abilityUuid") is None and text(frame, "abilityName") is None:
        raise ActionError("abilityUuid or abilityName is required")
    actor = actor_direct(ctx, frame)
    assert_owner(ctx, actor, "use abilities on")
    item = _find_ability(ctx, actor, frame, TYPE_FILTERS[endpoint])
    if item is None:
        raise ActionError(f"Ability not found on actor {actor.get('name', '')}")
    target = _target(ctx, frame)
    try:
        out = use_item(actor, item["_id"], ctx.dice, target=target)
    except UseError as exc:
        raise ActionError(str(exc)) from exc
    after = out.actor
    if target is not None and actor_uuid(target) == actor_uuid(actor):
        target = after  # the actor's own changes and the target's are one document
    apply = flag(frame, "applyDamage")
    outcome = outcome_of(out, target, ctx.dice, apply=apply)
    if out.healing:
        healed_actor = after if target is None else target
        healed = apply_healing(healed_actor, out.healing)
        out.notes.append(f"{healed_actor.get('name', '')} regains {healed} hit points")
        outcome["healing"] = healed
        outcome["hp"] = _hp(healed_actor)
    changed_target = out.healing or (apply and "damage" in outcome)
    if target is not None and target is not after and changed_target:
        save_actor(ctx, target)
    if target is not None:
        outcome["target"]["hp"] = _hp(target)
    item_uuid = f"{actor_uuid(actor)}.Item.{item['_id']}"
    if out.concentration:
        current = conc.concentration_effect(after)
        if current is not None:
            conc.remove_effect(after, current["_id"])
        after.setdefault("effects", []).append(
            conc.new_concentration_effect(
                ctx.new_id(),
                spell_name=str(item.get("name", "")),
                origin=item_uuid,
                img=str(item.get("img", "")),
                now_ms=ctx.now_ms(),
            )
        )
        out.notes.append(f"concentrating on {item.get('name', '')}")
    changed_item = [out.item] if out.item is not None else []
    save_actor(ctx, after, *changed_item)
    description = str((item.get("system") or {}).get("description", {}).get("value", ""))
    message = ctx.create_chat_message(
        content=_card(str(item.get("name", "")), description, out.notes),
        speaker=speaker_for(ctx, actor),
        rolls=[r.to_chat() for r in out.rolls],
        flags={
            "dnd5e": {
                "item": {"id": item["_id"], "uuid": item_uuid, "type": item.get("type")},
                "activity": {"type": out.activity_type},
            }
        },
    )
    data: dict[str, Any] = {
        "uuid": request_uuid,
        "ability": item.get("name", ""),
        "result": message["id"],
    }
    if out.attack is not None:
        roll = out.attack
        data["roll"] = {
            "total": roll.total,
            "formula": roll.formula,
            "isCritical": roll.is_critical,
            "isFumble": roll.is_fumble,
            "dice": roll.dice,
        }
    data["outcome"] = {**outcome, "notes": list(out.notes)}  # vttrelay's: what happened
    return {"data": data}


@action("use-ability")
def use_ability(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _use(ctx, frame, "use-ability")


@action("use-feature")
def use_feature(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _use(ctx, frame, "use-feature")


@action("use-spell")
def use_spell(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _use(ctx, frame, "use-spell")


@action("use-item")
def use_item_action(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _use(ctx, frame, "use-item")
