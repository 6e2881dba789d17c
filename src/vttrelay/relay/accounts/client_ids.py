"""Which client id a world gets when it pairs: the rule of `POST /auth/pair`, also shown on the
pair request's approval page (so the approver sees which id will be redeemed).

A world keeps its id when it pairs again with the same account and world id (DESIGN §4), so the
ids API callers hold stay valid. `existingClientId` is only a wish, never a claim: it is kept when
no world has it yet, or when the account's record of it is the same world (same `worldId`) and
it is not connected right now. A world that names no id it may keep pairs as the account's
world with its world id (`same_world`), if one is not connected; any other case gets a new id.
Without the liveness rule, a pairing code of an account handed out with another live world's
id yields a token for that world, whose requests then reach whoever holds the code (issue 20
item 4).
"""

from __future__ import annotations

import secrets
from collections.abc import Container, Iterable, Mapping
from typing import Any


def keeps_id(
    owner: str | None,
    stored: Mapping[str, Any] | None,
    account: str,
    world_id: str,
    live: bool,
) -> bool:
    """May a world of `account` with `world_id` pair as an existing id? `owner` and `stored`:
    the account and metadata the store has for that id (None: unknown); `live`: a world is
    connected with that id now."""
    if live:
        return False
    if owner is None:
        return True  # no world has it: the world names its own id
    if owner != account:
        return False  # another account's world: never taken over
    recorded = str((stored or {}).get("worldId") or "")
    return not recorded or recorded == world_id


def same_world(
    candidates: Iterable[tuple[str, Mapping[str, Any]]],
    world_id: str,
    origin: str,
    live: Container[str],
) -> str | None:
    """The id a world that pairs without a usable `existingClientId` pairs again as: the
    account's world with the same `world_id` (the reference keeps one id per account and world
    id, so a world that pairs again after the module's "Reset URL" keeps its id and the ids bots
    hold still reach it). `candidates`: the account's known worlds `(client id, metadata)`,
    oldest first (of two that fit, the older: the id callers have held longest). A world
    connected now (`live`) is never taken; one whose page origin (`publicUrl`) is the pairing
    page's `origin` comes first, then one whose origin is unknown (or the pairing names none),
    so two servers with copies of one world keep apart. None: none fits (a new id)."""
    if not world_id:
        return None
    fitting = [
        (client_id, str(meta.get("publicUrl") or ""))
        for client_id, meta in candidates
        if str(meta.get("worldId") or "") == world_id and client_id not in live
    ]
    for client_id, url in fitting:
        if origin and url == origin:
            return client_id
    for client_id, url in fitting:
        if not url or not origin:
            return client_id
    return None


def new_client_id() -> str:
    """A fresh client id, as the reference draws them: `fvtt_` and 16 hex digits."""
    return "fvtt_" + secrets.token_hex(8)
