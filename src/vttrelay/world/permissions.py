"""`userId` permission gates (world-behaviour §2.1 and §7).

Levels: NONE 0, LIMITED 1, OBSERVER 2, OWNER 3. A GM-level user (role >= 3) always has OWNER;
no user at all (the call carried no `userId`) means full GM rights, so every gate passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from vttrelay.world.actions import ActionError
from vttrelay.world.documents import ASSISTANT_ROLE

if TYPE_CHECKING:
    from vttrelay.world.context import ActionContext

NONE: Final = 0
LIMITED: Final = 1
OBSERVER: Final = 2
OWNER: Final = 3


def permission_level(user: dict[str, Any] | None, doc: dict[str, Any]) -> int:
    """The user's permission level on a document (its `ownership`, else `default`)."""
    if user is None or int(user.get("role", 0)) >= ASSISTANT_ROLE:
        return OWNER
    ownership = doc.get("ownership") or {}
    level = ownership.get(user["_id"], ownership.get("default", NONE))
    return int(level) if isinstance(level, int | float) else NONE


def _name(user: dict[str, Any]) -> str:
    return str(user.get("name", user.get("_id", "")))


def assert_can_view(ctx: ActionContext, actor: dict[str, Any]) -> None:
    """The view gate: LIMITED or better."""
    if ctx.user is not None and permission_level(ctx.user, actor) < LIMITED:
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to view actor "
            f"'{actor.get('name', '')}'"
        )


def assert_owner(ctx: ActionContext, doc: dict[str, Any], operation: str) -> None:
    """The write gate: OWNER. `operation` is e.g. "perform a short rest on"."""
    if ctx.user is not None and permission_level(ctx.user, doc) < OWNER:
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to {operation} "
            f"'{doc.get('name', '')}'"
        )


def assert_gm(ctx: ActionContext, operation: str) -> None:
    """The GM gate. `operation` is e.g. "select tokens"."""
    if ctx.user is not None and int(ctx.user.get("role", 0)) < ASSISTANT_ROLE:
        raise ActionError(f"User '{_name(ctx.user)}' must be a GM to {operation}")
