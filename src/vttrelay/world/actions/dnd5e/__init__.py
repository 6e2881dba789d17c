"""The D&D 5e system's actions (the /dnd5e routes): actor details, checks and saves
(`actors`), inventory and currency, rests, using items and spells; `common` holds what they
share. `MODULES` is what `actions.table` puts in the world's table."""

from __future__ import annotations

from types import ModuleType

from vttrelay.world.actions.dnd5e import actors, inventory, rest, use

MODULES: tuple[ModuleType, ...] = (actors, inventory, rest, use)
