"""API-key requests (endpoints-beyond-seed §12.4): an app asks for a key with some scopes; the
relay's owner approves (creating the key) or refuses; the app receives the key once, by its
status poll (device flow) or by trading an exchange code (web flow, with a callback URL). The
shared states and store helpers: `approvals.py`.

API keys are never stored: approval creates the key (listed, revocable) with the hash of a
secret nobody knows; the real secret is drawn, and its hash stored, only when the asker
retrieves it (the device flow's status read, or the web flow's exchange).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import orjson

from vttrelay.relay.accounts.approvals import (
    APPROVED,
    EXCHANGED,
    EXPIRED,
    KEY_TABLE,
    REQUEST_TTL,
    Answer,
    create,
    get,
    json_list,
    listed,
    now_or,
    pending,
    refuse,
    row_of,
    state_of,
    texts,
)
from vttrelay.relay.core import error
from vttrelay.relay.store import RelayStore, insert_key, sha256_hex
from vttrelay.relay.store.database import Connection, Row

KEY_REQUEST_CODE_LENGTH = 6
EXCHANGE_TTL = 600.0  # the web flow's exchange code is valid 10 minutes after approval


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
        return state_of(self.status, self.expires_at, now)


@dataclass(frozen=True)
class KeyApproval:
    """An approved key request: the key created, and the web flow's exchange code (shown once)."""

    request: KeyRequest
    key_id: str
    scopes: tuple[str, ...]
    client_ids: tuple[str, ...]
    exchange_code: str | None


def _key_request(row: Row) -> KeyRequest:
    ask = KeyAsk(
        app_name=row["app_name"],
        scopes=texts(row["scopes"]),
        app_description=row["app_description"],
        app_url=row["app_url"],
        callback_url=row["callback_url"],
        client_ids=texts(row["client_ids"]),
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


# API-key requests ------------------------------------------------------------------------------


def create_key_request(
    store: RelayStore,
    ask: KeyAsk,
    peer: str = "",
    ttl: float = REQUEST_TTL,
    now: float | None = None,
) -> KeyRequest:
    """Store a new pending API-key request valid `ttl` seconds (and forget long-expired ones)."""
    now = now_or(now)
    row = create(
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
            json_list(ask.scopes),
            json_list(ask.client_ids),
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
    return get(store, KEY_TABLE, code, _key_request)


def key_requests(
    store: RelayStore, pending_only: bool = True, now: float | None = None
) -> list[KeyRequest]:
    """API-key requests, oldest first: only those still waiting for a decision, or all."""
    return listed(store, KEY_TABLE, _key_request, pending_only, now)


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
    now = now_or(now)
    with store.transaction() as db:
        row = row_of(db, KEY_TABLE, code)
        if row is None:
            return 404, {"error": "Key request not found"}
        state = state_of(row["status"], row["expires_at"], now)
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
    now = now_or(now)
    with store.transaction() as db:
        row = pending(db, KEY_TABLE, code)
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
    return _key_request(refuse(store, KEY_TABLE, code, now))


def exchange_key(store: RelayStore, exchange_code: str, now: float | None = None) -> Answer:
    """The answer to `POST /auth/key-request/exchange` (§12.4): the web flow's exchange code
    traded, once, for the approved key."""
    now = now_or(now)
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
