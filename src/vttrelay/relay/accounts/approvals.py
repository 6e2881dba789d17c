"""Pair requests and API-key requests (endpoints-beyond-seed §12): their records and every change
to them, each in one store transaction.

A world's module (its "Pair" and "Upgrade" buttons) or an app asks without credentials; the
relay's owner approves or refuses; the asker polls the status and receives, once, a pairing code
(which it trades at `POST /auth/pair` as usual), an "upgraded" answer, or an API key. These
functions are the one place where that happens: the HTTP handlers (`pairing.py`), the CLI
(`vttrelay pair approve`, `vttrelay keys approve`, ...) and a dashboard call them. Refusals
raise the relay's one error type, `core.RelayError`, with the reference's statuses and texts,
and change nothing.

API keys are never stored: approval creates the key (listed, revocable) with the hash of a
secret nobody knows; the real secret is drawn, and its hash stored, only when the asker
retrieves it (the device flow's status read, or the web flow's exchange).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from vttrelay.relay.core import error
from vttrelay.relay.store import (
    RelayStore,
    insert_key,
    insert_pairing_code,
    insert_with_new_code,
    sha256_hex,
)
from vttrelay.relay.store.database import Connection, Row

Answer = tuple[int, dict[str, Any]]  # an HTTP status and a JSON body

PAIR_REQUEST_CODE_LENGTH = 8
KEY_REQUEST_CODE_LENGTH = 6
REQUEST_TTL = 600.0  # a request waits 10 minutes for a decision
APPROVED_CODE_TTL = 300.0  # the pairing code an approval mints is valid 5 minutes
EXCHANGE_TTL = 600.0  # the web flow's exchange code is valid 10 minutes after approval
PURGE_AFTER = 86400.0  # requests are deleted a day after they expire

PENDING = "pending"
APPROVED = "approved"
DENIED = "denied"
EXCHANGED = "exchanged"
EXPIRED = "expired"

NOT_PAIRED = "World is not yet paired — cannot upgrade. Pair first."


@dataclass(frozen=True)
class PairAsk:
    """What a world asks for: the checked body of `POST /auth/pair-request`."""

    world_id: str
    world_title: str = ""
    system_id: str = ""
    system_title: str = ""
    system_version: str = ""
    foundry_version: str = ""
    client_id: str = ""
    remote_scopes: tuple[str, ...] = ()
    target_clients: tuple[str, ...] = ()
    upgrade_only: bool = False

    @property
    def world(self) -> str:
        """How the world is shown to a human: its title, else its id."""
        return self.world_title or self.world_id


@dataclass(frozen=True)
class PairRequest:
    """A stored pair request."""

    code: str
    ask: PairAsk
    status: str  # as stored: pending, approved, denied, exchanged
    peer: str
    created_at: float
    expires_at: float
    account: str | None
    pairing_code: str | None
    decided_at: float | None

    def state(self, now: float | None = None) -> str:
        """The status a poll sees: `expired` for a pending request past its expiry."""
        return _state(self.status, self.expires_at, now)


@dataclass(frozen=True)
class KeyAsk:
    """What an app asks for: the checked body of `POST /auth/key-request`."""

    app_name: str
    scopes: tuple[str, ...]
    app_description: str = ""
    app_url: str = ""
    callback_url: str = ""
    client_ids: tuple[str, ...] = ()
    suggested_monthly_limit: int | None = None
    suggested_expiry: str = ""


@dataclass(frozen=True)
class KeyRequest:
    """A stored API-key request."""

    code: str
    ask: KeyAsk
    status: str
    peer: str
    created_at: float
    expires_at: float
    account: str | None
    key_id: str | None
    decided_at: float | None

    def state(self, now: float | None = None) -> str:
        return _state(self.status, self.expires_at, now)


@dataclass(frozen=True)
class PairApproval:
    """An approved pair request: the pairing code its next poll hands out (None: upgrade)."""

    request: PairRequest
    pairing_code: str | None
    upgraded: bool


@dataclass(frozen=True)
class KeyApproval:
    """An approved key request: the key created, and the web flow's exchange code (shown once)."""

    request: KeyRequest
    key_id: str
    scopes: tuple[str, ...]
    client_ids: tuple[str, ...]
    exchange_code: str | None


def _state(status: str, expires_at: float, now: float | None) -> str:
    now = time.time() if now is None else now
    return EXPIRED if status == PENDING and expires_at <= now else status


def _list(text: str) -> tuple[str, ...]:
    return tuple(orjson.loads(text))


def _json(items: tuple[str, ...]) -> str:
    return orjson.dumps(list(items)).decode()


def _pair_request(row: Row) -> PairRequest:
    ask = PairAsk(
        world_id=row["world_id"],
        world_title=row["world_title"],
        system_id=row["system_id"],
        system_title=row["system_title"],
        system_version=row["system_version"],
        foundry_version=row["foundry_version"],
        client_id=row["client_id"] or "",
        remote_scopes=_list(row["remote_scopes"]),
        target_clients=_list(row["target_clients"]),
        upgrade_only=bool(row["upgrade_only"]),
    )
    return PairRequest(
        code=row["code"],
        ask=ask,
        status=row["status"],
        peer=row["peer"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        account=row["account"],
        pairing_code=row["pairing_code"],
        decided_at=row["decided_at"],
    )


def _key_request(row: Row) -> KeyRequest:
    ask = KeyAsk(
        app_name=row["app_name"],
        scopes=_list(row["scopes"]),
        app_description=row["app_description"],
        app_url=row["app_url"],
        callback_url=row["callback_url"],
        client_ids=_list(row["client_ids"]),
        suggested_monthly_limit=row["suggested_monthly_limit"],
        suggested_expiry=row["suggested_expiry"],
    )
    return KeyRequest(
        code=row["code"],
        ask=ask,
        status=row["status"],
        peer=row["peer"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        account=row["account"],
        key_id=row["key_id"],
        decided_at=row["decided_at"],
    )


def _now(now: float | None) -> float:
    return time.time() if now is None else now


# Both kinds of request live in a table of the same shape (code, status, expires_at, ...); these
# helpers take the table ("pair_requests" or "key_requests") and the noun its errors use.
PAIR_TABLE = "pair_requests"
KEY_TABLE = "key_requests"
_NOUN = {PAIR_TABLE: "Pair request", KEY_TABLE: "Key request"}
_Request = TypeVar("_Request", PairRequest, KeyRequest)


def _create(
    store: RelayStore,
    table: str,
    columns: str,
    code_length: int,
    values: tuple[Any, ...],
    now: float,
) -> Row:
    """Insert a new request (a fresh code, then `values` for `columns`) and return its row;
    forget requests of that table that expired long ago."""
    with store.transaction() as db:
        db.execute(f"DELETE FROM {table} WHERE expires_at < ?", (now - PURGE_AFTER,))
        marks = ",".join("?" * (len(values) + 1))
        sql = f"INSERT INTO {table} (code, {columns}) VALUES ({marks}) ON CONFLICT DO NOTHING"
        code = insert_with_new_code(db, sql, code_length, values)
        row: Row = db.execute(f"SELECT * FROM {table} WHERE code = ?", (code,)).fetchone()
    return row


def _row(db: Connection, table: str, code: str) -> Row | None:
    """The request stored under `code` (as typed: case and spaces do not matter), or None."""
    row: Row | None = db.execute(
        f"SELECT * FROM {table} WHERE code = ?", (code.strip().upper(),)
    ).fetchone()
    return row


def _get(
    store: RelayStore, table: str, code: str, read: Callable[[Row], _Request]
) -> _Request | None:
    with store.transaction() as db:
        row = _row(db, table, code)
    return read(row) if row else None


def _listed(
    store: RelayStore,
    table: str,
    read: Callable[[Row], _Request],
    pending_only: bool,
    now: float | None,
) -> list[_Request]:
    """The table's requests, oldest first: only those still waiting for a decision, or all."""
    now = _now(now)
    with store.transaction() as db:
        rows = db.execute(f"SELECT * FROM {table} ORDER BY created_at, code").fetchall()
    requests = [read(r) for r in rows]
    return [r for r in requests if r.state(now) == PENDING] if pending_only else requests


def _pending(db: Connection, table: str, code: str) -> Row:
    """The request under `code`, which must exist and still wait for a decision."""
    row = _row(db, table, code)
    if row is None:
        raise error(404, f"{_NOUN[table]} not found")
    if row["status"] != PENDING:
        raise error(400, f"{_NOUN[table]} is not pending")
    return row


def _refuse(store: RelayStore, table: str, code: str, now: float | None) -> Row:
    """Mark a pending request denied; return its row as it was."""
    now = _now(now)
    with store.transaction() as db:
        row = _pending(db, table, code)
        db.execute(
            f"UPDATE {table} SET status = ?, decided_at = ? WHERE code = ?",
            (DENIED, now, row["code"]),
        )
    return row


# Pair requests ---------------------------------------------------------------------------------


def create_pair_request(
    store: RelayStore,
    ask: PairAsk,
    peer: str = "",
    ttl: float = REQUEST_TTL,
    now: float | None = None,
) -> PairRequest:
    """Store a new pending pair request valid `ttl` seconds (and forget long-expired ones)."""
    now = _now(now)
    row = _create(
        store,
        PAIR_TABLE,
        "client_id, world_id, world_title, system_id, system_title, system_version,"
        " foundry_version, remote_scopes, target_clients, upgrade_only, peer, created_at,"
        " expires_at",
        PAIR_REQUEST_CODE_LENGTH,
        (
            ask.client_id or None,
            ask.world_id,
            ask.world_title,
            ask.system_id,
            ask.system_title,
            ask.system_version,
            ask.foundry_version,
            _json(ask.remote_scopes),
            _json(ask.target_clients),
            int(ask.upgrade_only),
            peer,
            now,
            now + ttl,
        ),
        now,
    )
    return _pair_request(row)


def get_pair_request(store: RelayStore, code: str) -> PairRequest | None:
    return _get(store, PAIR_TABLE, code, _pair_request)


def pair_requests(
    store: RelayStore, pending_only: bool = True, now: float | None = None
) -> list[PairRequest]:
    """Pair requests, oldest first: only those still waiting for a decision, or all."""
    return _listed(store, PAIR_TABLE, _pair_request, pending_only, now)


def pair_status(store: RelayStore, code: str, now: float | None = None) -> Answer:
    """The answer to `GET /auth/pair-request/{code}/status` (§12.2): HTTP status and body. The
    first read of an approved request hands out the pairing code and marks it exchanged."""
    now = _now(now)
    with store.transaction() as db:
        row = _row(db, PAIR_TABLE, code)
        if row is None:
            return 404, {"error": "Pair request not found"}
        state = _state(row["status"], row["expires_at"], now)
        if state == EXPIRED:
            return 410, {"status": EXPIRED}
        if state == APPROVED:
            db.execute(
                "UPDATE pair_requests SET status = ? WHERE code = ?", (EXCHANGED, row["code"])
            )
            if row["pairing_code"] and not row["upgrade_only"]:
                return 200, {"pairingCode": row["pairing_code"], "status": APPROVED}
            return 200, {"status": APPROVED, "upgraded": bool(row["upgrade_only"])}
        if state == EXCHANGED:
            return 200, {"message": "Pairing code has already been retrieved", "status": EXCHANGED}
        return 200, {"status": state}  # pending, denied


def approve_pair_request(
    store: RelayStore,
    code: str,
    account: str,
    now: float | None = None,
    code_ttl: float = APPROVED_CODE_TTL,
) -> PairApproval:
    """Approve a pending pair request for `account`. A new pairing mints a pairing code of that
    account (valid `code_ttl` seconds) for the module's next poll; an upgrade grants the
    requested cross-world scopes and targets on the account's record of the world, which must
    be a world of that account."""
    now = _now(now)
    with store.transaction() as db:
        row = _pending(db, PAIR_TABLE, code)
        if row["expires_at"] <= now:
            raise error(410, "Pair request has expired")
        request = _pair_request(row)
        pairing_code: str | None = None
        if request.ask.upgrade_only:
            _grant_remote(db, request.ask, account)
        else:
            pairing_code = insert_pairing_code(db, account, code_ttl, now)
        db.execute(
            "UPDATE pair_requests SET status = ?, account = ?, pairing_code = ?, decided_at = ?"
            " WHERE code = ?",
            (APPROVED, account, pairing_code, now, request.code),
        )
    return PairApproval(request, pairing_code, upgraded=request.ask.upgrade_only)


def _grant_remote(db: Connection, ask: PairAsk, account: str) -> None:
    """Record an upgrade's cross-world permissions on the world's known-client record."""
    row = db.execute(
        "SELECT account, metadata FROM known_clients WHERE client_id = ?", (ask.client_id,)
    ).fetchone()
    if not ask.client_id or row is None or row["account"] != account:
        raise error(400, NOT_PAIRED)
    metadata = orjson.loads(row["metadata"])
    metadata["remoteScopes"] = list(ask.remote_scopes)
    metadata["allowedTargetClients"] = [c for c in ask.target_clients if c != ask.client_id]
    db.execute(
        "UPDATE known_clients SET metadata = ? WHERE client_id = ?",
        (orjson.dumps(metadata).decode(), ask.client_id),
    )


def refuse_pair_request(store: RelayStore, code: str, now: float | None = None) -> PairRequest:
    """Refuse a pending pair request: its next poll says `denied` and no token is ever issued."""
    return _pair_request(_refuse(store, PAIR_TABLE, code, now))


# API-key requests ------------------------------------------------------------------------------


def create_key_request(
    store: RelayStore,
    ask: KeyAsk,
    peer: str = "",
    ttl: float = REQUEST_TTL,
    now: float | None = None,
) -> KeyRequest:
    """Store a new pending API-key request valid `ttl` seconds (and forget long-expired ones)."""
    now = _now(now)
    row = _create(
        store,
        KEY_TABLE,
        "app_name, app_description, app_url, callback_url, scopes, client_ids,"
        " suggested_monthly_limit, suggested_expiry, peer, created_at, expires_at",
        KEY_REQUEST_CODE_LENGTH,
        (
            ask.app_name,
            ask.app_description,
            ask.app_url,
            ask.callback_url,
            _json(ask.scopes),
            _json(ask.client_ids),
            ask.suggested_monthly_limit,
            ask.suggested_expiry,
            peer,
            now,
            now + ttl,
        ),
        now,
    )
    return _key_request(row)


def get_key_request(store: RelayStore, code: str) -> KeyRequest | None:
    return _get(store, KEY_TABLE, code, _key_request)


def key_requests(
    store: RelayStore, pending_only: bool = True, now: float | None = None
) -> list[KeyRequest]:
    """API-key requests, oldest first: only those still waiting for a decision, or all."""
    return _listed(store, KEY_TABLE, _key_request, pending_only, now)


def _issue_secret(db: Connection, key_id: str | None) -> dict[str, Any] | None:
    """Draw the approved key's secret now (its hash replaces the unusable one) and return the
    reference's key fields; None if the key is gone or was revoked meanwhile."""
    row = db.execute(
        "SELECT scopes, client_ids FROM api_keys WHERE id = ? AND enabled = 1", (key_id,)
    ).fetchone()
    if row is None:
        return None
    secret = secrets.token_hex(32)
    db.execute("UPDATE api_keys SET key_hash = ? WHERE id = ?", (sha256_hex(secret), key_id))
    client_ids = orjson.loads(row["client_ids"])
    scopes = orjson.loads(row["scopes"])
    return {"apiKey": secret, "clientIds": client_ids or None, "scopes": scopes}


def key_status(store: RelayStore, code: str, now: float | None = None) -> Answer:
    """The answer to `GET /auth/key-request/{code}/status` (§12.4). In the device flow (no
    callback URL) the first read of an approved request carries the new key, shown once; in the
    web flow the key is only handed out by `POST /auth/key-request/exchange`."""
    now = _now(now)
    with store.transaction() as db:
        row = _row(db, KEY_TABLE, code)
        if row is None:
            return 404, {"error": "Key request not found"}
        state = _state(row["status"], row["expires_at"], now)
        if state == EXPIRED:
            return 410, {"status": EXPIRED}
        if state == APPROVED:
            if row["callback_url"]:
                return 200, {"status": APPROVED}
            db.execute(
                "UPDATE key_requests SET status = ? WHERE code = ?", (EXCHANGED, row["code"])
            )
            issued = _issue_secret(db, row["key_id"])
            return 200, {**(issued or {}), "status": APPROVED}
        if state == EXCHANGED:
            return 200, {"message": "API key has already been retrieved", "status": EXCHANGED}
        return 200, {"status": state}  # pending, denied


def approve_key_request(
    store: RelayStore,
    code: str,
    account: str,
    scopes: tuple[str, ...] | None = None,
    client_ids: tuple[str, ...] | None = None,
    expires_at: float | None = None,
    rate_per_minute: int | None = None,
    user_id: str | None = None,
    now: float | None = None,
) -> KeyApproval:
    """Approve a pending key request: create an enabled key of `account` named after the app,
    with the requested scopes (or the given subset of them) and worlds. A web-flow request
    (with a callback URL) also gets a one-time exchange code, returned here and never stored."""
    now = _now(now)
    with store.transaction() as db:
        row = _pending(db, KEY_TABLE, code)
        if row["expires_at"] <= now:
            raise error(410, "Key request has expired")
        request = _key_request(row)
        granted = tuple(dict.fromkeys(scopes)) if scopes else request.ask.scopes
        for scope in granted:
            if scope not in request.ask.scopes:
                raise error(400, f"Cannot grant scope not in original request: {scope}")
        worlds = tuple(client_ids) if client_ids is not None else request.ask.client_ids
        _own_worlds(db, worlds, account)
        key_id, _unknown = insert_key(
            db, account, granted, worlds, user_id, expires_at, rate_per_minute, request.ask.app_name
        )
        exchange_code: str | None = None
        if request.ask.callback_url:
            exchange_code = secrets.token_hex(16)
        db.execute(
            "UPDATE key_requests SET status = ?, account = ?, key_id = ?, exchange_hash = ?,"
            " exchange_expires_at = ?, decided_at = ? WHERE code = ?",
            (
                APPROVED,
                account,
                key_id,
                sha256_hex(exchange_code) if exchange_code else None,
                now + EXCHANGE_TTL if exchange_code else None,
                now,
                request.code,
            ),
        )
    return KeyApproval(request, key_id, granted, worlds, exchange_code)


def _own_worlds(db: Connection, client_ids: tuple[str, ...], account: str) -> None:
    """Refuse a key for worlds of another account: it could never reach them (a world not seen
    yet may be paired later, so it is allowed)."""
    for client_id in client_ids:
        row = db.execute(
            "SELECT account FROM known_clients WHERE client_id = ?", (client_id,)
        ).fetchone()
        if row is not None and row["account"] != account:
            raise error(400, f"World {client_id} is not a world of account {account}")


def refuse_key_request(store: RelayStore, code: str, now: float | None = None) -> KeyRequest:
    """Refuse a pending key request: its next poll says `denied` and no key is created."""
    return _key_request(_refuse(store, KEY_TABLE, code, now))


def exchange_key(store: RelayStore, exchange_code: str, now: float | None = None) -> Answer:
    """The answer to `POST /auth/key-request/exchange` (§12.4): the web flow's exchange code
    traded, once, for the approved key."""
    now = _now(now)
    with store.transaction() as db:
        row = db.execute(
            "SELECT * FROM key_requests WHERE exchange_hash = ?",
            (sha256_hex(exchange_code.strip().lower()),),
        ).fetchone()
        if row is None:
            return 404, {"error": "Invalid exchange code"}
        if row["status"] != APPROVED:
            return 410, {"error": "Exchange code has already been used or request was denied"}
        if row["exchange_expires_at"] <= now:
            return 410, {"error": "Exchange code has expired"}
        db.execute("UPDATE key_requests SET status = ? WHERE code = ?", (EXCHANGED, row["code"]))
        issued = _issue_secret(db, row["key_id"])
        if issued is None:
            return 410, {"error": "The API key was revoked before it was retrieved"}
        return 200, issued
