"""Rolls made through POST /roll and the recent-rolls list that GET /rolls and /lastroll read
(endpoints-beyond-seed §3).

Pure functions: what the module reports about a roll (its own critical and fumble test, which
differs from a d20 test's), the id of a manual roll, the two kinds of list entry, and adding an
entry to the list (newest first, at most `MAX_ROLLS_STORED`, an entry with the same id replaced
in place).
"""

from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from vttrelay.world.rules.dice import Roll

MAX_ROLLS_STORED: Final = 20  # the module's MAX_ROLLS_STORED
_BASE36: Final = string.digits + string.ascii_lowercase


def manual_roll_id(now_ms: int, rng: random.Random) -> str:
    """`manual_<unixMillis>_<random base36>`, as the module names a /roll roll (`rng`: the
    world's generator)."""
    suffix = "".join(rng.choices(_BASE36, k=11))
    return f"manual_{now_ms}_{suffix}"


def critical_and_fumble(roll: Roll) -> tuple[bool, bool]:
    """The module's flags for a /roll roll: critical when any die result anywhere equals the
    faces of the formula's first term (never when the formula starts with anything but dice),
    fumble when any die result is 1. Dropped results count too."""
    results = [value for term in roll.terms for value, _ in term.results]
    faces = roll.leading_faces
    return (faces is not None and faces in results, 1 in results)


def roll_data(roll: Roll, formula: str, timestamp: int) -> dict[str, Any]:
    """The `roll` object of a /roll reply: the formula as the caller wrote it."""
    critical, fumble = critical_and_fumble(roll)
    return {
        "formula": formula,
        "total": roll.total,
        "isCritical": critical,
        "isFumble": fumble,
        "dice": roll.dice,
        "timestamp": timestamp,
    }


def manual_entry(
    roll_id: str,
    *,
    chat_created: bool,
    speaker: dict[str, Any],
    flavor: Any,
    data: dict[str, Any],
) -> dict[str, Any]:
    """The list entry of a /roll roll (`data` is `roll_data`): `messageId` is the manual id when
    a chat message was created (not the message's own id), else null; `user` is always null."""
    return {
        "id": roll_id,
        "messageId": roll_id if chat_created else None,
        "user": None,
        "speaker": speaker,
        "flavor": flavor,
        "rollTotal": data["total"],
        "formula": data["formula"],
        "isCritical": data["isCritical"],
        "isFumble": data["isFumble"],
        "dice": data["dice"],
        "timestamp": data["timestamp"],
    }


def message_entry(
    message_id: str,
    *,
    user: dict[str, Any] | None,
    speaker: dict[str, Any],
    flavor: str,
    first_roll: dict[str, Any],
    timestamp: int,
) -> dict[str, Any]:
    """The list entry (and `roll-data` event) of a chat message with rolls: its first roll."""
    return {
        "id": message_id,
        "messageId": message_id,
        "user": user,
        "speaker": speaker,
        "flavor": flavor or "",
        "rollTotal": first_roll.get("total"),
        "formula": first_roll.get("formula"),
        "isCritical": bool(first_roll.get("isCritical")),
        "isFumble": bool(first_roll.get("isFumble")),
        "dice": first_roll.get("dice", []),
        "timestamp": timestamp,
    }


def add_recent(recent: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    """Put `entry` into the list (newest first): in place of an entry with the same id, else on
    top, dropping the oldest past `MAX_ROLLS_STORED`."""
    for index, existing in enumerate(recent):
        if existing.get("id") == entry["id"]:
            recent[index] = entry
            return
    recent.insert(0, entry)
    del recent[MAX_ROLLS_STORED:]


def list_limit(value: Any) -> int:
    """`slice(0, limit || 20)` of the module: 0 or absent means 20; a negative limit drops that
    many from the end, as JavaScript's slice does; a fraction is truncated."""
    if isinstance(value, bool):
        value = int(value)
    try:
        number = int(float(value)) if value is not None and value != "" else 0
    except (TypeError, ValueError):
        number = 0
    return number or MAX_ROLLS_STORED
