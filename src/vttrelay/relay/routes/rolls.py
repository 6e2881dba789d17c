"""The dice routes: roll a formula, read the recent rolls."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import B, Q, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Rolls"

ROUTES: Final = (
    forward(
        "POST",
        "/roll",
        "roll",
        "Roll a dice formula, optionally posting it to chat.",
        NAME,
        Param(
            "formula",
            "string",
            B,
            required=True,
            description="Dice formula, e.g. `2d20kh + 5`.",
        ),
        Param("flavor", None, B, description="Flavor text (default empty).", sdk_type="str"),
        Param(
            "createChatMessage",
            "boolean",
            B,
            description="Post the roll to chat (default false).",
        ),
        Param("speaker", None, B, description="Token or actor uuid speaking.", sdk_type="str"),
        Param(
            "whisper",
            "array",
            B,
            description="User ids: a private roll for them.",
            sdk_type="Sequence[str]",
        ),
        scope="roll:execute",
        sdk=Sdk("roll", "Envelope[RollData]"),
    ),
    forward(
        "GET",
        "/rolls",
        "rolls",
        "The recent rolls, newest first (at most 20).",
        NAME,
        Param("limit", "integer", Q, description="At most this many (default and cap 20)."),
        scope="roll:read",
        sdk=Sdk("list", "Envelope[RollList]"),
    ),
    forward(
        "GET",
        "/lastroll",
        "last-roll",
        "The most recent roll, or null.",
        NAME,
        scope="roll:read",
        sdk=Sdk("last", "Envelope[LastRoll]"),
    ),
)

GROUP: Final = Group(NAME, "rolls", ROUTES)
