"""`userId` permission gates and views (world-behaviour §2.1 and §7, endpoints-beyond-seed §0.3).

Levels: NONE 0, LIMITED 1, OBSERVER 2, OWNER 3. A GM-level user (role >= 3) always has OWNER;
no user at all (the call carried no `userId`) means full GM rights, so every gate passes.
An embedded document has the level of the top-level document that holds it; a token that of its
actor (`Resolved.permission_doc`).

Views: OBSERVER or better sees a document in full, LIMITED sees `{uuid, name, type, img}`,
NONE sees nothing (`view`, `filter_views`).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from vttrelay.world.errors import ActionError
from vttrelay.world.model.documents import ASSISTANT_ROLE, Resolved


class Acting(Protocol):
    """Who acts (an action's context is one): the User document, None for the GM."""

    user: dict[str, Any] | None


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


def assert_can_view(ctx: Acting, actor: dict[str, Any]) -> None:
    """The view gate: LIMITED or better."""
    if ctx.user is not None and permission_level(ctx.user, actor) < LIMITED:
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to view actor "
            f"'{actor.get('name', '')}'"
        )


def assert_owner(ctx: Acting, doc: dict[str, Any], operation: str, *, uuid: str = "") -> None:
    """The write gate: OWNER. `operation` is e.g. "perform a short rest on". The error names
    the document by its name, else by `uuid`."""
    if ctx.user is not None and permission_level(ctx.user, doc) < OWNER:
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to {operation} "
            f"'{doc.get('name') or uuid}'"
        )


def resolved_level(user: dict[str, Any] | None, res: Resolved) -> int:
    """The user's level on a resolved document (embedded ones inherit their holder's)."""
    return permission_level(user, res.permission_doc)


def assert_can_write(ctx: Acting, res: Resolved, operation: str) -> None:
    """The write gate on a resolved document: OWNER of `res.permission_doc`; the error names
    the document itself (name, else uuid)."""
    if ctx.user is not None and resolved_level(ctx.user, res) < OWNER:
        raise ActionError(
            f"User '{_name(ctx.user)}' does not have permission to {operation} "
            f"'{res.doc.get('name') or res.uuid}'"
        )


def limited_view(res: Resolved) -> dict[str, Any]:
    """What a LIMITED user sees: `{uuid, name, type: <document name>, img}` (img null if none)."""
    return {
        "uuid": res.uuid,
        "name": res.doc.get("name"),
        "type": res.kind,
        "img": res.doc.get("img") or None,
    }


def view(
    user: dict[str, Any] | None, res: Resolved, full: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The document as `user` may see it: `full` (default: the document) for OBSERVER or
    better, the limited view for LIMITED, None for NONE."""
    level = resolved_level(user, res)
    if level >= OBSERVER:
        return res.doc if full is None else full
    if level >= LIMITED:
        return limited_view(res)
    return None


def filter_views(user: dict[str, Any] | None, items: list[Resolved]) -> list[dict[str, Any]]:
    """The views of many documents, NONE ones dropped (order kept)."""
    out: list[dict[str, Any]] = []
    for res in items:
        seen = view(user, res)
        if seen is not None:
            out.append(seen)
    return out


def assert_gm(ctx: Acting, operation: str) -> None:
    """The GM gate. `operation` is e.g. "select tokens"."""
    if ctx.user is not None and int(ctx.user.get("role", 0)) < ASSISTANT_ROLE:
        raise ActionError(f"User '{_name(ctx.user)}' must be a GM to {operation}")
