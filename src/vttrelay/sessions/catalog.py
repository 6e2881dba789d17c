"""The embedded worlds an account keeps on the relay (`vttrelay world create NAME`, and
`POST /session/worlds`): one folder each under `<data-dir>/sessions/worlds/<account key>/<name>`
holding `session-world.json` (its name, account and client id) and, once started, the world's own
data (`world/world.db`, its files). A world's client id is `<name>-<6 hex of the account>`, so
two accounts may use the same name. Names match `NAME_PATTERN`; an account keeps at most
`MAX_WORLDS`.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from vttrelay.sessions.errors import Refused

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,47}")
MAX_WORLDS: Final = 20
RECORD: Final = "session-world.json"


class CatalogError(Refused, ValueError):
    """A refused catalog change: HTTP status and text."""


@dataclass(frozen=True)
class StoredWorld:
    name: str
    account: str
    client_id: str
    folder: Path
    created_at: int

    def summary(self) -> dict[str, object]:
        return {"name": self.name, "clientId": self.client_id, "createdAt": self.created_at}


def account_key(account: str) -> str:
    return hashlib.sha256(account.encode()).hexdigest()[:16]


class WorldCatalog:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _folder(self, account: str) -> Path:
        return self.root / account_key(account)

    def create(self, account: str, name: str) -> StoredWorld:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise CatalogError(
                400, "World name: 1-48 letters, digits, '-' or '_', starting with a letter or digit"
            )
        if self.get(account, name) is not None:
            raise CatalogError(409, f"World '{name}' already exists")
        if len(self.list(account)) >= MAX_WORLDS:
            raise CatalogError(400, f"An account keeps at most {MAX_WORLDS} worlds")
        folder = self._folder(account) / name
        folder.mkdir(parents=True)
        world = StoredWorld(
            name, account, f"{name}-{account_key(account)[:6]}", folder, int(time.time() * 1000)
        )
        record = {"name": name, "account": account, "clientId": world.client_id}
        (folder / RECORD).write_bytes(orjson.dumps({**record, "createdAt": world.created_at}))
        return world

    def get(self, account: str, name: str) -> StoredWorld | None:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            return None
        return self._load(self._folder(account) / name / RECORD)

    def list(self, account: str) -> list[StoredWorld]:
        folder = self._folder(account)
        if not folder.is_dir():
            return []
        found = [self._load(p / RECORD) for p in sorted(folder.iterdir())]
        return [w for w in found if w is not None]

    def _load(self, path: Path) -> StoredWorld | None:
        try:
            record = orjson.loads(path.read_bytes())
            return StoredWorld(
                str(record["name"]),
                str(record["account"]),
                str(record["clientId"]),
                path.parent,
                int(record["createdAt"]),
            )
        except (OSError, KeyError, ValueError, TypeError, orjson.JSONDecodeError):
            return None
