"""Playlist playback as the tabletop's Playlist document does it: play all, play one sound, stop,
next, volume. No audio is played: these change a Playlist document's `playing` flags (and the
volumes), which is all the tabletop stores. Pure functions that change the playlist in place.

A Playlist is `{_id, name, description, sounds: [PlaylistSound], mode, playing, fade, sorting,
volume, ...}`; a PlaylistSound is `{_id, name, path, playing, pausedTime, repeat, volume, fade,
sort, ...}`.
"""

from __future__ import annotations

import random
from typing import Any, Final

# CONST.PLAYLIST_MODES
DISABLED: Final = -1
SEQUENTIAL: Final = 0
SHUFFLE: Final = 1
SIMULTANEOUS: Final = 2

VOLUME_ERROR: Final = "volume must be a number between 0 and 1"


def valid_volume(value: Any) -> bool:
    """True for a number from 0 to 1 (the tabletop's volume range)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def sounds_of(playlist: dict[str, Any]) -> list[dict[str, Any]]:
    """The playlist's sounds (the stored objects, changed in place by the functions below)."""
    sounds = playlist.get("sounds")
    return [s for s in sounds if isinstance(s, dict)] if isinstance(sounds, list) else []


def playback_order(playlist: dict[str, Any]) -> list[dict[str, Any]]:
    """The sounds in the order the playlist plays them: by name (`sorting` "a") or by `sort`
    ("m"); shuffled with the playlist's `seed` in shuffle mode."""
    sounds = sounds_of(playlist)
    if playlist.get("sorting") == "m":
        ordered = sorted(sounds, key=lambda s: (s.get("sort", 0), s.get("_id", "")))
    else:
        ordered = sorted(sounds, key=lambda s: (str(s.get("name", "")).casefold(), s["_id"]))
    if playlist.get("mode") == SHUFFLE:
        random.Random(playlist.get("seed") or 0).shuffle(ordered)
    return ordered


def _sync_playing(playlist: dict[str, Any]) -> None:
    playlist["playing"] = any(s.get("playing") for s in sounds_of(playlist))


def play_sound(playlist: dict[str, Any], sound: dict[str, Any]) -> None:
    """Play one sound: in sequential and shuffle modes every other sound stops."""
    if playlist.get("mode") in (SEQUENTIAL, SHUFFLE):
        for other in sounds_of(playlist):
            if other is not sound and (other.get("playing") or other.get("pausedTime")):
                other["playing"] = False
                other["pausedTime"] = None
    sound["playing"] = True
    playlist["playing"] = True


def play_all(playlist: dict[str, Any]) -> None:
    """Start the playlist: every sound (simultaneous), else the first in playback order."""
    mode = playlist.get("mode")
    if mode == DISABLED:
        return
    if mode == SIMULTANEOUS:
        for sound in sounds_of(playlist):
            sound["playing"] = True
        _sync_playing(playlist)
        return
    order = playback_order(playlist)
    if order:
        play_sound(playlist, order[0])


def stop_sound(playlist: dict[str, Any], sound: dict[str, Any]) -> None:
    """Stop one sound; the playlist plays on while another of its sounds does."""
    sound["playing"] = False
    sound["pausedTime"] = None
    _sync_playing(playlist)


def stop_all(playlist: dict[str, Any]) -> None:
    """Stop every sound of the playlist."""
    for sound in sounds_of(playlist):
        sound["playing"] = False
        sound["pausedTime"] = None
    playlist["playing"] = False


def play_next(playlist: dict[str, Any], direction: int = 1) -> None:
    """Skip to the next sound in playback order (wrapping around); nothing in simultaneous or
    disabled mode; a playlist that is not playing stops instead."""
    if playlist.get("mode") in (DISABLED, SIMULTANEOUS):
        return
    order = playback_order(playlist)
    current = next((s for s in sounds_of(playlist) if s.get("playing")), None)
    following: dict[str, Any] | None = None
    if order and playlist.get("playing"):
        if current in order:
            following = order[(order.index(current) + direction) % len(order)]
        else:
            following = order[0] if direction > 0 else order[-1]
    stop_all(playlist)
    if following is not None:
        play_sound(playlist, following)
