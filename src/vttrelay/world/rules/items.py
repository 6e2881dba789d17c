"""Item rules: limited uses (charges), equipping and attuning (world-behaviour §3.2, §3.11).

`system.uses` source data is `{max: "<formula>", spent: int, recovery: [...]}`; the derived
value is clamp(max - spent, 0, max). Charges never leave [0, max].
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import DiceError, UsesError
from vttrelay.world.rules.abilities import resolve_formula
from vttrelay.world.rules.dice import Dice
from vttrelay.world.rules.paths import as_int, get_path

_FLAT = Dice()  # evaluates dice-free formulas only: never draws a random number

ITEM_TYPES: Final = ("weapon", "equipment", "consumable", "tool", "loot", "backpack")
FEATURE_TYPES: Final = ("feat", "background", "class", "subclass")


def evaluate_max(formula: Any, actor: dict[str, Any]) -> int:
    """A uses-max formula ("4", "@prof", "@abilities.cha.mod + 1") as a number; "" -> 0."""
    if isinstance(formula, int | float) and not isinstance(formula, bool):
        return max(0, int(formula))
    text = resolve_formula(str(formula or ""), actor).strip()
    if not text:
        return 0
    try:
        roll = _FLAT.roll(text)
    except DiceError:
        return 0
    if not roll.is_deterministic:
        return 0
    return max(0, roll.total)


def uses_max(uses: dict[str, Any] | None, actor: dict[str, Any]) -> int:
    return evaluate_max((uses or {}).get("max"), actor)


def uses_spent(uses: dict[str, Any] | None) -> int:
    return max(0, as_int((uses or {}).get("spent"), 0))


def uses_value(uses: dict[str, Any] | None, actor: dict[str, Any]) -> int:
    maximum = uses_max(uses, actor)
    return max(0, min(maximum - uses_spent(uses), maximum))


def modify_charges(item: dict[str, Any], actor: dict[str, Any], amount: float) -> tuple[int, int]:
    """Add `amount` charges (negative spends), clamped to [0, max]. Returns (old, new)."""
    uses = get_path(item, "system.uses")
    maximum = uses_max(uses, actor)
    if not isinstance(uses, dict) or maximum <= 0:
        return 0, 0
    spent = uses_spent(uses)
    current = max(0, min(maximum - spent, maximum))
    new_value = int(max(0, min(current + amount, maximum)))
    uses["spent"] = maximum - new_value  # = clamp(spent - amount, 0, max)
    return current, new_value


def spend_uses(
    uses: dict[str, Any], actor: dict[str, Any], amount: int, what: str
) -> tuple[int, int]:
    """Spend `amount` uses or raise UsesError. Returns (old value, new value)."""
    maximum = uses_max(uses, actor)
    current = uses_value(uses, actor)
    if maximum <= 0 or current < amount:
        raise UsesError(f"{what} has no uses remaining ({current} of {maximum})")
    uses["spent"] = uses_spent(uses) + amount
    return current, current - amount


def set_equipped(item: dict[str, Any], equipped: bool) -> None:
    item.setdefault("system", {})["equipped"] = equipped


def set_attuned(item: dict[str, Any], attuned: bool) -> None:
    item.setdefault("system", {})["attuned"] = attuned


def quantity(item: dict[str, Any]) -> int:
    return as_int(get_path(item, "system.quantity"), 1)
