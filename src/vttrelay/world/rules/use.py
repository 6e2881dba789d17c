"""Using an item: its first activity, what that spends, and what it rolls.

A spell spends a slot of its level (pact slots for pact spells; cantrips, at-will and innate
spells none) and needs to be prepared when it is a prepared spell. The activity's consumption
targets spend item uses (a consumable whose last use goes loses one of its quantity and, when
it was the last, is destroyed if `autoDestroy`), activity uses, or an actor attribute such as
`resources.primary.value` (ki points). Nothing is spent unless everything can be: the caller
gets an error and the actor is unchanged.

Arcane Recovery (once per long rest through its uses) works only after a short rest, the actor's
latest rest, and only when a slot it can regain is expended; otherwise nothing is spent.

Attack activities roll to hit (d20 + ability modifier + proficiency + bonuses, including the
actor's `system.bonuses.<mwak|rwak|msak|rsak>.attack`; a Champion scores a critical on 19-20) and
damage (plus that attack type's damage bonus); healing activities heal; damage activities roll
damage; save DCs add `system.bonuses.spell.dc`. Every roll and DC reads the actor (and the
target's AC) as its active effects' changes make it (`effects.apply_changes`); what is spent is
taken from the stored actor.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Final

from vttrelay.world.errors import DiceError, SpellError, UseError, UsesError
from vttrelay.world.rules import spells as spell_rules
from vttrelay.world.rules.abilities import (
    ABILITY_LABELS,
    ability_mod,
    class_items,
    join_formula,
    proficiency_bonus,
    resolve_formula,
    save_formula,
)
from vttrelay.world.rules.armor import armor_class
from vttrelay.world.rules.dice import Dice, Roll
from vttrelay.world.rules.effects import apply_changes
from vttrelay.world.rules.items import spend_uses, uses_max, uses_value
from vttrelay.world.rules.paths import as_int, get_path, set_path
from vttrelay.world.rules.rests import LAST_REST_FLAG

RANGED_WEAPONS: Final = ("simpleR", "martialR")
# Features and spells whose effect is more than their activity (by item identifier).
ARCANE_RECOVERY: Final = "arcane-recovery"
IMPROVED_CRITICAL: Final = "improved-critical"
MARTIAL_ARTS: Final = "martial-arts"


@dataclass
class UseOutcome:
    actor: dict[str, Any]  # the actor after the use
    item: dict[str, Any] | None  # the item after the use (None if destroyed)
    activity_type: str | None = None
    attack: Roll | None = None
    rolls: list[Roll] = field(default_factory=list)  # every roll, for the chat card
    notes: list[str] = field(default_factory=list)  # what was spent and done, for the card
    healing: int = 0  # hit points to restore on the target (applied by the caller)
    concentration: bool = False  # a concentration spell: the caster starts concentrating
    destroyed: bool = False
    hit: bool | None = None  # an attack at a target: whether it hit its AC
    target_ac: int | None = None
    damage: Roll | None = None  # the damage roll, when damage was rolled
    save: tuple[str, int, str] | None = None  # (ability, DC, onSave: half | none) of a save


def first_activity(item: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    activities = get_path(item, "system.activities") or {}
    for activity_id, activity in activities.items():
        if isinstance(activity, dict):
            return activity_id, activity
    return None, None


def spellcasting_ability(actor: dict[str, Any], spell: dict[str, Any] | None = None) -> str:
    source = get_path(spell, "system.sourceClass") if spell else None
    for cls in class_items(actor):
        ability = get_path(cls, "system.spellcasting.ability")
        if ability and (not source or get_path(cls, "system.identifier") == source):
            return str(ability)
    return str(get_path(actor, "system.attributes.spellcasting") or "int")


def spell_save_dc(actor: dict[str, Any], spell: dict[str, Any] | None = None) -> int:
    base = 8 + proficiency_bonus(actor) + ability_mod(actor, spellcasting_ability(actor, spell))
    bonus = str(get_path(actor, "system.bonuses.spell.dc") or "").strip()
    return base + (as_int(resolve_formula(bonus, actor), 0) if bonus else 0)


def attack_type(activity: dict[str, Any]) -> str:
    """The dnd5e attack type of an attack activity: `mwak`, `rwak`, `msak` or `rsak`."""
    ranged = get_path(activity, "attack.type.value") == "ranged"
    spell = get_path(activity, "attack.type.classification") == "spell"
    return f"{'r' if ranged else 'm'}{'s' if spell else 'w'}ak"


def _type_bonus(actor: dict[str, Any], activity: dict[str, Any], kind: str) -> str:
    """The actor's `system.bonuses.<attack type>.<kind>` (attack or damage), resolved."""
    bonus = str(get_path(actor, f"system.bonuses.{attack_type(activity)}.{kind}") or "").strip()
    return resolve_formula(bonus, actor) if bonus else ""


def _has_feature(actor: dict[str, Any], identifier: str) -> bool:
    return any(
        i.get("type") == "feat" and get_path(i, "system.identifier") == identifier
        for i in actor.get("items") or []
    )


def attack_ability(actor: dict[str, Any], item: dict[str, Any], activity: dict[str, Any]) -> str:
    explicit = get_path(activity, "attack.ability")
    if explicit and explicit != "none":
        return str(explicit) if explicit != "spellcasting" else spellcasting_ability(actor, item)
    if item.get("type") == "spell":
        return spellcasting_ability(actor, item)
    kind = get_path(item, "system.type.value")
    if kind in RANGED_WEAPONS:
        return "dex"
    finesse = "fin" in (get_path(item, "system.properties") or [])
    monk_weapon = _has_feature(actor, MARTIAL_ARTS) and kind in ("simpleM", "natural")
    if finesse or monk_weapon:
        return "dex" if ability_mod(actor, "dex") > ability_mod(actor, "str") else "str"
    return "str"


def attack_formula(actor: dict[str, Any], item: dict[str, Any], activity: dict[str, Any]) -> str:
    ability = attack_ability(actor, item, activity)
    proficient = item.get("type") == "spell" or get_path(item, "system.proficient") in (
        None,
        1,
        True,
    )
    parts: list[Any] = [ability_mod(actor, ability)]
    if proficient:
        parts.append(proficiency_bonus(actor))
    magical = as_int(get_path(item, "system.magicalBonus"), 0)
    if magical:
        parts.append(magical)
    bonus = str(get_path(activity, "attack.bonus") or "").strip()
    if bonus:
        parts.append(resolve_formula(bonus, actor))
    parts.append(_type_bonus(actor, activity, "attack"))
    return join_formula("1d20", parts)


def _damage_formula(
    actor: dict[str, Any], item: dict[str, Any], activity: dict[str, Any], critical: bool
) -> str | None:
    """Damage of an activity: the weapon's base damage (+ ability modifier) when the activity
    includes it, then its own parts; `@mod` is the attack ability's modifier. A critical hit
    doubles the dice."""
    mod = ability_mod(actor, attack_ability(actor, item, activity))
    terms: list[Any] = []

    def add(part: dict[str, Any], bonus: str) -> None:
        number = as_int(part.get("number"), 0)
        faces = as_int(part.get("denomination"), 0)
        if number and faces:
            terms.append(f"{number * (2 if critical else 1)}d{faces}")
        if bonus.strip():
            terms.append(resolve_formula(bonus.replace("@mod", str(mod)), actor))

    base = get_path(item, "system.damage.base")
    if get_path(activity, "damage.includeBase") and isinstance(base, dict):
        add(base, str(base.get("bonus") or "") or "@mod")
    for part in get_path(activity, "damage.parts") or []:
        if isinstance(part, dict):
            add(part, str(part.get("bonus") or ""))
    if terms and activity.get("type") == "attack":
        terms.append(_type_bonus(actor, activity, "damage"))
    if not terms:
        return None
    return join_formula(str(terms[0]), terms[1:])


def damage_formula(
    actor: dict[str, Any], item: dict[str, Any], activity: dict[str, Any]
) -> str | None:
    """An activity's damage on a normal hit (what a character sheet shows)."""
    return _damage_formula(actor, item, activity, False)


def _spend_consumables(
    after: dict[str, Any], item: dict[str, Any], activity: dict[str, Any] | None, out: UseOutcome
) -> None:
    targets = list(get_path(activity, "consumption.targets") or []) if activity else []
    if (
        not targets
        and item.get("type") == "consumable"
        and uses_max(get_path(item, "system.uses"), after)
    ):
        targets = [{"type": "itemUses", "target": "", "value": "1"}]
    for target in targets:
        kind = target.get("type")
        amount = as_int(resolve_formula(str(target.get("value") or "1"), after), 1)
        if kind == "itemUses":
            owner = item
            if target.get("target"):
                owner = next(
                    (i for i in after.get("items") or [] if i.get("_id") == target["target"]), item
                )
            _spend_item_uses(after, owner, amount, out)
        elif kind == "activityUses" and activity is not None:
            uses = activity.setdefault("uses", {"spent": 0, "max": "", "recovery": []})
            try:
                spend_uses(uses, after, amount, str(item.get("name", "")))
            except UsesError as exc:
                raise UseError(str(exc)) from exc
        elif kind == "attribute":
            path = f"system.{target.get('target')}"
            current = as_int(get_path(after, path), 0)
            if current < amount:
                label = _attribute_label(after, str(target.get("target") or ""))
                raise UseError(
                    f"Not enough {label} to use {item.get('name', '')}: "
                    f"needs {amount}, has {current}"
                )
            set_path(after, path, current - amount)
            out.notes.append(f"spent {amount} {_attribute_label(after, str(target['target']))}")


def _attribute_label(actor: dict[str, Any], target: str) -> str:
    if target.startswith("resources.") and target.endswith(".value"):
        key = target.split(".")[1]
        label = get_path(actor, f"system.resources.{key}.label")
        if label:
            return str(label)
    return target


def _spend_item_uses(
    after: dict[str, Any], owner: dict[str, Any], amount: int, out: UseOutcome
) -> None:
    uses = owner.setdefault("system", {}).setdefault("uses", {"max": "", "spent": 0})
    name = str(owner.get("name", ""))
    if uses_max(uses, after) <= 0:
        # no limited uses: a consumable is used up by quantity
        if owner.get("type") != "consumable":
            return
        qty = as_int(get_path(owner, "system.quantity"), 1)
        if qty < amount:
            raise UseError(f"{name} has none left")
        set_path(owner, "system.quantity", qty - amount)
        out.notes.append(f"{qty - amount} {name} left")
        if qty - amount <= 0 and uses.get("autoDestroy"):
            _destroy(after, owner, out)
        return
    qty = as_int(get_path(owner, "system.quantity"), 1)
    value = uses_value(uses, after)
    if value < amount and not (owner.get("type") == "consumable" and qty > 1):
        raise UseError(f"{name} has no uses remaining ({value} of {uses_max(uses, after)})")
    if value < amount:  # an exhausted consumable with more in the stack: open the next one
        qty -= 1
        set_path(owner, "system.quantity", qty)
        uses["spent"] = 0
    try:
        spend_uses(uses, after, amount, name)
    except UsesError as exc:
        raise UseError(str(exc)) from exc
    left = uses_value(uses, after)
    if owner.get("type") == "consumable" and left == 0:
        if qty > 1:
            set_path(owner, "system.quantity", qty - 1)
            uses["spent"] = 0
            out.notes.append(f"{qty - 1} {name} left")
        elif uses.get("autoDestroy"):
            _destroy(after, owner, out)
        else:
            out.notes.append(f"{name} is used up")
    else:
        out.notes.append(f"{name}: {left} of {uses_max(uses, after)} uses left")


def _destroy(after: dict[str, Any], item: dict[str, Any], out: UseOutcome) -> None:
    after["items"] = [i for i in after.get("items") or [] if i is not item]
    out.notes.append(f"{item.get('name', '')} is used up")
    out.destroyed = out.destroyed or item is out.item
    if item is out.item:
        out.item = None


def use_item(
    actor: dict[str, Any],
    item_id: str,
    dice: Dice,
    *,
    target: dict[str, Any] | None = None,
) -> UseOutcome:
    """Use the actor's item `item_id`. `target` (an actor) supplies the AC an attack is
    compared with. Raises UseError; the given actor is never modified."""
    after = copy.deepcopy(actor)
    item = next(i for i in after.get("items") or [] if i.get("_id") == item_id)
    _, activity = first_activity(item)
    out = UseOutcome(actor=after, item=item, activity_type=(activity or {}).get("type"))
    _check_preconditions(after, item)
    if item.get("type") == "spell":
        try:
            spent = spell_rules.spend_slot_for(after, item)
        except SpellError as exc:
            raise UseError(str(exc)) from exc
        if spent:
            out.notes.append(f"spent a {spent}")
        out.concentration = spell_rules.is_concentration(item)
    _spend_consumables(after, item, activity, out)
    _special_effects(after, item, out)
    if activity is None:
        return out
    try:  # rolls read the actor and its target as their effects make them
        reader = apply_changes(after)
        _resolve_activity(
            reader, item, activity, dice, apply_changes(target) if target else None, out
        )
    except DiceError as exc:
        raise UseError(f"{item.get('name', '')}: {exc}") from exc
    return out


def _arcane_recovery_budget(actor: dict[str, Any]) -> int:
    """Slot levels Arcane Recovery regains: half the wizard level, rounded up."""
    wizard = sum(
        as_int(get_path(c, "system.levels"), 0)
        for c in class_items(actor)
        if get_path(c, "system.identifier") == "wizard"
    )
    return -(-wizard // 2)


def _check_preconditions(actor: dict[str, Any], item: dict[str, Any]) -> None:
    """Features with a condition of their own (before anything is spent)."""
    if get_path(item, "system.identifier") != ARCANE_RECOVERY:
        return
    name = item.get("name", "")
    if get_path(actor, LAST_REST_FLAG) != "short":
        raise UseError(f"{name} can only be used after a short rest")
    probe = copy.deepcopy(actor)
    if not spell_rules.recover_slots(probe, _arcane_recovery_budget(actor)):
        raise UseError(f"{name}: {actor.get('name', '')} has no expended spell slots to recover")


def _special_effects(after: dict[str, Any], item: dict[str, Any], out: UseOutcome) -> None:
    identifier = get_path(item, "system.identifier")
    if identifier == ARCANE_RECOVERY:
        regained = spell_rules.recover_slots(after, _arcane_recovery_budget(after))
        levels = ", ".join(spell_rules.ordinal(n) for n in regained) or "none"
        out.notes.append(f"regained spell slots: {levels}")


def _resolve_activity(
    actor: dict[str, Any],
    item: dict[str, Any],
    activity: dict[str, Any],
    dice: Dice,
    target: dict[str, Any] | None,
    out: UseOutcome,
) -> None:
    """Roll what the activity rolls. `actor` is read only (the actor as its effects make it)."""
    kind = activity.get("type")
    if kind == "attack":
        critical_at = (
            19 if item.get("type") == "weapon" and _has_feature(actor, IMPROVED_CRITICAL) else 20
        )
        roll = dice.roll(attack_formula(actor, item, activity), critical=critical_at)
        out.attack = roll
        out.rolls.append(roll)
        hit = not roll.is_fumble  # without a target, damage is rolled unless it is a fumble
        if target is not None:
            ac = armor_class(target)
            hit = roll.is_critical or (not roll.is_fumble and roll.total >= ac)
            out.notes.append(f"{'hits' if hit else 'misses'} {target.get('name', '')} (AC {ac})")
            out.hit, out.target_ac = hit, ac
        damage = _damage_formula(actor, item, activity, roll.is_critical)
        if damage and hit:
            out.damage = dice.roll(damage)
            out.rolls.append(out.damage)
    elif kind == "heal":
        healing = get_path(activity, "healing") or {}
        number, faces = as_int(healing.get("number"), 0), as_int(healing.get("denomination"), 0)
        terms = [f"{number}d{faces}"] if number and faces else []
        bonus = str(healing.get("bonus") or "").strip()
        if bonus:
            # `@mod` in a spell's healing is the caster's spellcasting ability modifier
            mod = ability_mod(actor, spellcasting_ability(actor, item))
            terms.append(resolve_formula(bonus.replace("@mod", str(mod)), actor))
        if terms:
            roll = dice.roll(join_formula(terms[0], terms[1:]))
            out.rolls.append(roll)
            out.healing = max(0, roll.total)
    elif kind == "damage":
        damage = _damage_formula(actor, item, activity, False)
        if damage:
            out.damage = dice.roll(damage)
            out.rolls.append(out.damage)
    elif kind == "save":
        ability = (get_path(activity, "save.ability") or ["dex"])[0]
        dc_formula = str(get_path(activity, "save.dc.formula") or "")
        dc = (
            as_int(resolve_formula(dc_formula, actor), 10)
            if dc_formula
            else spell_save_dc(actor, item)
        )
        out.notes.append(f"DC {dc} {ABILITY_LABELS.get(ability, ability)} saving throw")
        on_save = "half" if get_path(activity, "damage.onSave") == "half" else "none"
        out.save = (str(ability), dc, on_save)
        damage = _damage_formula(actor, item, activity, False)
        if damage:
            out.damage = dice.roll(damage)
            out.rolls.append(out.damage)


def saving_throw(target: dict[str, Any], ability: str, dc: int, dice: Dice) -> tuple[Roll, bool]:
    """The target's saving throw against `dc` (its effects applied): the roll and whether it
    succeeded."""
    roll = dice.roll(save_formula(apply_changes(target), ability))
    return roll, roll.total >= dc


def damage_taken(damage: int, saved: bool, on_save: str) -> int:
    """Damage a target takes: all of it, half (rounded down) or none on a successful save."""
    if not saved:
        return damage
    return damage // 2 if on_save == "half" else 0


def apply_damage(actor: dict[str, Any], amount: int) -> int:
    """Take `amount` damage, temporary hit points first, HP not below 0; returns the hit points
    actually lost (temporary ones included)."""
    hp = get_path(actor, "system.attributes.hp") or {}
    temp, current = as_int(hp.get("temp"), 0), as_int(hp.get("value"), 0)
    from_temp = min(temp, max(0, amount))
    from_hp = min(current, max(0, amount) - from_temp)
    if from_temp:
        set_path(actor, "system.attributes.hp.temp", temp - from_temp)
    set_path(actor, "system.attributes.hp.value", current - from_hp)
    return from_temp + from_hp


def apply_healing(actor: dict[str, Any], amount: int) -> int:
    """Heal up to the effective maximum; returns the hit points actually restored."""
    hp = get_path(actor, "system.attributes.hp") or {}
    maximum = as_int(hp.get("max"), 0) + as_int(hp.get("tempmax"), 0)
    current = as_int(hp.get("value"), 0)
    new = min(maximum, current + max(0, amount))
    set_path(actor, "system.attributes.hp.value", new)
    if current <= 0 < new:  # back on their feet: death saves reset
        set_path(actor, "system.attributes.death.success", 0)
        set_path(actor, "system.attributes.death.failure", 0)
    return new - current
