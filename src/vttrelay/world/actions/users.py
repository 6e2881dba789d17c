"""User actions (endpoints-beyond-seed §7): get-users, get-user, create-user, update-user,
delete-user.

A user is answered as `{id, name, role, isGM, active, color, avatar, character}`. With a
`userId`, every route needs a GM (role 3 or more); without one the connected GM acts. The
target is found by `id` (no fallback to `name` when the id is unknown), else by `name`
(case-insensitive). A user created here is a `userId` at once: it is in the store when the
reply goes out, and the relay gets a fresh player list for its stream filters.

A password is kept only as a salted PBKDF2 hash, in the internal `UserCredential` record of the
user (not in the User document, so no route or script ever sees it).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.model.collections import INTERNAL_COLLECTIONS
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

CREDENTIALS: Final = INTERNAL_COLLECTIONS[0]  # {_id: user id, hash, salt}
DATA_NULL: Final = {"data": None}
FAILED: Final = {"success": False}
ROLES: Final = (0, 1, 2, 3, 4)  # none, player, trusted, assistant GM, GM
DEFAULT_AVATAR: Final = "icons/svg/mystery-man.svg"
_COLOR: Final = re.compile(r"#[0-9a-fA-F]{6}")
# The fields an update may change (the tabletop drops the others).
UPDATABLE: Final = ("name", "role", "password", "color", "avatar", "character", "pronouns", "flags")
_PBKDF2_ROUNDS: Final = 100_000


def user_to_api(ctx: ActionContext, user: dict[str, Any]) -> dict[str, Any]:
    """The module's user shape: /players' seven keys and `character` (an actor id or null)."""
    return {
        **documents.user_summary(user, ctx.is_online(user["_id"])),
        "color": user.get("color") or None,
        "avatar": user.get("avatar") or None,
        "character": user.get("character") or None,
    }


def find_target(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """The user a call names: `id` if given, else `name` (case-insensitive)."""
    user_id, name = params.get("id"), params.get("name")
    if user_id:
        found = ctx.tx.get("User", str(user_id))
    else:
        found = documents.find_named(ctx.tx, "User", name)
    if found is None:
        raise ActionError("User not found")
    return found


def hash_password(password: str, salt: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), _PBKDF2_ROUNDS).hex()


def _check_name(ctx: ActionContext, name: Any, user_id: str | None) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ActionError("User name is required")
    other = documents.find_named(ctx.tx, "User", name.strip())
    if other is not None and other["_id"] != user_id:
        raise ActionError(f"A user named '{other.get('name', '')}' already exists")
    return name.strip()


def _check_role(role: Any) -> int:
    if isinstance(role, bool) or not isinstance(role, int | float) or role not in ROLES:
        raise ActionError(
            f"Invalid role: {role}. Must be 0 (none), 1 (player), 2 (trusted), "
            "3 (assistant GM) or 4 (GM)"
        )
    return int(role)


def _check_character(ctx: ActionContext, ref: Any) -> str | None:
    """An actor id or `Actor.<id>` of an existing actor; None or "" clears it."""
    if ref is None or ref == "":
        return None
    actor_id = ref[len("Actor.") :] if isinstance(ref, str) and ref.startswith("Actor.") else ref
    if not isinstance(actor_id, str) or ctx.tx.get("Actor", actor_id) is None:
        raise ActionError(f"Actor not found: {ref}")
    return actor_id


def _apply(ctx: ActionContext, user: dict[str, Any], data: dict[str, Any]) -> None:
    """Validate and apply the updatable fields of `data` to `user` (in place)."""
    if "name" in data:
        user["name"] = _check_name(ctx, data["name"], user.get("_id"))
    if "role" in data:
        user["role"] = _check_role(data["role"])
    if "password" in data:
        password = data["password"]
        if not isinstance(password, str):
            raise ActionError("password must be a string")
        salt = secrets.token_hex(16)
        credential = {"_id": user["_id"], "hash": hash_password(password, salt), "salt": salt}
        ctx.tx.put(CREDENTIALS, credential)
    if "color" in data:
        color = data["color"]
        if not isinstance(color, str) or not _COLOR.fullmatch(color):
            raise ActionError(f"Invalid color: {color}. Use a hex color like #1a2b3c")
        user["color"] = color.lower()
    if "avatar" in data:
        avatar = data["avatar"]
        if avatar is not None and not isinstance(avatar, str):
            raise ActionError("avatar must be a string")
        user["avatar"] = avatar or DEFAULT_AVATAR
    if "character" in data:
        user["character"] = _check_character(ctx, data["character"])
    if "pronouns" in data:
        user["pronouns"] = str(data["pronouns"] or "")
    if isinstance(data.get("flags"), dict):
        user["flags"] = {**(user.get("flags") or {}), **data["flags"]}


def _gm_count(ctx: ActionContext) -> int:
    return sum(int(u.get("role", 0)) >= documents.GM_ROLE for u in ctx.tx.all("User"))


@action("get-users", error_tail=DATA_NULL)
def get_users(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every user of the world."""
    assert_gm(ctx, "list users")
    return {"data": [user_to_api(ctx, u) for u in ctx.tx.all("User")]}


@action("get-user", error_tail=DATA_NULL)
def get_user(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """One user, by id or name."""
    assert_gm(ctx, "get user")
    return {"data": user_to_api(ctx, find_target(ctx, params))}


@action("create-user")
def create_user(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a user (a player unless `role` says otherwise)."""
    assert_gm(ctx, "create users")
    now = ctx.now_ms()
    user: dict[str, Any] = {
        "_id": ctx.new_id(),
        "name": "",
        "role": 1,
        "avatar": DEFAULT_AVATAR,
        "character": None,
        "color": f"#{ctx.random.randrange(0x1000000):06x}",
        "pronouns": "",
        "hotbar": {},
        "permissions": {},
        "flags": {},
        "_stats": documents.new_stats(now, ctx.acting_user_id),
    }
    data: dict[str, Any] = {"name": params.get("name")}
    data.update({k: params[k] for k in ("role", "password", "character") if k in params})
    _apply(ctx, user, data)
    ctx.tx.put("User", user)
    ctx.users_changed = True
    return {"data": user_to_api(ctx, user)}


@action("update-user")
def update_user(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Change a user's name, role, password, color, avatar or character."""
    assert_gm(ctx, "update users")
    user = find_target(ctx, params)
    data = params.get("data")
    data = data if isinstance(data, dict) else {}
    role = data.get("role")
    demoted = isinstance(role, int | float) and role < documents.GM_ROLE
    if demoted and int(user.get("role", 0)) >= documents.GM_ROLE and _gm_count(ctx) <= 1:
        raise ActionError("Cannot demote the last GM user")
    before = dict(user)
    _apply(ctx, user, {k: data[k] for k in UPDATABLE if k in data})
    if user != before:
        documents.touch_stats(user, ctx.now_ms(), ctx.acting_user_id)
        ctx.tx.put("User", user)
        ctx.users_changed = True
    return {"data": user_to_api(ctx, user)}


@action("delete-user", error_extra=FAILED)
def delete_user(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a user; never the GM the world runs as, nor the last GM."""
    assert_gm(ctx, "delete users")
    user = find_target(ctx, params)
    if ctx.is_online(user["_id"]):  # the GM the world's connection runs as
        raise ActionError("Cannot delete the currently active GM user")
    if int(user.get("role", 0)) >= documents.GM_ROLE and _gm_count(ctx) <= 1:
        raise ActionError("Cannot delete the last GM user")
    ctx.tx.delete("User", user["_id"])
    ctx.tx.delete(CREDENTIALS, user["_id"])
    ctx.users_changed = True
    return {"success": True}
