"""Playlist playback rules: play all, play one sound, stop, next, volume range."""

from __future__ import annotations

from typing import Any

import pytest

from vttrelay.world.rules import playlists as p


def playlist(mode: int = p.SEQUENTIAL, **extra: Any) -> dict[str, Any]:
    sounds = [
        {"_id": "s2", "name": "Tavern Din", "playing": False, "pausedTime": None, "sort": 1},
        {"_id": "s1", "name": "Battle Drums", "playing": False, "pausedTime": None, "sort": 2},
        {"_id": "s3", "name": "Crickets", "playing": False, "pausedTime": None, "sort": 0},
    ]
    return {"_id": "p1", "mode": mode, "playing": False, "sorting": "a", "sounds": sounds, **extra}


def playing(pl: dict[str, Any]) -> list[str]:
    return [s["_id"] for s in pl["sounds"] if s["playing"]]


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (1, True), (0.5, True), (-0.01, False), (1.5, False), (True, False), ("1", False)],
)
def test_valid_volume(value: Any, ok: bool) -> None:
    assert p.valid_volume(value) is ok


def test_playback_order_by_name_or_manual_sort() -> None:
    assert [s["_id"] for s in p.playback_order(playlist())] == ["s1", "s3", "s2"]
    assert [s["_id"] for s in p.playback_order(playlist(sorting="m"))] == ["s3", "s2", "s1"]


def test_shuffle_order_is_a_stable_permutation_of_the_seed() -> None:
    first = [s["_id"] for s in p.playback_order(playlist(p.SHUFFLE, seed=7))]
    assert sorted(first) == ["s1", "s2", "s3"]
    assert first == [s["_id"] for s in p.playback_order(playlist(p.SHUFFLE, seed=7))]


def test_play_all_sequential_starts_the_first_sound_only() -> None:
    pl = playlist()
    p.play_all(pl)
    assert playing(pl) == ["s1"] and pl["playing"] is True


def test_play_all_simultaneous_starts_every_sound_and_disabled_nothing() -> None:
    pl = playlist(p.SIMULTANEOUS)
    p.play_all(pl)
    assert playing(pl) == ["s2", "s1", "s3"] and pl["playing"] is True
    off = playlist(p.DISABLED)
    p.play_all(off)
    assert playing(off) == [] and off["playing"] is False


def test_play_sound_stops_the_others_except_in_simultaneous_mode() -> None:
    pl = playlist()
    p.play_all(pl)
    p.play_sound(pl, pl["sounds"][0])
    assert playing(pl) == ["s2"]
    both = playlist(p.SIMULTANEOUS)
    p.play_sound(both, both["sounds"][0])
    p.play_sound(both, both["sounds"][1])
    assert playing(both) == ["s2", "s1"]


def test_stop_all() -> None:
    pl = playlist(p.SIMULTANEOUS)
    p.play_all(pl)
    pl["sounds"][0]["pausedTime"] = 12.5
    p.stop_all(pl)
    assert playing(pl) == [] and pl["playing"] is False
    assert all(s["pausedTime"] is None for s in pl["sounds"])


def test_play_next_walks_the_order_and_wraps_around() -> None:
    pl = playlist()
    p.play_all(pl)
    seen = []
    for _ in range(4):
        p.play_next(pl)
        seen.append(playing(pl))
    assert seen == [["s3"], ["s2"], ["s1"], ["s3"]]
    p.play_next(pl, direction=-1)
    assert playing(pl) == ["s1"]


def test_play_next_on_a_stopped_playlist_stays_stopped() -> None:
    pl = playlist()
    p.play_next(pl)
    assert playing(pl) == [] and pl["playing"] is False
    simultaneous = playlist(p.SIMULTANEOUS)
    p.play_all(simultaneous)
    p.play_next(simultaneous)
    assert playing(simultaneous) == ["s2", "s1", "s3"]


def test_stop_sound_keeps_the_playlist_playing_while_another_sound_plays() -> None:
    pl = playlist(p.SIMULTANEOUS)
    p.play_all(pl)
    p.stop_sound(pl, pl["sounds"][0])
    assert playing(pl) == ["s1", "s3"] and pl["playing"] is True
    p.stop_sound(pl, pl["sounds"][1])
    p.stop_sound(pl, pl["sounds"][2])
    assert pl["playing"] is False
