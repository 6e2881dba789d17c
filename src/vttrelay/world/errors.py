"""The world's errors, in one module: what an action, a rule, the dice or a script refuse, each
with the message that becomes the reply's `error` text. Rules, actions and the script sandbox
import them from here; this module imports nothing of the world."""

from __future__ import annotations

from typing import Any


class ActionError(Exception):
    """A clear, expected failure: its message is the reply's `error` text. `extra` holds reply
    keys that depend on the request and come before the action's `error_extra` (a macro's
    `uuid`)."""

    def __init__(
        self, message: str, extra: dict[str, Any] | None = None, *, bare: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
        self.bare = bare  # reply with type, requestId and error only


class UserNotFound(Exception):
    """The request's `userId` names no user."""

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self.ref = ref


class DiceError(ValueError):
    """A formula the dice library cannot parse or roll."""


class CurrencyError(ValueError):
    """A transfer the source cannot pay, or a malformed amount."""


class EffectDataError(ValueError):
    """ActiveEffect data the tabletop would refuse; the message says which field."""


class SpellError(ValueError):
    """A spell that cannot be cast or prepared."""


class UsesError(ValueError):
    """An item or activity without uses left."""


class UseError(ValueError):
    """The item cannot be used now (no slot, no uses, not prepared...)."""


class ScriptError(Exception):
    """The script failed: its message is what follows `Error executing script: `."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class HostError(Exception):
    """Raised by a script's host (world) call to reject the script's Promise with this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
