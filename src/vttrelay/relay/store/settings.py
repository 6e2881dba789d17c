"""The relay store's settings (table `settings`): named text values the relay keeps."""

from __future__ import annotations

from vttrelay.relay.store.base import StoreBase


class SettingsTable(StoreBase):
    """The settings of `RelayStore`."""

    def get_setting(self, key: str) -> str | None:
        row = self.db.one("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row["value"]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        self.db.run(
            "INSERT INTO settings (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def claim_setting(self, key: str, value: str) -> bool:
        """Set `key` unless it is set: True for the one caller that set it (a thing done once
        per store, even by processes starting together)."""
        return bool(
            self.db.run(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, value),
            )
        )
