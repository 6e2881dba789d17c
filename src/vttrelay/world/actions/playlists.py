"""Playlist and sound actions (endpoints-beyond-seed §11): get-playlists, playlist-play,
playlist-stop, playlist-next, playlist-volume, play-sound, stop-sound.

The world plays no audio: it keeps what is playing and at which volume, in its documents, and
every change is a Playlist document update (the `updatePlaylist` / `updatePlaylistSound` hooks).
Sounds started with `play-sound` belong to no playlist; the world keeps them in the setting
`vttrelay.audio` until `stop-sound` stops them.

With a `userId`, every action except get-playlists needs a GM. Playlists are found by
`playlistId`, else `playlistName` (case-insensitive); sounds by `soundId`, else `soundName`.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import playlists as rules
from vttrelay.world.rules.permissions import assert_gm
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

SETTING_AUDIO: Final = "vttrelay.audio"  # [{src, volume, loop}] started by play-sound


def sound_to_api(sound: dict[str, Any]) -> dict[str, Any]:
    """`{id, name, path, playing, volume, repeat, fade}` (`fade` left out when unset)."""
    out = {
        "id": sound["_id"],
        "name": sound.get("name", ""),
        "path": sound.get("path"),
        "playing": bool(sound.get("playing")),
        "volume": sound.get("volume", 0.5),
        "repeat": bool(sound.get("repeat")),
        "fade": sound.get("fade"),
    }
    if out["fade"] is None:
        del out["fade"]
    return out


def playlist_to_api(playlist: dict[str, Any]) -> dict[str, Any]:
    """The module's playlist: `{id, name, description, playing, mode, fade, folder, sorting,
    sounds}` (`fade` left out when unset)."""
    out = {
        "id": playlist["_id"],
        "name": playlist.get("name", ""),
        "description": playlist.get("description") or "",
        "playing": bool(playlist.get("playing")),
        "mode": playlist.get("mode", rules.SEQUENTIAL),
        "fade": playlist.get("fade"),
        "folder": playlist.get("folder") or None,
        "sorting": playlist.get("sorting", "a"),
        "sounds": [sound_to_api(s) for s in rules.sounds_of(playlist)],
    }
    if out["fade"] is None:
        del out["fade"]
    return out


def find_playlist(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    playlist_id, name = params.get("playlistId"), params.get("playlistName")
    if playlist_id:
        found = ctx.tx.get("Playlist", str(playlist_id))
    elif name:
        found = documents.find_named(ctx.tx, "Playlist", name)
    else:
        raise ActionError("playlistId or playlistName is required")
    if found is None:
        raise ActionError(f"Playlist not found: {playlist_id or name}")
    return found


def find_sound(playlist: dict[str, Any], params: dict[str, Any]) -> dict[str, Any] | None:
    """The sound the call names (None when it names none)."""
    sound_id, name = params.get("soundId"), params.get("soundName")
    if not sound_id and not name:
        return None
    sounds = rules.sounds_of(playlist)
    if sound_id:
        found = next((s for s in sounds if s.get("_id") == sound_id), None)
    else:
        found = documents.find_by_name(sounds, name)
    if found is None:
        raise ActionError(f"Sound not found: {sound_id or name}")
    return found


def _controlled(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """The playlist the params name, for a GM (only a GM controls playlists)."""
    assert_gm(ctx, "control playlists")
    return find_playlist(ctx, params)


def _save(ctx: ActionContext, playlist: dict[str, Any]) -> dict[str, Any]:
    ctx.tx.put("Playlist", playlist)
    return {"data": {"playlist": playlist_to_api(playlist)}}


@action("get-playlists")
def get_playlists(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every playlist with its sounds."""
    return {"data": {"playlists": [playlist_to_api(p) for p in ctx.tx.all("Playlist")]}}


@action("playlist-play")
def playlist_play(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Play one sound of a playlist, or the playlist (as its mode says)."""
    playlist = _controlled(ctx, params)
    sound = find_sound(playlist, params)
    if sound is not None:
        rules.play_sound(playlist, sound)
    else:
        rules.play_all(playlist)
    return _save(ctx, playlist)


@action("playlist-stop")
def playlist_stop(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Stop every sound of a playlist."""
    playlist = _controlled(ctx, params)
    rules.stop_all(playlist)
    return _save(ctx, playlist)


@action("playlist-next")
def playlist_next(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Skip to the playlist's next sound."""
    playlist = _controlled(ctx, params)
    rules.play_next(playlist)
    return _save(ctx, playlist)


@action("playlist-volume")
def playlist_volume(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Set one sound's volume, or the playlist's own (kept on the Playlist document; the
    serialized playlist has no volume field, as in the module)."""
    playlist = _controlled(ctx, params)
    sound = find_sound(playlist, params)
    volume = params.get("volume")
    if not rules.valid_volume(volume):
        raise ActionError(rules.VOLUME_ERROR)
    (sound if sound is not None else playlist)["volume"] = volume
    return _save(ctx, playlist)


@action("play-sound")
def play_sound(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Start a sound file for everyone (kept as playing until stop-sound)."""
    assert_gm(ctx, "play sounds")
    src = params.get("src")
    if not isinstance(src, str) or not src:
        raise ActionError("src is required")
    volume = params.get("volume", 0.5)
    if not rules.valid_volume(volume):
        raise ActionError(rules.VOLUME_ERROR)
    loop = params.get("loop") is True
    playing = list(ctx.setting(SETTING_AUDIO, []) or [])
    playing.append({"src": src, "volume": volume, "loop": loop})
    documents.set_setting(ctx.tx, SETTING_AUDIO, playing)
    return {"data": {"src": src, "volume": volume, "loop": loop}}


@action("stop-sound")
def stop_sound(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Stop the sounds playing this file (every sound without `src`): those of play-sound and
    playlist sounds; `stopped` counts them."""
    assert_gm(ctx, "stop sounds")
    src = params.get("src") or None
    playing = list(ctx.setting(SETTING_AUDIO, []) or [])
    kept = [s for s in playing if src is not None and s.get("src") != src]
    stopped = len(playing) - len(kept)
    if stopped:
        documents.set_setting(ctx.tx, SETTING_AUDIO, kept)
    for playlist in ctx.tx.all("Playlist"):
        changed = False
        for sound in rules.sounds_of(playlist):
            if sound.get("playing") and (src is None or sound.get("path") == src):
                rules.stop_sound(playlist, sound)
                stopped += 1
                changed = True
        if changed:
            ctx.tx.put("Playlist", playlist)
    return {"data": {"stopped": stopped, "src": src}}
