"""Scene document rules (validation, tokens from actors) and the defaults of new documents."""

from __future__ import annotations

import itertools

from vttrelay.world.model import defaults
from vttrelay.world.rules import canvas


def test_valid_documents_pass() -> None:
    assert canvas.validation_error("Wall", {"c": [0, 0, 100, 0], "door": 1}) is None
    assert canvas.validation_error("Token", {"x": 1.5, "y": 0, "width": 2}) is None
    assert canvas.validation_error("Region", {"elevation": {"bottom": None, "top": 10}}) is None
    assert canvas.validation_error("Tile", {"x": None}) is None


def test_validation_errors_list_every_problem() -> None:
    assert (
        canvas.validation_error("Wall", {}) == "Wall validation errors:\n  c: may not be undefined"
    )
    assert canvas.validation_error("Wall", {"c": [0, 0, 1]}) == (
        "Wall validation errors:\n  c: must be an array of 4 numbers"
    )
    assert canvas.validation_error("Token", {"x": True, "y": float("inf"), "disposition": 5}) == (
        "Token validation errors:\n  x: must be a finite number\n  y: must be a finite number\n"
        "  disposition: 5 is not a valid choice"
    )
    assert canvas.validation_error("Region", {"elevation": 3}) == (
        "Region validation errors:\n  elevation: must be an object"
    )


def test_token_data_from_actor_takes_the_prototype_under_the_callers_data() -> None:
    actor = {
        "name": "Wolf",
        "prototypeToken": {"name": "Grey Wolf", "width": 1, "disposition": -1, "actorLink": False},
    }
    got = canvas.token_data_from_actor(actor, {"x": 5, "disposition": 0, "actorId": "w"})
    assert got == {
        "name": "Grey Wolf",
        "width": 1,
        "disposition": 0,
        "actorLink": False,
        "x": 5,
        "actorId": "w",
        "delta": {},
    }
    assert canvas.token_data_from_actor({"name": "Bare"}, {})["name"] == "Bare"
    linked = {"prototypeToken": {"name": "Elara", "actorLink": True}}
    assert "delta" not in canvas.token_data_from_actor(linked, {})


def test_merge_nested_dotted_and_deletions() -> None:
    doc = {"a": {"b": 1, "c": 2}, "d": [1], "e": 1}
    defaults.merge(doc, {"a": {"b": 5}, "a.x.y": 3, "d": [2], "-=e": None})
    assert doc == {"a": {"b": 5, "c": 2, "x": {"y": 3}}, "d": [2]}


def test_with_defaults_fills_scene_documents_and_playlist_sounds() -> None:
    ids = (f"id{n}" for n in itertools.count())
    wall = defaults.with_defaults("Wall", {"c": [0, 0, 1, 1]}, lambda: next(ids))
    assert wall["_id"] == "id0" and wall["move"] == 20 and wall["c"] == [0, 0, 1, 1]
    light = defaults.with_defaults("AmbientLight", {"config": {"dim": 20}}, lambda: next(ids))
    assert light["config"]["dim"] == 20 and light["config"]["bright"] == 0
    playlist = defaults.with_defaults(
        "Playlist", {"_id": "p", "name": "P", "sounds": [{"name": "S"}]}, lambda: next(ids)
    )
    assert playlist["_id"] == "p" and playlist["mode"] == 0 and playlist["playing"] is False
    assert playlist["sounds"] == [
        {
            "_id": "id2",
            "name": "S",
            "description": "",
            "path": None,
            "channel": "",
            "playing": False,
            "pausedTime": None,
            "repeat": False,
            "volume": 0.5,
            "fade": None,
            "sort": 0,
            "flags": {},
        }
    ]
    assert defaults.has_defaults("Token") and not defaults.has_defaults("Setting")


def test_tokens_sharing_a_name_are_numbered_in_scene_order() -> None:
    names = ["Goblin", "Elara Quill", "goblin", "Wolf", "", ""]
    assert canvas.numbered_names(names) == ["Goblin 1", "Elara Quill", "goblin 2", "Wolf", "", ""]
    assert canvas.numbered_names([]) == []
