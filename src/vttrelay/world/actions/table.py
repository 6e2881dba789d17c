"""The embedded world's action table: the core actions and the D&D 5e system's (`actions.dnd5e`),
built when a world starts. A second game system is a sibling subpackage of `dnd5e` with its own
`MODULES`, added here."""

from __future__ import annotations

from types import ModuleType

from vttrelay.world.actions import (
    canvas,
    chat,
    dnd5e,
    effects,
    encounters,
    entities,
    files,
    initiative,
    macros,
    membership,
    playlists,
    rolls,
    scenes,
    scripts,
    search,
    sheets,
    structure,
    transfers,
    turns,
    users,
    utility,
)
from vttrelay.world.runtime.table import ActionTable

# The tabletop's own actions, whatever the game system.
CORE: tuple[ModuleType, ...] = (
    canvas,
    chat,
    effects,
    encounters,
    entities,
    files,
    initiative,
    macros,
    membership,
    playlists,
    rolls,
    scenes,
    scripts,
    search,
    sheets,
    structure,
    transfers,
    turns,
    users,
    utility,
)


def standard_table() -> ActionTable:
    """Every action of the embedded world."""
    return ActionTable.from_modules(*CORE, *dnd5e.MODULES)
