"""The embedded world's action table: the core actions and the D&D 5e system's, built when a
world starts. A second game system's actions would be one more module list here."""

from __future__ import annotations

from types import ModuleType

from vttrelay.world.actions import (
    canvas,
    chat,
    dnd5e,
    dnd5e_inventory,
    dnd5e_rest,
    dnd5e_use,
    effects,
    encounters,
    entities,
    files,
    macros,
    playlists,
    rolls,
    scenes,
    scripts,
    search,
    sheets,
    structure,
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
    macros,
    playlists,
    rolls,
    scenes,
    scripts,
    search,
    sheets,
    structure,
    users,
    utility,
)
# The D&D 5e system's actions (the /dnd5e routes).
DND5E: tuple[ModuleType, ...] = (dnd5e, dnd5e_inventory, dnd5e_rest, dnd5e_use)


def standard_table() -> ActionTable:
    """Every action of the embedded world."""
    return ActionTable.from_modules(*CORE, *DND5E)
