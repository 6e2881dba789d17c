"""The client places each parameter where the route table says the relay reads it first."""

import pytest

from vttrelay.client.requests import UnknownEndpoint, find_route, prepare


def test_find_route_by_action_path_and_method() -> None:
    assert find_route("get-concentration").path == "/dnd5e/concentration"
    assert find_route("dnd5e/skill-check").action == "skill-check"
    assert find_route("/chat/subscribe").reply == "stream"
    assert find_route("DELETE /chat").action == "chat-flush"
    assert find_route("DELETE /chat/{messageId}").action == "chat-delete"
    with pytest.raises(UnknownEndpoint):
        find_route("no-such-thing")


def test_get_parameters_go_to_the_query_as_json_text() -> None:
    req = prepare(
        find_route("get-actor-details"),
        {"actorUuid": "Actor.x", "details": ["items", "spells"], "clientId": "w1"},
    )
    assert (req.method, req.path, req.body) == ("GET", "/dnd5e/get-actor-details", None)
    assert req.query == {"actorUuid": "Actor.x", "details": '["items","spells"]', "clientId": "w1"}


def test_post_parameters_follow_their_first_source() -> None:
    req = prepare(
        find_route("short-rest"),
        {"actorUuid": "Actor.x", "selected": False, "autoHD": True, "userId": "Aria"},
    )
    # selected and userId are read from the query first; the dnd5e ones from the body.
    assert req.query == {"selected": "false", "userId": "Aria"}
    assert req.body == {"actorUuid": "Actor.x", "autoHD": True}


def test_path_parameters_are_substituted_and_required() -> None:
    req = prepare(find_route("chat-delete"), {"messageId": "abc"})
    assert (req.method, req.path, req.query) == ("DELETE", "/chat/abc", {})
    with pytest.raises(TypeError, match="messageId"):
        prepare(find_route("chat-delete"), {})


def test_unknown_parameters_are_refused_and_none_is_left_out() -> None:
    with pytest.raises(TypeError, match="colour"):
        prepare(find_route("skill-check"), {"colour": "red"})
    req = prepare(find_route("chat-send"), {"content": "hi", "flavor": None})
    assert req.body == {"content": "hi"}
