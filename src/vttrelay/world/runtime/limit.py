"""An action's time limit as a value: `limit()` raises the world's time-limit `ActionError` once
its deadline has passed (the store's transactions and `ctx.checkpoint()` call it), `left()` says
how much time remains (what work handed to the heavy-work process may take)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vttrelay.world.errors import ActionError


@dataclass(frozen=True)
class TimeLimit:
    deadline: float  # in `monotonic`'s seconds
    seconds: float  # the world's limit, for the message
    monotonic: Callable[[], float]

    def __call__(self) -> None:
        if self.monotonic() > self.deadline:
            raise self.error()

    def left(self) -> float:
        return self.deadline - self.monotonic()

    def error(self) -> ActionError:
        return ActionError(
            f"The request ran past the world's time limit of {self.seconds:g} s "
            "and was stopped: nothing was changed"
        )
