"""backends.local.WorldIndex: worlds by id and by account, kept in step."""

from __future__ import annotations

from dataclasses import dataclass

from vttrelay.relay.backends.local import WorldIndex


@dataclass
class World:
    client_id: str
    account: str


def test_put_pop_and_accounts_stay_in_step() -> None:
    index: WorldIndex[World] = WorldIndex()
    a1, a2, b1 = World("w1", "a"), World("w2", "a"), World("w3", "b")
    for world in (a1, a2, b1):
        assert index.put(world) is None
    assert index.of_account("a") == [a1, a2] and index.of_account("b") == [b1]
    assert index.of_account("nobody") == []
    moved = World("w1", "b")  # the same id under another account replaces the first
    assert index.put(moved) is a1
    assert index.of_account("a") == [a2] and index.of_account("b") == [b1, moved]
    assert index.pop("w2") is a2 and index.pop("w2") is None
    assert "a" not in index.by_account  # an account without worlds leaves no bucket behind
    assert index.by_id == {"w1": moved, "w3": b1}
