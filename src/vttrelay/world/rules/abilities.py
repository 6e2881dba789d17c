"""Abilities, proficiency, saves, skills and the d20 test formulas (checks, saves, skills).

Derived numbers follow the dnd5e system (5.0.4): modifier floor((score - 10) / 2); proficiency
2 + floor((level - 1) / 4) for characters, by challenge rating for NPCs. The formula of a d20
test is the d20 term followed by its parts joined with " + " (world-behaviour §3.5): the request
bonus first, then the ability modifier (always, even 0), the proficiency term when proficient,
then non-empty bonuses. Negative numbers read "1d20 - 1", as the tabletop prints them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, Final

from vttrelay.world.rules.paths import as_number, get_path

ABILITIES: Final = ("str", "dex", "con", "int", "wis", "cha")

# The module's order (it is also the order of the error message).
SKILLS: Final[dict[str, tuple[str, str]]] = {
    "acr": ("Acrobatics", "dex"),
    "ani": ("Animal Handling", "wis"),
    "arc": ("Arcana", "int"),
    "ath": ("Athletics", "str"),
    "dec": ("Deception", "cha"),
    "his": ("History", "int"),
    "ins": ("Insight", "wis"),
    "itm": ("Intimidation", "cha"),
    "inv": ("Investigation", "int"),
    "med": ("Medicine", "wis"),
    "nat": ("Nature", "int"),
    "prc": ("Perception", "wis"),
    "prf": ("Performance", "cha"),
    "per": ("Persuasion", "cha"),
    "rel": ("Religion", "int"),
    "slt": ("Sleight of Hand", "dex"),
    "ste": ("Stealth", "dex"),
    "sur": ("Survival", "wis"),
}
ABILITY_LABELS: Final = {
    "str": "Strength",
    "dex": "Dexterity",
    "con": "Constitution",
    "int": "Intelligence",
    "wis": "Wisdom",
    "cha": "Charisma",
}


def ability_modifier(score: float) -> int:
    return math.floor((score - 10) / 2)


def ability_score(actor: dict[str, Any], ability: str) -> int:
    return int(as_number(get_path(actor, f"system.abilities.{ability}.value"), 10))


def ability_mod(actor: dict[str, Any], ability: str) -> int:
    return ability_modifier(ability_score(actor, ability))


def class_items(actor: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in actor.get("items", []) if item.get("type") == "class"]


def character_level(actor: dict[str, Any]) -> int:
    """Sum of the class items' levels (0 for an actor without classes)."""
    return sum(int(as_number(get_path(c, "system.levels"), 0)) for c in class_items(actor))


def challenge_rating(actor: dict[str, Any]) -> float:
    return as_number(get_path(actor, "system.details.cr"), 0)


def proficiency_bonus(actor: dict[str, Any]) -> int:
    if actor.get("type") == "npc":
        return max(2, 2 + math.floor((max(challenge_rating(actor), 1) - 1) / 4))
    level = max(character_level(actor), 1)
    return 2 + math.floor((level - 1) / 4)


def save_proficient(actor: dict[str, Any], ability: str) -> int:
    return 1 if as_number(get_path(actor, f"system.abilities.{ability}.proficient"), 0) else 0


def check_proficient(actor: dict[str, Any], ability: str) -> float:
    return as_number(get_path(actor, f"system.abilities.{ability}.check.proficient"), 0)


def _flat_bonus(value: Any) -> int:
    """A bonus string counted into derived totals when it is a plain number ("+1", "2")."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\s*\d+\s*", value):
        return int(value.replace(" ", ""))
    return 0


def save_bonus(actor: dict[str, Any], ability: str) -> int:
    """Total saving throw bonus (dnd5e `abilities.<x>.save.value`)."""
    return (
        ability_mod(actor, ability)
        + save_proficient(actor, ability) * proficiency_bonus(actor)
        + _flat_bonus(get_path(actor, f"system.abilities.{ability}.bonuses.save"))
        + _flat_bonus(get_path(actor, "system.bonuses.abilities.save"))
    )


def skill_ability(actor: dict[str, Any], skill: str) -> str:
    return str(get_path(actor, f"system.skills.{skill}.ability") or SKILLS[skill][1])


def skill_value(actor: dict[str, Any], skill: str) -> float:
    """Proficiency multiplier: 0, 0.5, 1 or 2."""
    return as_number(get_path(actor, f"system.skills.{skill}.value"), 0)


def proficiency_term(multiplier: float, prof: int) -> int:
    return math.floor(multiplier * prof)


def skill_total(actor: dict[str, Any], skill: str) -> int:
    ability = skill_ability(actor, skill)
    return (
        ability_mod(actor, ability)
        + proficiency_term(skill_value(actor, skill), proficiency_bonus(actor))
        + _flat_bonus(get_path(actor, f"system.skills.{skill}.bonuses.check"))
        + _flat_bonus(get_path(actor, f"system.abilities.{ability}.bonuses.check"))
        + _flat_bonus(get_path(actor, "system.bonuses.abilities.skill"))
        + _flat_bonus(get_path(actor, "system.bonuses.abilities.check"))
    )


def skill_passive(actor: dict[str, Any], skill: str) -> int:
    return (
        10
        + skill_total(actor, skill)
        + _flat_bonus(get_path(actor, f"system.skills.{skill}.bonuses.passive"))
    )


def initiative_bonus(actor: dict[str, Any]) -> int:
    ability = get_path(actor, "system.attributes.init.ability") or "dex"
    return ability_mod(actor, ability) + _flat_bonus(
        get_path(actor, "system.attributes.init.bonus")
    )


# Roll data and formulas ----------------------------------------------------------------------

_DATA_REF = re.compile(r"@([A-Za-z_][\w.]*)")


def roll_data(actor: dict[str, Any]) -> dict[str, Any]:
    """The numbers a formula may reference with `@path` (a subset of dnd5e's roll data)."""
    classes: dict[str, Any] = {}
    for item in class_items(actor):
        ident = str(get_path(item, "system.identifier") or "")
        if ident:
            classes[ident] = {"levels": int(as_number(get_path(item, "system.levels"), 0))}
    return {
        "prof": proficiency_bonus(actor),
        "abilities": {
            a: {"value": ability_score(actor, a), "mod": ability_mod(actor, a)} for a in ABILITIES
        },
        "details": {"level": character_level(actor), "cr": challenge_rating(actor)},
        "classes": classes,
        "attributes": {"hp": get_path(actor, "system.attributes.hp", {})},
        "resources": get_path(actor, "system.resources", {}),
    }


def resolve_formula(formula: str, actor: dict[str, Any]) -> str:
    """Replace `@path` references by numbers from the actor's roll data (unknown -> 0)."""
    data = roll_data(actor)

    def sub(match: re.Match[str]) -> str:
        value = get_path(data, match.group(1))
        number = as_number(value, 0)
        return str(int(number)) if float(number).is_integer() else str(number)

    return _DATA_REF.sub(sub, formula)


def d20_term(advantage: bool = False, disadvantage: bool = False) -> str:
    if advantage and not disadvantage:
        return "2d20kh"
    if disadvantage and not advantage:
        return "2d20kl"
    return "1d20"


def join_formula(first: str, parts: Iterable[Any]) -> str:
    """`first` followed by the parts: numbers and non-empty strings; negative parts subtract."""
    out = first
    for part in parts:
        if part is None:
            continue
        text = str(int(part)) if isinstance(part, int | float) else str(part).strip()
        if text == "":
            continue
        if text.startswith("-"):
            out += " - " + text[1:].strip()
        elif text.startswith("+"):
            out += " + " + text[1:].strip()
        else:
            out += " + " + text
    return out


def _bonus_part(value: Any, actor: dict[str, Any]) -> str:
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value))
    return resolve_formula(str(value), actor).strip()


def skill_formula(
    actor: dict[str, Any],
    skill: str,
    *,
    advantage: bool = False,
    disadvantage: bool = False,
    bonus: str | None = None,
) -> str:
    ability = skill_ability(actor, skill)
    value = skill_value(actor, skill)
    parts: list[Any] = [_bonus_part(bonus, actor), ability_mod(actor, ability)]
    if value > 0:
        parts.append(proficiency_term(value, proficiency_bonus(actor)))
    parts += [
        _bonus_part(get_path(actor, f"system.skills.{skill}.bonuses.check"), actor),
        _bonus_part(get_path(actor, f"system.abilities.{ability}.bonuses.check"), actor),
        _bonus_part(get_path(actor, "system.bonuses.abilities.skill"), actor),
        _bonus_part(get_path(actor, "system.bonuses.abilities.check"), actor),
    ]
    return join_formula(d20_term(advantage, disadvantage), parts)


def check_formula(
    actor: dict[str, Any],
    ability: str,
    *,
    advantage: bool = False,
    disadvantage: bool = False,
    bonus: str | None = None,
) -> str:
    parts: list[Any] = [_bonus_part(bonus, actor), ability_mod(actor, ability)]
    proficient = check_proficient(actor, ability)
    if proficient > 0:
        parts.append(proficiency_term(proficient, proficiency_bonus(actor)))
    parts += [
        _bonus_part(get_path(actor, f"system.abilities.{ability}.bonuses.check"), actor),
        _bonus_part(get_path(actor, "system.bonuses.abilities.check"), actor),
    ]
    return join_formula(d20_term(advantage, disadvantage), parts)


def save_formula(
    actor: dict[str, Any],
    ability: str,
    *,
    advantage: bool = False,
    disadvantage: bool = False,
    bonus: str | None = None,
) -> str:
    parts: list[Any] = [_bonus_part(bonus, actor), ability_mod(actor, ability)]
    if save_proficient(actor, ability):
        parts.append(proficiency_bonus(actor))
    parts += [
        _bonus_part(get_path(actor, f"system.abilities.{ability}.bonuses.save"), actor),
        _bonus_part(get_path(actor, "system.bonuses.abilities.save"), actor),
    ]
    if ability == "dex":  # dnd5e adds the target's cover to dexterity saves (0 normally)
        parts.append(int(as_number(get_path(actor, "system.attributes.cover"), 0)))
    return join_formula(d20_term(advantage, disadvantage), parts)


def death_save_formula(actor: dict[str, Any], *, advantage: bool = False) -> str:
    parts = [
        _bonus_part(get_path(actor, "system.attributes.death.bonuses.save"), actor),
        _bonus_part(get_path(actor, "system.bonuses.abilities.save"), actor),
    ]
    return join_formula(d20_term(advantage, False), parts)
