"""A world's one source of chance and its clock (`vttrelay serve --seed N`).

Every random draw of a world goes through its `Chance`: the dice (checks, saves, attacks,
damage, initiative, /roll), the ids of the documents it creates (chat messages, combatants,
effects), the ids of /roll rolls, the colour of a new user and the seed of each script's
`Math.random` (execute-js, script macros). Unseeded, the generator starts
from the system's entropy and document ids come from the system's random source, as always.

Seeded, the generator starts from the seed and the clock is a counter: it starts at
`SEEDED_EPOCH_MS` (or just after the latest chat message already stored, so that chat keeps its
order across restarts) and moves one millisecond for each timestamp the world hands out. The
same requests in the same order then get byte-identical replies: rolls, ids and timestamps.
`restart()` puts both back where they started (the pytest plugin does, between tests).
"""

from __future__ import annotations

import random
import time
from typing import Final

from vttrelay.world.model.ids import new_id

# Where a seeded world's clock starts: 2026-01-01T00:00:00Z.
SEEDED_EPOCH_MS: Final = 1_767_225_600_000


class Chance:
    """The world's generator, ids and clock (seeded: reproducible; see the module docstring)."""

    def __init__(self, seed: int | None = None, *, floor_ms: int = 0) -> None:
        self.seed = seed
        self.random = random.Random(seed)  # None: the system's entropy
        self._floor_ms = max(floor_ms, SEEDED_EPOCH_MS)

    @property
    def seeded(self) -> bool:
        return self.seed is not None

    def restart(self, floor_ms: int = 0) -> None:
        """Back to the start: the generator reseeded and the clock at its first tick again
        (after `floor_ms`, the latest time the world's documents hold). Unseeded: nothing."""
        if self.seed is None:
            return
        self.random.seed(self.seed)
        self._floor_ms = max(floor_ms, SEEDED_EPOCH_MS)

    def new_id(self) -> str:
        """A new document id: from the generator when seeded, else the system's source."""
        return new_id(self.random if self.seed is not None else None)

    def wall_ms(self) -> int:
        """The clock's reading before it is made strictly increasing: real milliseconds since
        the epoch, or a seeded world's starting point."""
        return self._floor_ms if self.seed is not None else int(time.time() * 1000)
