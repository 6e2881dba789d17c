"""Notification settings (accounts-auth.md §2.11, §9): stored and returned as the reference
does, at three levels (the account, one scoped key, one world), as data: each level is a table
of fields with their JSON type and default, and one store row holds a level's values as JSON.

`PUT` replaces the whole row: a field missing from the body takes its default, as in the
reference (§14 Q14). What this relay sends: the `/test` routes send a test mail to the
`notifyEmail` address when SMTP is configured; Discord webhooks are stored and returned but
never called (the relay makes no request to a URL a caller chose), and no relay event sends a
notification yet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Final

import orjson

from vttrelay.relay.core import error
from vttrelay.relay.store import RelayStore

MAX_TEXT: Final = 2048  # a webhook URL or an email address
MAX_WINDOW: Final = 7 * 86400  # seconds


@dataclass(frozen=True)
class Level:
    """One level of settings: its row kind, its fields (name -> default; the default's type is
    the field's JSON type) and the texts of its routes."""

    kind: str
    fields: dict[str, Any]
    owner_key: str  # the id field its answers carry ("" for the account level)


ACCOUNT: Final = Level(
    "account",
    {
        "discordWebhookUrl": "",
        "notifyEmail": "",
        "notifyOnConnect": True,
        "notifyOnDisconnect": True,
        "notifyOnMetadataMismatch": True,
        "notifyOnSettingsChange": True,
        "notifyOnExecuteJs": True,
        "notifyOnMacroExecute": False,
        "notifyOnNewClientConnect": True,
        "notificationDebounceWindowSecs": 0,
        "remoteRequestBatchWindowSecs": 300,
        "logCrossWorldRequests": True,
        "notifyOnCrossWorldRequests": True,
    },
    "",
)
KEY: Final = Level(
    "key",
    {
        "discordWebhookUrl": "",
        "notifyEmail": "",
        "notifyOnExecuteJs": False,
        "notifyOnMacroExecute": False,
        "notifyOnRateLimit": False,
        "notifyOnError": False,
    },
    "apiKeyId",
)
WORLD: Final = Level(
    "world",
    {
        "discordWebhookUrl": "",
        "notifyEmail": "",
        "notifyOnConnect": False,
        "notifyOnDisconnect": False,
        "notifyOnExecuteJs": False,
        "notifyOnMacroExecute": False,
    },
    "knownClientId",
)


def parse(level: Level, body: dict[str, Any]) -> dict[str, Any]:
    """A PUT body as the whole row: each field of its type (400 `Invalid request body`
    otherwise), absent ones at their default; unknown fields ignored."""
    values: dict[str, Any] = {}
    for name, default in level.fields.items():
        value = body.get(name)
        if value is None:
            values[name] = default
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise error(400, "Invalid request body")
            values[name] = value
        elif isinstance(default, int):
            if not isinstance(value, int) or isinstance(value, bool):
                raise error(400, "Invalid request body")
            if not 0 <= value <= MAX_WINDOW:
                raise error(400, f"'{name}' must be from 0 to {MAX_WINDOW} seconds")
            values[name] = value
        else:
            if not isinstance(value, str):
                raise error(400, "Invalid request body")
            if len(value) > MAX_TEXT:
                raise error(400, f"'{name}' is too long (at most {MAX_TEXT} characters)")
            values[name] = value.strip()
    return values


def read(store: RelayStore, level: Level, account: str, owner: str) -> dict[str, Any] | None:
    """The stored row (None: none saved)."""
    row = store.db.one(
        "SELECT settings FROM notification_settings WHERE kind = ? AND owner = ? AND account = ?",
        (level.kind, owner, account),
    )
    if row is None:
        return None
    saved = orjson.loads(row["settings"])
    return {name: saved.get(name, default) for name, default in level.fields.items()}


def current(store: RelayStore, level: Level, account: str, owner: str) -> dict[str, Any]:
    """The stored row, or the defaults."""
    return read(store, level, account, owner) or dict(level.fields)


def write(
    store: RelayStore, level: Level, account: str, owner: str, values: dict[str, Any]
) -> None:
    store.db.run(
        "INSERT INTO notification_settings (kind, owner, account, settings, updated_at)"
        " VALUES (?,?,?,?,?) ON CONFLICT (kind, owner) DO UPDATE SET"
        " settings = excluded.settings, updated_at = excluded.updated_at",
        (level.kind, owner, account, orjson.dumps(values).decode(), time.time()),
    )


def delete(store: RelayStore, level: Level, account: str, owner: str) -> None:
    store.db.run(
        "DELETE FROM notification_settings WHERE kind = ? AND owner = ? AND account = ?",
        (level.kind, owner, account),
    )
