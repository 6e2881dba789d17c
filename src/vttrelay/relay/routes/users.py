"""The user routes (endpoints-beyond-seed §7): the world's users."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, B, Q, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Users"

USER_SELECTORS = (
    Param("id", "string", Q, description="User id."),
    Param("name", "string", Q, description="User name (case-insensitive)."),
)

ROUTES: Final = (
    forward(
        "GET",
        "/users",
        "get-users",
        "Every user of the world.",
        NAME,
        scope="user:read",
        sdk=Sdk("list", "Envelope[UserList]"),
    ),
    forward(
        "GET",
        "/user",
        "get-user",
        "One user, by id or name.",
        NAME,
        *USER_SELECTORS,
        scope="user:read",
        require_any=("id", "name"),
        sdk=Sdk("get", "Envelope[User]"),
    ),
    forward(
        "POST",
        "/user",
        "create-user",
        "Create a user (GM only with userId).",
        NAME,
        Param("name", "string", B, required=True, description="The new user's name."),
        Param(
            "role",
            "integer",
            B,
            default=1,
            description="0 none, 1 player, 2 trusted, 3 assistant GM, 4 GM (default 1).",
        ),
        Param("password", "string", B, description="Password."),
        scope="user:write",
        sdk=Sdk("create", "Envelope[User]"),
    ),
    forward(
        "PUT",
        "/user",
        "update-user",
        "Update a user (GM only with userId).",
        NAME,
        Param(
            "data",
            "object",
            B,
            required=True,
            description="Changes: name, role, password, color, avatar, character.",
        ),
        Param("id", "string", BQ, description="Id of the user to change."),
        Param("name", "string", BQ, description="Name of the user to change."),
        scope="user:write",
        require_any=("id", "name"),
        sdk=Sdk("update", "Envelope[User]"),
    ),
    forward(
        "DELETE",
        "/user",
        "delete-user",
        "Delete a user (GM only with userId).",
        NAME,
        *USER_SELECTORS,
        scope="user:write",
        require_any=("id", "name"),
        sdk=Sdk("delete", "Done"),
    ),
)

GROUP: Final = Group(NAME, "users", ROUTES)
