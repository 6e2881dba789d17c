"""The encounter (combat tracker) routes: start, turn, end, add and remove combatants."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, QB, B, forward
from vttrelay.relay.routes.model import Group, Param, Route, Sdk

NAME: Final = "Encounters"

ENCOUNTER_ID = Param(
    "encounterId",
    "string",
    BQ,
    aliases=("encounter",),
    description="Id of the encounter to act on (default: the current one).",
)


def _encounter(path: str, summary: str, *params: Param, sdk: Sdk) -> Route:
    return forward(
        "POST", path, path.lstrip("/"), summary, NAME, *params, scope="encounter:manage", sdk=sdk
    )


ROUTES: Final = (
    forward(
        "GET",
        "/encounters",
        "encounters",
        "Every encounter (combat) of the world, with its combatants in turn order.",
        NAME,
        scope="encounter:read",
        sdk=Sdk("list", "EncountersReply"),
    ),
    _encounter(
        "/start-encounter",
        "Start an encounter from tokens, the selected tokens or the players' tokens (GM only).",
        Param(
            "tokenUuids",
            "array",
            B,
            aliases=("tokens",),
            description="Token (or actor) uuids to add as combatants.",
            sdk_type="Sequence[str]",
        ),
        Param("startWithSelected", "boolean", B, description="Add the selected tokens."),
        Param(
            "startWithPlayers",
            "boolean",
            B,
            description="Add every token of the active scene whose actor a player owns.",
        ),
        Param("rollNPC", "boolean", B, description="Roll initiative for the NPCs."),
        Param("rollAll", "boolean", B, description="Roll initiative for every combatant."),
        Param(
            "name",
            None,
            B,
            description="Name of the encounter (default New Encounter).",
            sdk_type="str",
        ),
        sdk=Sdk("start", "EncounterStarted"),
    ),
    _encounter(
        "/next-turn",
        "Advance to the next turn (GM only).",
        ENCOUNTER_ID,
        sdk=Sdk("next_turn", "TurnReply"),
    ),
    _encounter(
        "/next-round",
        "Advance to the next round (GM only).",
        ENCOUNTER_ID,
        sdk=Sdk("next_round", "TurnReply"),
    ),
    _encounter(
        "/last-turn", "Go back one turn (GM only).", ENCOUNTER_ID, sdk=Sdk("last_turn", "TurnReply")
    ),
    _encounter(
        "/last-round",
        "Go back one round (GM only).",
        ENCOUNTER_ID,
        sdk=Sdk("last_round", "TurnReply"),
    ),
    _encounter(
        "/end-encounter",
        "End (delete) an encounter (GM only).",
        ENCOUNTER_ID,
        sdk=Sdk("end", "EncounterEnded"),
    ),
    _encounter(
        "/add-to-encounter",
        "Add tokens or actors (their token on the active scene) as combatants.",
        ENCOUNTER_ID,
        Param("selected", "boolean", QB, description="Also add the selected tokens."),
        Param(
            "uuids",
            "array",
            B,
            description="Token or actor uuids to add.",
            sdk_type="Sequence[str]",
        ),
        Param("rollInitiative", "boolean", B, description="Roll initiative for what was added."),
        sdk=Sdk("add", "CombatantsAdded"),
    ),
    _encounter(
        "/remove-from-encounter",
        "Remove tokens or actors (all their combatants) from an encounter.",
        ENCOUNTER_ID,
        Param("selected", "boolean", QB, description="Also remove the selected tokens."),
        Param(
            "uuids",
            "array",
            B,
            description="Token or actor uuids to remove.",
            sdk_type="Sequence[str]",
        ),
        sdk=Sdk("remove", "CombatantsRemoved"),
    ),
    _encounter(
        "/roll-initiative",
        "Roll initiative for the named combatants (rerolled), else for each without one "
        "(vttrelay; the current combatant keeps its turn).",
        ENCOUNTER_ID,
        Param(
            "uuids",
            "array",
            B,
            description="Token or actor uuids whose combatants roll.",
            sdk_type="Sequence[str]",
        ),
        Param(
            "combatantIds",
            "array",
            B,
            description="Combatant ids that roll.",
            sdk_type="Sequence[str]",
        ),
        sdk=Sdk("roll_initiative", "InitiativeReply"),
    ),
    _encounter(
        "/set-initiative",
        "Set a combatant's initiative (vttrelay; the current combatant keeps its turn).",
        ENCOUNTER_ID,
        Param("uuid", "string", BQ, description="Token or actor uuid of the combatant."),
        Param("combatantId", "string", BQ, description="Id of the combatant."),
        Param("initiative", "number", B, required=True, description="The initiative."),
        sdk=Sdk("set_initiative", "InitiativeReply"),
    ),
)

GROUP: Final = Group(NAME, "encounters", ROUTES)
