"""Which client id a world gets when it pairs: the rule of `POST /auth/pair`, also shown on the
pair request's approval page (so the approver sees which id will be redeemed).

A world keeps its id when it pairs again with the same account and world id (DESIGN §4), so the
ids API callers hold stay valid. `existingClientId` is only a wish, never a claim: it is kept when
no world has it yet, or when the account's record of it is the same world (same `worldId`) and
it is not connected right now; any other case gets a new id. Without this, a pairing code of an
account handed out with another live world's id yields a token for that world, whose requests
then reach whoever holds the code (issue 20 item 4).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
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


def new_client_id() -> str:
    """A fresh client id, as the reference draws them: `fvtt_` and 16 hex digits."""
    return "fvtt_" + secrets.token_hex(8)
