"""`client_ids.same_world`: which known world a world that pairs without a usable
`existingClientId` pairs again as."""

from __future__ import annotations

from vttrelay.relay.accounts.client_ids import same_world

A = "https://a.example"
B = "http://localhost:30000"
KNOWN = [
    ("old-a", {"worldId": "w", "publicUrl": A}),
    ("old-b", {"worldId": "w", "publicUrl": B}),
    ("bare", {"worldId": "w"}),
    ("other", {"worldId": "x", "publicUrl": A}),
]


def test_the_same_origin_first_then_an_unknown_origin_never_a_live_world() -> None:
    assert same_world(KNOWN, "w", A, set()) == "old-a"
    assert same_world(KNOWN, "w", B, set()) == "old-b"
    assert same_world(KNOWN, "w", "https://c.example", set()) == "bare"
    assert same_world(KNOWN, "w", A, {"old-a"}) == "bare"
    assert same_world(KNOWN, "w", A, {"old-a", "bare"}) is None
    assert same_world(KNOWN, "w", "", set()) == "old-a"  # no origin named: the oldest fits
    assert same_world(KNOWN, "x", B, set()) is None
    assert same_world(KNOWN, "", A, set()) is None
    assert same_world([], "w", A, set()) is None
