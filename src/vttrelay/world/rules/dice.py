"""Dice for the embedded world: the only module that imports the `d20` library.

`d20` parses and evaluates formulas (`1d20 + 5`, `2d20kh1`, `1d6+1`) and keeps dropped dice,
but it draws from the global `random` module. We install, once, a tiny proxy as d20's `random`
that forwards to the random source of the `Dice` currently rolling (a context variable), so each
`Dice` has its own injectable, seedable `random.Random` and concurrent worlds do not interfere.

A `Roll` reports what the tabletop reports for a roll: `formula`, `total`, `isCritical`,
`isFumble` and per-die results with dropped dice marked inactive (`to_chat()`), plus the
`result` string that replaces every dice term by its total (`"1d20 + 2 + 3"` -> `"14 + 2 + 3"`).
"""

from __future__ import annotations

import contextvars
import random
import re
from dataclasses import dataclass, field
from typing import Any

import d20
import d20.expression as _d20_expression

from vttrelay.world.errors import DiceError

__all__ = ["Dice", "DieTerm", "Roll", "ScriptedRandom"]


_current_rng: contextvars.ContextVar[random.Random | None] = contextvars.ContextVar(
    "vttrelay_dice_rng", default=None
)


class _RandomProxy:
    """Stands in for the `random` module inside d20: forwards to the rolling Dice's source."""

    def randrange(self, *args: int) -> int:
        rng = _current_rng.get()
        return (rng or random).randrange(*args)

    def __getattr__(self, name: str) -> Any:  # anything else d20 might use
        return getattr(_current_rng.get() or random, name)


_d20_expression.random = _RandomProxy()

# Foundry writes keep/drop without a count ("2d20kh"); d20 needs one ("2d20kh1").
_BARE_KEEP = re.compile(r"(k[hl]|p[hl])(?!\d)")


@dataclass(frozen=True)
class DieTerm:
    """One dice term of a roll (`2d20kh` is one term with two results)."""

    faces: int
    results: tuple[tuple[int, bool], ...]  # (value, active)

    @property
    def total(self) -> int:
        return sum(value for value, active in self.results if active)

    def to_chat(self) -> dict[str, Any]:
        return {
            "faces": self.faces,
            "results": [{"result": value, "active": active} for value, active in self.results],
        }


@dataclass(frozen=True)
class Roll:
    """An evaluated roll."""

    formula: str
    total: int
    is_critical: bool
    is_fumble: bool
    result: str  # the formula with each dice term replaced by its total
    terms: tuple[DieTerm, ...] = field(default_factory=tuple)
    leading_faces: int | None = None  # faces of the formula's first term, if it is a dice term

    @property
    def dice(self) -> list[dict[str, Any]]:
        return [term.to_chat() for term in self.terms]

    @property
    def is_deterministic(self) -> bool:
        """True when the formula has no dice (a flat number)."""
        return not self.terms

    @property
    def natural(self) -> int | None:
        """The kept value of the first d20 term, if the roll starts with one."""
        return _natural(self.terms)

    def to_chat(self) -> dict[str, Any]:
        """The roll as the tabletop serializes it in chat messages and API replies."""
        return {
            "formula": self.formula,
            "total": self.total,
            "isCritical": self.is_critical,
            "isFumble": self.is_fumble,
            "dice": self.dice,
        }


class ScriptedRandom(random.Random):
    """A random source whose dice show scripted faces, in order (for tests): `ScriptedRandom(
    [20, 1])` makes the next die show 20, then 1. When the script runs out it falls back to a
    seeded generator. Faces larger than a die are reduced modulo its size."""

    def __init__(self, faces: list[int] | tuple[int, ...] = (), seed: int = 0) -> None:
        super().__init__(seed)
        self.faces = list(faces)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        if stop is None and step == 1 and self.faces:
            return (self.faces.pop(0) - 1) % start
        return super().randrange(start, stop, step)


class Dice:
    """Rolls formulas with an injectable random source (seed it in tests)."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()
        self._roller = d20.Roller()

    def check(self, formula: str) -> None:
        """Raise DiceError unless `formula` parses (nothing is rolled)."""
        try:
            self._roller.parse(_BARE_KEEP.sub(r"\g<1>1", formula.strip()))
        except d20.RollError as exc:
            raise DiceError(f"Invalid dice formula '{formula}': {exc}") from exc

    def roll(self, formula: str, *, critical: int = 20, fumble: int = 1) -> Roll:
        """Evaluate `formula`. A d20 term that leads the formula and keeps one die is critical
        at `critical` or more and a fumble at `fumble` or less; other rolls are neither."""
        text = formula.strip()
        if not text:
            raise DiceError("Empty dice formula")
        token = _current_rng.set(self.rng)
        try:
            evaluated = self._roller.roll(_BARE_KEEP.sub(r"\g<1>1", text))
        except d20.RollError as exc:
            raise DiceError(f"Invalid dice formula '{formula}': {exc}") from exc
        finally:
            _current_rng.reset(token)
        terms: list[DieTerm] = []
        result = _render(evaluated.expr, terms)
        natural = _natural(terms)
        return Roll(
            formula=text,
            total=int(evaluated.total),
            is_critical=natural is not None and natural >= critical,
            is_fumble=natural is not None and natural <= fumble,
            result=result,
            terms=tuple(terms),
            leading_faces=_leading_faces(evaluated.expr),
        )


def _natural(terms: tuple[DieTerm, ...] | list[DieTerm]) -> int | None:
    if not terms or terms[0].faces != 20:
        return None
    kept = [value for value, active in terms[0].results if active]
    return kept[0] if len(kept) == 1 else None


def _leading_faces(node: Any) -> int | None:
    """The faces of the leftmost term of an expression when it is a dice term (`1d20 + 5` ->
    20); None when the formula starts with anything else (a number, a parenthesis, a sign)."""
    while True:
        if isinstance(node, _d20_expression.Expression):
            node = node.roll
        elif isinstance(node, _d20_expression.BinOp):
            node = node.left
        elif isinstance(node, _d20_expression.Dice):
            return 100 if node.size == "%" else int(node.size)
        else:
            return None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _render(node: Any, terms: list[DieTerm]) -> str:
    """The `result` string of a node, collecting its dice terms in order."""
    if isinstance(node, _d20_expression.Expression):
        return _render(node.roll, terms)
    if isinstance(node, _d20_expression.Dice):
        results: list[tuple[int, bool]] = []
        for die in node.values:
            for literal in die.values:
                results.append((int(literal.number), bool(die.kept and literal.kept)))
        faces = 100 if node.size == "%" else int(node.size)
        terms.append(DieTerm(faces=faces, results=tuple(results)))
        return _number(node.total)
    if isinstance(node, _d20_expression.Literal):
        return _number(node.total)
    if isinstance(node, _d20_expression.BinOp):
        return f"{_render(node.left, terms)} {node.op} {_render(node.right, terms)}"
    if isinstance(node, _d20_expression.UnOp):
        return f"{node.op}{_render(node.value, terms)}"
    if isinstance(node, _d20_expression.Parenthetical):
        return f"({_render(node.value, terms)})"
    if isinstance(node, _d20_expression.Set):
        return "(" + ", ".join(_render(v, terms) for v in node.values) + ")"
    return _number(node.total)
