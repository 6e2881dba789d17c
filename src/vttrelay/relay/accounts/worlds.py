"""A known world's settings and users in the relay store (accounts-auth.md §2.7, §2.8): what its
owner sets over /auth/known-clients (cross-world targets, scopes and calls per hour; the stored
credential a headless session logs in with; whether the relay may start it on demand) and the
users its last `player-list` named. Every change is scoped to the owner's account (another
account's world is "not found"). Plain blocking I/O, one statement or transaction each.

The headless auto-start reads `world_settings(store, client_id)` (or `auto_start_worlds`): a
world may be started for a call only when `auto_start` is on and `credential_id` names one of
its account's credentials (`Vault.password` decrypts it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

import orjson

from vttrelay.relay.store import RelayStore
from vttrelay.relay.store.database import Connection, Row

ALL_TARGETS: Final = "*"  # allowedTargetClients entry: every world of the account
MAX_TARGETS: Final = 200  # allowedTargetClients entries
MAX_PER_HOUR: Final = 1_000_000  # remoteRequestsPerHour
MAX_USERS: Final = 500  # users kept of one world's player-list
MAX_USER_TEXT: Final = 256  # characters of a user's id or name


@dataclass(frozen=True)
class WorldSettings:
    """What the owner of a known world set for it."""

    client_id: str
    account: str
    allowed_targets: tuple[str, ...]  # clientIds this world may call, or ("*",)
    remote_scopes: tuple[str, ...]  # scopes its cross-world calls may use
    remote_per_hour: int  # 0: no limit
    credential_id: str | None  # the stored credential a headless session logs in with
    auto_start: bool  # the relay may start it for a call while it is offline
    updated_at: float | None

    @property
    def can_auto_start(self) -> bool:
        return self.auto_start and self.credential_id is not None


@dataclass(frozen=True)
class KnownUser:
    """A user of a world as its last `player-list` named it."""

    client_id: str
    user_id: str
    name: str
    role: int
    created_at: float
    updated_at: float


def _settings(row: Row) -> WorldSettings:
    return WorldSettings(
        client_id=row["client_id"],
        account=row["account"],
        allowed_targets=tuple(orjson.loads(row["allowed_targets"])),
        remote_scopes=tuple(orjson.loads(row["remote_scopes"])),
        remote_per_hour=int(row["remote_per_hour"]),
        credential_id=row["credential_id"],
        auto_start=bool(row["auto_start"]),
        updated_at=row["settings_updated_at"],
    )


SETTINGS_COLUMNS: Final = (
    "client_id, account, allowed_targets, remote_scopes, remote_per_hour, credential_id,"
    " auto_start, settings_updated_at"
)


def world_settings(store: RelayStore, client_id: str) -> WorldSettings | None:
    """The settings of the known world `client_id` (of whichever account), None if unknown."""
    row = store.db.one(
        f"SELECT {SETTINGS_COLUMNS} FROM known_clients WHERE client_id = ?", (client_id,)
    )
    return _settings(row) if row else None


def account_world_settings(store: RelayStore, account: str) -> dict[str, WorldSettings]:
    """The settings of every known world of an account, by client id."""
    rows = store.db.all(
        f"SELECT {SETTINGS_COLUMNS} FROM known_clients WHERE account = ?", (account,)
    )
    return {row["client_id"]: _settings(row) for row in rows}


def auto_start_worlds(store: RelayStore, account: str | None = None) -> list[WorldSettings]:
    """The worlds (of one account, or of all) the relay may start on demand: auto-start on and
    a credential linked."""
    sql = (
        f"SELECT {SETTINGS_COLUMNS} FROM known_clients WHERE auto_start = 1"
        " AND credential_id IS NOT NULL"
    )
    rows = (
        store.db.all(sql + " ORDER BY client_id")
        if account is None
        else store.db.all(sql + " AND account = ? ORDER BY client_id", (account,))
    )
    return [_settings(row) for row in rows]


def _owned(db: Connection, account: str, client_id: str) -> bool:
    row = db.execute(
        "SELECT account FROM known_clients WHERE client_id = ?", (client_id,)
    ).fetchone()
    return row is not None and row["account"] == account


def account_client_ids(store: RelayStore, account: str) -> set[str]:
    rows = store.db.all("SELECT client_id FROM known_clients WHERE account = ?", (account,))
    return {row["client_id"] for row in rows}


def set_cross_world(
    store: RelayStore,
    account: str,
    client_id: str,
    targets: Sequence[str] | None,
    scopes: Sequence[str] | None,
    per_hour: int | None,
) -> bool:
    """Change a world's cross-world settings (None: keep that one); False if the world is not
    the account's. The caller has checked the values (`known_clients_http`)."""
    changes: dict[str, Any] = {}
    if targets is not None:
        changes["allowed_targets"] = orjson.dumps(list(dict.fromkeys(targets))).decode()
    if scopes is not None:
        changes["remote_scopes"] = orjson.dumps(list(dict.fromkeys(scopes))).decode()
    if per_hour is not None:
        changes["remote_per_hour"] = per_hour
    return _change(store, account, client_id, changes)


def grant_cross_world(
    db: Connection, account: str, client_id: str, targets: Iterable[str], scopes: Iterable[str]
) -> bool:
    """Give the account's world these cross-world permissions (an approved pair request's
    upgrade, inside the caller's transaction): of `targets`, "*" and the account's other worlds
    (others are dropped), and `scopes` (checked when asked). False if the world is not the
    account's."""
    if not _owned(db, account, client_id):
        return False
    known = {
        row["client_id"]
        for row in db.execute(
            "SELECT client_id FROM known_clients WHERE account = ?", (account,)
        ).fetchall()
    }
    kept = [
        t for t in dict.fromkeys(targets) if t != client_id and (t == ALL_TARGETS or t in known)
    ]
    db.execute(
        "UPDATE known_clients SET allowed_targets = ?, remote_scopes = ?, settings_updated_at = ?"
        " WHERE client_id = ?",
        (
            orjson.dumps(kept[:MAX_TARGETS]).decode(),
            orjson.dumps(list(dict.fromkeys(scopes))).decode(),
            time.time(),
            client_id,
        ),
    )
    return True


def _change(store: RelayStore, account: str, client_id: str, changes: Mapping[str, Any]) -> bool:
    columns = sorted(changes)
    assignments = "".join(f"{c} = ?, " for c in columns)
    return (
        store.db.run(
            f"UPDATE known_clients SET {assignments}settings_updated_at = ?"
            " WHERE client_id = ? AND account = ?",
            (*[changes[c] for c in columns], time.time(), client_id, account),
        )
        == 1
    )


class Linked(Enum):
    """What `link_credential` did."""

    LINKED = "linked"
    NO_WORLD = "Known client not found"
    NO_CREDENTIAL = "Credential not found"


def link_credential(
    store: RelayStore, account: str, client_id: str, credential_id: str | None
) -> Linked:
    """Link one of the account's stored credentials to its world (None: unlink), in one
    transaction: the credential cannot vanish between the check and the link."""
    with store.transaction() as db:
        if not _owned(db, account, client_id):
            return Linked.NO_WORLD
        if credential_id is not None:
            found = db.execute(
                "SELECT id FROM credentials WHERE id = ? AND account = ?",
                (credential_id, account),
            ).fetchone()
            if found is None:
                return Linked.NO_CREDENTIAL
        db.execute(
            "UPDATE known_clients SET credential_id = ?, settings_updated_at = ?"
            " WHERE client_id = ? AND account = ?",
            (credential_id, time.time(), client_id, account),
        )
    return Linked.LINKED


def set_auto_start(store: RelayStore, account: str, client_id: str, enabled: bool) -> bool:
    """Let the relay start the account's world on demand (or not); False if not the account's."""
    return _change(store, account, client_id, {"auto_start": 1 if enabled else 0})


def unlink_credential(db: Connection, account: str, credential_id: str) -> None:
    """A deleted credential is linked to no world any more (inside the caller's transaction)."""
    db.execute(
        "UPDATE known_clients SET credential_id = NULL WHERE account = ? AND credential_id = ?",
        (account, credential_id),
    )


def forget_target(db: Connection, account: str, client_id: str) -> None:
    """A forgotten world is no target of its siblings any more (lists with "*" stay as they
    are), and its users go (inside the caller's transaction)."""
    db.execute("DELETE FROM known_users WHERE client_id = ?", (client_id,))
    rows = db.execute(
        "SELECT client_id, allowed_targets FROM known_clients WHERE account = ?", (account,)
    ).fetchall()
    for row in rows:
        targets = orjson.loads(row["allowed_targets"])
        if client_id in targets and ALL_TARGETS not in targets:
            kept = [t for t in targets if t != client_id]
            db.execute(
                "UPDATE known_clients SET allowed_targets = ? WHERE client_id = ?",
                (orjson.dumps(kept).decode(), row["client_id"]),
            )


# Users ----------------------------------------------------------------------------------------


def _user_fields(user: Any) -> tuple[str, str, int] | None:
    """(id, name, role) of one `player-list` entry, or None when it is not one."""
    if not isinstance(user, dict):
        return None
    user_id, name, role = user.get("id"), user.get("name"), user.get("role")
    if not isinstance(user_id, str) or not user_id or len(user_id) > MAX_USER_TEXT:
        return None
    text = name[:MAX_USER_TEXT] if isinstance(name, str) else ""
    level = role if isinstance(role, int) and not isinstance(role, bool) and 0 <= role <= 4 else 0
    return user_id, text, level


def remember_users(store: RelayStore, client_id: str, account: str, users: Iterable[Any]) -> int:
    """Replace a world's users with those of its `player-list` (the first MAX_USERS entries
    that are users; others are skipped); how many are kept. Users that stay keep their
    `createdAt`."""
    fields: dict[str, tuple[str, int]] = {}
    for user in users:
        parsed = _user_fields(user)
        if parsed is not None:
            fields.setdefault(parsed[0], parsed[1:])
        if len(fields) >= MAX_USERS:
            break
    now = time.time()
    with store.transaction() as db:
        if not _owned(db, account, client_id):
            return 0
        before = {
            row["user_id"]: row["created_at"]
            for row in db.execute(
                "SELECT user_id, created_at FROM known_users WHERE client_id = ?", (client_id,)
            ).fetchall()
        }
        db.execute("DELETE FROM known_users WHERE client_id = ?", (client_id,))
        db.executemany(
            "INSERT INTO known_users (client_id, account, user_id, name, role, created_at,"
            " updated_at) VALUES (?,?,?,?,?,?,?)",
            [
                (client_id, account, user_id, name, role, before.get(user_id, now), now)
                for user_id, (name, role) in fields.items()
            ],
        )
    return len(fields)


def known_users(store: RelayStore, account: str, client_id: str) -> list[KnownUser] | None:
    """The users of the account's world, by name; None if the world is not the account's."""
    owner = store.db.one("SELECT account FROM known_clients WHERE client_id = ?", (client_id,))
    if owner is None or owner["account"] != account:
        return None
    rows = store.db.all(
        "SELECT * FROM known_users WHERE client_id = ? ORDER BY name, user_id", (client_id,)
    )
    return [
        KnownUser(
            client_id=row["client_id"],
            user_id=row["user_id"],
            name=row["name"],
            role=int(row["role"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )
        for row in rows
    ]
