"""The playlist and sound routes (endpoints-beyond-seed §11); every parameter body first, then
query."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import bq, forward
from vttrelay.relay.routes.model import Group, Param, Route, Sdk

NAME: Final = "Playlists"

PLAYLIST_ID = bq("playlistId", "string", description="Playlist id.")
PLAYLIST_NAME = bq("playlistName", "string", description="Playlist name (case-insensitive).")
SOUND_ID = bq("soundId", "string", description="Id of a sound of the playlist.")
SOUND_NAME = bq("soundName", "string", description="Name of a sound (case-insensitive).")


def _playlist(method: str, path: str, action: str, summary: str, *params: Param, sdk: Sdk) -> Route:
    return forward(method, path, action, summary, NAME, *params, scope="playlist:control", sdk=sdk)


ROUTES: Final = (
    _playlist(
        "GET",
        "/playlists",
        "get-playlists",
        "Every playlist with its sounds.",
        sdk=Sdk("list", "Envelope[Playlists]"),
    ),
    _playlist(
        "POST",
        "/playlist/play",
        "playlist-play",
        "Play a playlist, or one of its sounds.",
        PLAYLIST_ID,
        PLAYLIST_NAME,
        SOUND_ID,
        SOUND_NAME,
        sdk=Sdk("play", "Envelope[PlaylistState]"),
    ),
    _playlist(
        "POST",
        "/playlist/stop",
        "playlist-stop",
        "Stop a playlist.",
        PLAYLIST_ID,
        PLAYLIST_NAME,
        sdk=Sdk("stop", "Envelope[PlaylistState]"),
    ),
    _playlist(
        "POST",
        "/playlist/next",
        "playlist-next",
        "Skip to the playlist's next sound.",
        PLAYLIST_ID,
        PLAYLIST_NAME,
        sdk=Sdk("next", "Envelope[PlaylistState]"),
    ),
    _playlist(
        "POST",
        "/playlist/volume",
        "playlist-volume",
        "Set the volume (0 to 1) of a playlist or of one of its sounds.",
        bq("volume", "number", True, description="0 to 1."),
        PLAYLIST_ID,
        PLAYLIST_NAME,
        SOUND_ID,
        SOUND_NAME,
        sdk=Sdk("volume", "Envelope[PlaylistState]"),
    ),
    _playlist(
        "POST",
        "/play-sound",
        "play-sound",
        "Play a sound file for everyone.",
        bq("src", "string", True, description="Path of the audio file."),
        bq("volume", "number", default=0.5, description="0 to 1 (default 0.5)."),
        bq("loop", "boolean", default=False, description="Repeat (default false)."),
        sdk=Sdk("play_sound", "Envelope[SoundPlayed]"),
    ),
    _playlist(
        "POST",
        "/stop-sound",
        "stop-sound",
        "Stop the sounds playing this file (every sound without `src`).",
        bq("src", "string", description="Path of the audio file."),
        sdk=Sdk("stop_sound", "Envelope[SoundStopped]"),
    ),
)

GROUP: Final = Group(NAME, "playlists", ROUTES)
