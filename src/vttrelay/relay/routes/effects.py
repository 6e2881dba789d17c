"""The active effect routes: status conditions and custom effects on actors."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Effects"

EFFECT_UUID = Param(
    "uuid",
    "string",
    BQ,
    required=True,
    description="Actor or token uuid (or anything with an actor).",
)

ROUTES: Final = (
    forward(
        "GET",
        "/effects/list",
        "get-status-effects",
        "The system's status conditions (id, name, icon).",
        NAME,
        scope="effects:read",
        sdk=Sdk("status_effects", "Envelope[StatusEffects]"),
    ),
    forward(
        "GET",
        "/effects",
        "get-effects",
        "The active effects on an actor.",
        NAME,
        EFFECT_UUID,
        scope="effects:read",
        sdk=Sdk("get", "Envelope[EffectsData]"),
    ),
    forward(
        "POST",
        "/effects",
        "add-effect",
        "Add a status condition or a custom effect to an actor.",
        NAME,
        EFFECT_UUID,
        Param(
            "statusId",
            None,
            BQ,
            description="A status id from /effects/list; wins.",
            sdk_type="str",
        ),
        Param("effectData", "object", BQ, description="ActiveEffect data: name, changes..."),
        scope="effects:write",
        sdk=Sdk("add", "Envelope[EffectAdded]"),
    ),
    forward(
        "DELETE",
        "/effects",
        "remove-effect",
        "Remove an effect by id, or the first one carrying a status.",
        NAME,
        EFFECT_UUID,
        Param("effectId", None, BQ, description="Id of the effect to remove.", sdk_type="str"),
        Param(
            "statusId",
            None,
            BQ,
            description="Remove the effect with this status; wins.",
            sdk_type="str",
        ),
        scope="effects:write",
        sdk=Sdk("remove", "Envelope[EffectRemoved]"),
    ),
)

GROUP: Final = Group(NAME, "effects", ROUTES)
