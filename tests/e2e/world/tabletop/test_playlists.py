"""Playlist and sound routes end to end (endpoints-beyond-seed §11) against the demo world's
"Goblin Ambush" playlist: the module's reply shapes, the playing state and volumes the world
keeps, the document updates on the hooks stream, each error (nothing changes), the GM gate."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import Api

PLAYLIST = "plAmbush00000001"
DRUMS, SKIRMISH = "sndWarDrums00001", "sndSkirmish00001"


def stored(world: Any) -> dict[str, Any]:
    with world.world.store.transaction() as tx:
        playlist: dict[str, Any] = tx.get("Playlist", PLAYLIST)
    return playlist


def playing(reply: dict[str, Any]) -> list[str]:
    return [s["name"] for s in reply["data"]["playlist"]["sounds"] if s["playing"]]


async def test_list_playlists(relay: Any, world: Any, api: Api) -> None:
    status, body = await api("GET", "/playlists")
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"] and body["type"] == "get-playlists-result"
    assert body["data"] == {
        "playlists": [
            {
                "id": PLAYLIST,
                "name": "Goblin Ambush",
                "description": "Battle music for the goblin ambush.",
                "playing": False,
                "mode": 0,
                "folder": None,
                "sorting": "m",
                "sounds": [
                    {
                        "id": DRUMS,
                        "name": "War Drums",
                        "path": "sounds/drums.wav",
                        "playing": False,
                        "volume": 0.5,
                        "repeat": True,
                    },
                    {
                        "id": SKIRMISH,
                        "name": "Skirmish",
                        "path": "music/skirmish.ogg",
                        "playing": False,
                        "volume": 0.4,
                        "repeat": False,
                    },
                ],
            }
        ]
    }
    # a player may list them (userId is only checked to exist)
    assert (await api("GET", "/playlists", userId="Aria"))[0] == 200


async def test_play_next_volume_stop_with_document_updates(
    relay: Any, world: Any, api: Api, hooks: Any
) -> None:
    stream = await hooks("updatePlaylist", "updatePlaylistSound")
    status, body = await api("POST", "/playlist/play", {"playlistName": "goblin ambush"})
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"] and body["type"] == "playlist-play-result"
    assert body["data"]["playlist"]["playing"] is True and playing(body) == ["War Drums"]
    update = await stream.event()
    assert update.name == "updatePlaylist"
    assert update.data["args"][1] == {"playing": True, "_id": PLAYLIST}
    sound_update = await stream.event()
    assert sound_update.name == "updatePlaylistSound"
    assert sound_update.data["args"][1] == {"playing": True, "_id": DRUMS}

    status, body = await api("POST", "/playlist/next", playlistId=PLAYLIST)
    assert status == 200 and playing(body) == ["Skirmish"], body
    status, body = await api("POST", "/playlist/next", {"playlistId": PLAYLIST})
    assert playing(body) == ["War Drums"]  # wraps around
    status, body = await api(
        "POST", "/playlist/play", {"playlistId": PLAYLIST, "soundName": "SKIRMISH"}
    )
    assert playing(body) == ["Skirmish"]  # sequential mode: one sound at a time
    names = [(await stream.event()).name for _ in range(6)]
    assert names.count("updatePlaylistSound") == 6  # two sounds swap, three times

    status, body = await api(
        "POST", "/playlist/volume", {"playlistId": PLAYLIST, "soundId": DRUMS, "volume": 0.8}
    )
    assert status == 200, body
    assert body["data"]["playlist"]["sounds"][0]["volume"] == 0.8
    sound_update = await stream.event()
    assert sound_update.data["args"][1] == {"volume": 0.8, "_id": DRUMS}
    # without a sound: the playlist's own volume, kept on its document (not in the reply shape)
    status, body = await api(
        "POST", "/playlist/volume", {"playlistName": "Goblin Ambush", "volume": 0.25}
    )
    assert status == 200 and "volume" not in body["data"]["playlist"]
    assert [s["volume"] for s in body["data"]["playlist"]["sounds"]] == [0.8, 0.4]
    assert stored(world)["volume"] == 0.25
    update = await stream.event()
    assert update.name == "updatePlaylist" and update.data["args"][1] == {
        "volume": 0.25,
        "_id": PLAYLIST,
    }

    status, body = await api("POST", "/playlist/stop", {"playlistId": PLAYLIST})
    assert status == 200 and body["data"]["playlist"]["playing"] is False and playing(body) == []
    assert stored(world)["playing"] is False


async def test_playlist_errors_change_nothing(relay: Any, world: Any, api: Api) -> None:
    await api("POST", "/playlist/play", {"playlistId": PLAYLIST})
    before = stored(world)

    async def refused(path: str, body: dict[str, Any], text: str) -> None:
        status, reply = await api("POST", path, body)
        assert status == 400 and reply["error"] == text, (path, reply)
        if "requestId" in reply:
            assert list(reply) == ["type", "requestId", "error"]

    await refused("/playlist/volume", {"playlistId": PLAYLIST}, "'volume' is required")
    await refused(
        "/playlist/volume",
        {"playlistId": PLAYLIST, "volume": "loud"},
        "'volume' must be a valid number",
    )
    for volume in (1.5, -0.1):
        await refused(
            "/playlist/volume",
            {"playlistId": PLAYLIST, "volume": volume},
            "volume must be a number between 0 and 1",
        )
    await refused(
        "/playlist/volume",
        {"playlistId": PLAYLIST, "soundName": "Lute", "volume": 2},
        "Sound not found: Lute",  # the sound is looked up before the volume is checked
    )
    await refused("/playlist/volume", {"volume": 2}, "playlistId or playlistName is required")
    await refused("/playlist/play", {}, "playlistId or playlistName is required")
    await refused("/playlist/stop", {"playlistId": "nope"}, "Playlist not found: nope")
    await refused("/playlist/next", {"playlistName": "Jazz"}, "Playlist not found: Jazz")
    await refused("/playlist/play", {"playlistId": PLAYLIST, "soundId": "x"}, "Sound not found: x")
    await refused("/play-sound", {}, "'src' is required")
    await refused(
        "/play-sound", {"src": "a.ogg", "volume": 3}, "volume must be a number between 0 and 1"
    )
    assert stored(world) == before
    assert (await api("POST", "/stop-sound", {"src": "a.ogg"}))[1]["data"]["stopped"] == 0


async def test_play_sound_and_stop_sound(relay: Any, world: Any, api: Api) -> None:
    status, body = await api("POST", "/play-sound", {"src": "sounds/dice.wav", "volume": 0.3})
    assert status == 200, body
    assert body == {
        "type": "play-sound-result",
        "requestId": body["requestId"],
        "data": {"src": "sounds/dice.wav", "volume": 0.3, "loop": False},
    }
    status, body = await api("POST", "/play-sound", {"src": "sounds/lock.wav", "loop": True})
    assert body["data"] == {"src": "sounds/lock.wav", "volume": 0.5, "loop": True}
    status, body = await api("POST", "/stop-sound", {"src": "sounds/dice.wav"})
    assert status == 200
    assert body["data"] == {"stopped": 1, "src": "sounds/dice.wav"}
    assert (await api("POST", "/stop-sound", {"src": "sounds/dice.wav"}))[1]["data"]["stopped"] == 0
    # without src every sound stops: the looping one and the playlist's drums
    await api("POST", "/playlist/play", {"playlistId": PLAYLIST})
    status, body = await api("POST", "/stop-sound")
    assert body["data"] == {"stopped": 2, "src": None}
    assert stored(world)["playing"] is False


async def test_playlist_routes_need_a_gm_with_userId(relay: Any, world: Any, api: Api) -> None:
    before = stored(world)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("/playlist/play", {"playlistId": PLAYLIST}, "control playlists"),
        ("/playlist/stop", {"playlistId": PLAYLIST}, "control playlists"),
        ("/playlist/next", {"playlistId": PLAYLIST}, "control playlists"),
        ("/playlist/volume", {"playlistId": PLAYLIST, "volume": 0.1}, "control playlists"),
        ("/play-sound", {"src": "a.ogg"}, "play sounds"),
        ("/stop-sound", {}, "stop sounds"),
    ]
    for path, body, operation in cases:
        status, reply = await api("POST", path, {**body, "userId": "Ben"})
        assert status == 400 and reply["error"] == f"User 'Ben' must be a GM to {operation}"
    status, reply = await api("POST", "/playlist/play", {"playlistId": PLAYLIST}, userId="ghost")
    assert status == 400 and reply["error"] == "User not found: ghost" and reply["data"] is None
    status, reply = await api(
        "POST", "/playlist/play", {"playlistId": PLAYLIST, "userId": "gamemaster"}
    )
    assert status == 200 and reply["data"]["playlist"]["playing"] is True
    assert before["playing"] is False
