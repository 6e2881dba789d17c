"""Pair requests (endpoints-beyond-seed §12.2-12.3): a world's module asks to be paired (or,
for a paired world, for more cross-world permissions); the relay's owner approves or refuses;
the module polls the status and receives, once, a pairing code (which it trades at `POST
/auth/pair`) or an "upgraded" answer. The shared states and store helpers: `approvals.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from vttrelay.relay.accounts import worlds
from vttrelay.relay.accounts.approvals import (
    APPROVED,
    EXCHANGED,
    EXPIRED,
    PAIR_TABLE,
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
from vttrelay.relay.store import RelayStore, insert_pairing_code
from vttrelay.relay.store.database import Connection, Row

PAIR_REQUEST_CODE_LENGTH = 8
APPROVED_CODE_TTL = 300.0  # the pairing code an approval mints is valid 5 minutes
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
        return state_of(self.status, self.expires_at, now)


@dataclass(frozen=True)
class PairApproval:
    """An approved pair request: the pairing code its next poll hands out (None: upgrade)."""

    request: PairRequest
    pairing_code: str | None
    upgraded: bool


def _pair_request(row: Row) -> PairRequest:
    ask = PairAsk(
        world_id=row["world_id"],
        world_title=row["world_title"],
        system_id=row["system_id"],
        system_title=row["system_title"],
        system_version=row["system_version"],
        foundry_version=row["foundry_version"],
        client_id=row["client_id"] or "",
        remote_scopes=texts(row["remote_scopes"]),
        target_clients=texts(row["target_clients"]),
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


# Pair requests ---------------------------------------------------------------------------------


def create_pair_request(
    store: RelayStore,
    ask: PairAsk,
    peer: str = "",
    ttl: float = REQUEST_TTL,
    now: float | None = None,
) -> PairRequest:
    """Store a new pending pair request valid `ttl` seconds (and forget long-expired ones)."""
    now = now_or(now)
    row = create(
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
            json_list(ask.remote_scopes),
            json_list(ask.target_clients),
            int(ask.upgrade_only),
            peer,
            now,
            now + ttl,
        ),
        now,
    )
    return _pair_request(row)


def get_pair_request(store: RelayStore, code: str) -> PairRequest | None:
    return get(store, PAIR_TABLE, code, _pair_request)


def pair_requests(
    store: RelayStore, pending_only: bool = True, now: float | None = None
) -> list[PairRequest]:
    """Pair requests, oldest first: only those still waiting for a decision, or all."""
    return listed(store, PAIR_TABLE, _pair_request, pending_only, now)


def pair_status(store: RelayStore, code: str, now: float | None = None) -> Answer:
    """The answer to `GET /auth/pair-request/{code}/status` (§12.2): HTTP status and body. The
    first read of an approved request hands out the pairing code and marks it exchanged."""
    now = now_or(now)
    with store.transaction() as db:
        row = row_of(db, PAIR_TABLE, code)
        if row is None:
            return 404, {"error": "Pair request not found"}
        state = state_of(row["status"], row["expires_at"], now)
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
    account (valid `code_ttl` seconds) for the module's next poll, carrying the requested
    cross-world scopes and targets (`carry_grants` gives them to the world that pairs with it);
    an upgrade grants them at once on the account's record of the world, which must be a world
    of that account."""
    now = now_or(now)
    with store.transaction() as db:
        row = pending(db, PAIR_TABLE, code)
        if row["expires_at"] <= now:
            raise error(410, "Pair request has expired")
        request = _pair_request(row)
        pairing_code: str | None = None
        if request.ask.upgrade_only:
            _grant_remote(db, request.ask, account)
        else:
            pairing_code = insert_pairing_code(db, account, code_ttl, now)
            if request.ask.remote_scopes or request.ask.target_clients:  # given at pairing
                db.execute(
                    "UPDATE pairing_codes SET remote_scopes = ?, allowed_targets = ?"
                    " WHERE code = ?",
                    (
                        json_list(request.ask.remote_scopes),
                        json_list(request.ask.target_clients),
                        pairing_code,
                    ),
                )
        db.execute(
            "UPDATE pair_requests SET status = ?, account = ?, pairing_code = ?, decided_at = ?"
            " WHERE code = ?",
            (APPROVED, account, pairing_code, now, request.code),
        )
    return PairApproval(request, pairing_code, upgraded=request.ask.upgrade_only)


def _grant_remote(db: Connection, ask: PairAsk, account: str) -> None:
    """Record an upgrade's cross-world permissions on the world's settings (what PATCH
    /auth/known-clients/{id} sets and GET /auth/known-clients shows)."""
    granted = ask.client_id and worlds.grant_cross_world(
        db, account, ask.client_id, ask.target_clients, ask.remote_scopes
    )
    if not granted:
        raise error(400, NOT_PAIRED)


def carry_grants(store: RelayStore, code: str, client_id: str, account: str) -> None:
    """Give a world that just paired with `code` the cross-world permissions the pair request's
    approval put on that code (none: nothing changes)."""
    with store.transaction() as db:
        row = db.execute(
            "SELECT remote_scopes, allowed_targets FROM pairing_codes WHERE code = ?",
            (code.strip().upper(),),
        ).fetchone()
        if row is None or (row["remote_scopes"] == "[]" and row["allowed_targets"] == "[]"):
            return
        worlds.grant_cross_world(
            db, account, client_id, texts(row["allowed_targets"]), texts(row["remote_scopes"])
        )


def refuse_pair_request(store: RelayStore, code: str, now: float | None = None) -> PairRequest:
    """Refuse a pending pair request: its next poll says `denied` and no token is ever issued."""
    return _pair_request(refuse(store, PAIR_TABLE, code, now))
