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

`targetUuids` (vttrelay's own, at most `MAX_TARGETS`) names several targets: the item is used
once (one slot, one use) and its damage or healing rolled once, as the rules do for an area;
each target makes its own saving throw and takes its own damage (half on a success where the
spell says so), answered per target in `outcome.targets`. An attack takes one target (each
attack roll is its own call); a target that cannot be found refuses the whole call.
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
    first_activity,
    saving_throw,
    use_item,
)
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FEATURE_TYPES: Final = ("feat", "class", "subclass", "background")
MAX_TARGETS: Final = 50  # targets one use names (`targetUuids`)
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


def _targets(ctx: ActionContext, frame: dict[str, Any]) -> list[dict[str, Any]]:
    """The target actors `targetUuids` names (each once, in order); ActionError for a uuid
    that names no actor or token, or past `MAX_TARGETS`."""
    uuids = frame.get("targetUuids")
    if uuids is None:
        return []
    if not isinstance(uuids, list) or not all(isinstance(u, str) for u in uuids):
        raise ActionError("targetUuids must be a list of uuids")
    if len(uuids) > MAX_TARGETS:
        raise ActionError(f"At most {MAX_TARGETS} targets can be given in one use")
    found: dict[str, dict[str, Any]] = {}
    for uuid in uuids:
        resolved = documents.resolve_uuid(ctx.tx, uuid)
        if resolved is None or resolved.kind not in ("Actor", "Token") or not resolved.actor:
            raise ActionError(f"Target not found: {uuid}")
        found.setdefault(actor_uuid(resolved.actor), resolved.actor)
    return list(found.values())


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


def _shared(out: UseOutcome) -> dict[str, Any]:
    """What the use did whoever its targets: the attack roll, the save asked, the damage
    rolled."""
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
    if out.save is not None:
        ability, dc, on_save = out.save
        outcome["save"] = {"ability": ability, "dc": dc, "onSave": on_save}
    if out.damage is not None:
        outcome["damage"] = {"formula": out.damage.formula, "total": out.damage.total}
    return outcome


def _against(out: UseOutcome, target: dict[str, Any], dice: Dice, *, apply: bool) -> dict[str, Any]:
    """What the use did to one target: its saving throw, the damage it takes (taken when
    `apply`). Changes `target` when damage is applied; its HP is read by the caller after."""
    found: dict[str, Any] = {"name": target.get("name", ""), "uuid": actor_uuid(target)}
    saved = False
    if out.save is not None:
        ability, dc, _ = out.save
        roll, saved = saving_throw(target, ability, dc, dice)
        found["save"] = {"total": roll.total, "success": saved}
        out.rolls.append(roll)
        verdict = "succeeds on" if saved else "fails"
        out.notes.append(f"{target.get('name', '')} {verdict} the save ({roll.total})")
    if out.damage is not None:
        taken = damage_taken(out.damage.total, saved, out.save[2] if out.save else "none")
        found["damage"] = {"taken": taken, "applied": apply}
        if apply:
            lost = apply_damage(target, taken)
            out.notes.append(f"{target.get('name', '')} takes {lost} damage")
    return found


def outcome_of(
    out: UseOutcome, target: dict[str, Any] | None, dice: Dice, *, apply: bool
) -> dict[str, Any]:
    """What the use did to its target: the attack against its AC, the damage (taken when
    `apply`), its saving throw, and its HP after. Changes `target` when damage is applied."""
    outcome = _shared(out)
    if target is None:
        return outcome
    found = _against(out, target, dice, apply=apply)
    if "save" in found:
        outcome["save"].update(found["save"])
    if "damage" in found:
        outcome["damage"].update(found["damage"])
    outcome["target"] = {"name": found["name"], "uuid": found["uuid"], "hp": _hp(target)}
    return outcome


def _own(target: dict[str, Any], actor: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The target, or `after` when the actor targets itself (its own changes and the target's
    are one document)."""
    return after if actor_uuid(target) == actor_uuid(actor) else target


def _on_target(
    ctx: ActionContext,
    out: UseOutcome,
    target: dict[str, Any] | None,
    after: dict[str, Any],
    *,
    apply: bool,
) -> dict[str, Any]:
    """The outcome on one target (or none: healing heals the actor), the target saved."""
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
    return outcome


def _on_targets(
    ctx: ActionContext, out: UseOutcome, targets: list[dict[str, Any]], *, apply: bool
) -> dict[str, Any]:
    """The outcome on several targets: one damage or healing roll, each target's own save,
    damage or healing and HP after (`targets`), each changed target saved."""
    outcome = _shared(out)
    outcome["targets"] = []
    for target in targets:
        ctx.checkpoint()
        found = _against(out, target, ctx.dice, apply=apply)
        if out.healing:
            found["healing"] = apply_healing(target, out.healing)
            out.notes.append(f"{target.get('name', '')} regains {found['healing']} hit points")
        if (out.healing or (apply and out.damage is not None)) and target is not out.actor:
            save_actor(ctx, target)
        found["hp"] = _hp(target)
        outcome["targets"].append(found)
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
    several = _targets(ctx, frame)
    if len(several) > 1 and (first_activity(item)[1] or {}).get("type") == "attack":
        raise ActionError("An attack takes one target: make one use per target")
    target = several[0] if len(several) == 1 else None if several else _target(ctx, frame)
    try:
        out = use_item(actor, item["_id"], ctx.dice, target=target)
    except UseError as exc:
        raise ActionError(str(exc)) from exc
    after = out.actor
    apply = flag(frame, "applyDamage")
    if len(several) > 1:
        outcome = _on_targets(ctx, out, [_own(t, actor, after) for t in several], apply=apply)
    else:
        target = _own(target, actor, after) if target is not None else None
        outcome = _on_target(ctx, out, target, after, apply=apply)
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
