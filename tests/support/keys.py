"""`key_record(...)`: a `KeyRecord` as the key cache holds one, for tests that hand one over
(the access and activity logs' records)."""

from __future__ import annotations

from vttrelay.relay.store import KeyRecord


def key_record(key_id: str = "k1", account: str = "acct", name: str = "") -> KeyRecord:
    return KeyRecord(
        id=key_id,
        account=account,
        name=name,
        scopes=(),
        client_ids=(),
        user_id=None,
        expires_at=None,
        enabled=True,
        rate_per_minute=None,
        created_at=0.0,
        last_used_at=None,
        request_count=0,
    )
