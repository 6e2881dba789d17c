"""Coins: transfers validated per denomination before anything moves (no change-making), and
single-denomination adjustments clamped at zero (world-behaviour §3.12)."""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import CurrencyError
from vttrelay.world.rules.paths import as_number, get_path

DENOMINATIONS: Final = ("pp", "gp", "ep", "sp", "cp")


def balance(actor: dict[str, Any]) -> dict[str, int]:
    """The actor's coins, every denomination present (0 default)."""
    coins = get_path(actor, "system.currency", {}) or {}
    return {d: int(as_number(coins.get(d), 0)) for d in DENOMINATIONS}


def transfer_amounts(request: dict[str, Any]) -> dict[str, int]:
    """The denominations a transfer moves: known keys with a number > 0; others are ignored.
    A fractional amount is an error (coins are whole)."""
    out: dict[str, int] = {}
    for denom in DENOMINATIONS:
        value = request.get(denom)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            continue
        if value != int(value):
            raise CurrencyError(f"Invalid {denom} amount: {value} (coins are whole numbers)")
        out[denom] = int(value)
    return out


def plan_transfer(
    source: dict[str, int], target: dict[str, int], amounts: dict[str, int], source_name: str
) -> tuple[dict[str, int], dict[str, int]]:
    """New (source, target) balances. Every denomination is checked before any moves."""
    for denom, amount in amounts.items():
        if source[denom] < amount:
            raise CurrencyError(
                f"Insufficient {denom}: {source_name} has {source[denom]}, needs {amount}"
            )
    new_source = dict(source)
    new_target = dict(target)
    for denom, amount in amounts.items():
        new_source[denom] -= amount
        new_target[denom] += amount
    return new_source, new_target


def modify(current: float, amount: float) -> int:
    """New count of one denomination: current + amount, never below 0."""
    return max(0, int(current + amount))


def set_balance(actor: dict[str, Any], coins: dict[str, int]) -> None:
    system = actor.setdefault("system", {})
    currency = system.setdefault("currency", {})
    currency.update(coins)
