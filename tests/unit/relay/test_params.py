"""Parameter extraction and coercion (wire-protocol §4.2), as pure functions."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.routes import route

from vttrelay.relay.params import (
    FORBIDDEN_SCRIPT,
    ParamError,
    coerce,
    extract,
    parse_body,
    require_any_message,
)
from vttrelay.relay.routes import ROUTES, Param

SKILL = route("POST", "/dnd5e/skill-check")
DETAILS = route("GET", "/dnd5e/get-actor-details")
CHAT = route("GET", "/chat")
SELECT = route("POST", "/select")
SCRIPT = route("POST", "/execute-js")
DELETE = route("DELETE", "/chat/{messageId}")


def test_parse_body() -> None:
    assert parse_body("GET", b'{"a":1}') == {}
    assert parse_body("POST", b'{"a":1}') == {"a": 1}
    assert parse_body("POST", b"") == {}
    assert parse_body("POST", b"{broken") == {}
    assert parse_body("POST", b"[1,2]") == {}


def test_sources_in_order_and_empty_query_is_absent() -> None:
    got = extract(SKILL, {"actorUuid": "Q", "skill": ""}, {"actorUuid": "B", "skill": "prc"}, {})
    assert got["actorUuid"] == "B" and got["skill"] == "prc"
    got = extract(SKILL, {"actorUuid": "Q", "skill": "ath"}, {"actorUuid": None}, {})
    assert got["actorUuid"] == "Q"
    user = route("GET", "/players")
    assert extract(user, {"userId": "q"}, {"userId": "b"}, {})["userId"] == "q"


def test_undeclared_dropped_and_defaults_applied() -> None:
    got = extract(SKILL, {"bogus": "1"}, {"actorUuid": "A", "skill": "prc", "extra": 5}, {})
    assert got == {"actorUuid": "A", "skill": "prc", "createChatMessage": True}
    got = extract(CHAT, {"limit": "25"}, {}, {})
    assert got == {"limit": 25, "offset": 0}


def test_path_parameter() -> None:
    assert extract(DELETE, {}, {}, {"messageId": "m1"}) == {"messageId": "m1"}


def p(kind: Any) -> Param:
    return Param("x", kind, ("body", "query"))


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("string", "s", "s"),
        ("number", 3, 3),
        ("number", 2.5, 2.5),
        ("number", "10", 10),
        ("number", "1e3", 1000),
        ("number", "-0.25", -0.25),
        ("number", 4.0, 4),
        # an integer parameter is checked as a number, as the reference relay does (the world
        # truncates a fraction): the relay's API is the same, only OpenAPI and the SDK say int
        ("integer", "10", 10),
        ("integer", 4.0, 4),
        ("integer", 2.5, 2.5),
        ("boolean", True, True),
        ("boolean", "TRUE", True),
        ("boolean", "False", False),
        ("array", [1], [1]),
        ("array", '["items","spells"]', ["items", "spells"]),
        ("object", {"gp": 1}, {"gp": 1}),
        (None, {"any": [1]}, {"any": [1]}),
        (None, "text", "text"),
    ],
)
def test_coerce_accepts(kind: Any, value: Any, expected: Any) -> None:
    got = coerce(p(kind), value, False)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("string", 5, "'x' must be a string"),
        ("string", ["a"], "'x' must be a string"),
        ("number", "ten", "'x' must be a valid number"),
        ("number", True, "'x' must be a valid number"),
        ("number", "nan", "'x' must be a valid number"),
        ("number", "inf", "'x' must be a valid number"),
        ("number", [1], "'x' must be a valid number"),
        ("integer", "ten", "'x' must be a valid number"),
        ("integer", True, "'x' must be a valid number"),
        ("boolean", "yes", "'x' must be a valid boolean"),
        ("boolean", 1, "'x' must be a valid boolean"),
        ("array", "a,b", "'x' must be a valid array"),
        ("array", '{"a":1}', "'x' must be a valid array"),
        ("array", 5, "'x' must be an array"),
        ("array", {"a": 1}, "'x' must be an array"),
        ("object", '{"a":1}', "'x' must be an object"),
        ("object", [1], "'x' must be an object"),
    ],
)
def test_coerce_rejects(kind: Any, value: Any, message: str) -> None:
    with pytest.raises(ParamError) as info:
        coerce(p(kind), value, False)
    assert info.value.message == message


def test_type_errors_come_before_required() -> None:
    with pytest.raises(ParamError) as info:
        extract(DETAILS, {"details": "nope"}, {}, {})
    assert info.value.message == "'details' must be a valid array"
    with pytest.raises(ParamError) as info:
        extract(DETAILS, {"details": '["items"]'}, {}, {})
    assert info.value.message == "'actorUuid' is required"


def test_require_any() -> None:
    assert require_any_message(("a",)) == "At least one of 'a' is required"
    assert require_any_message(("a", "b")) == "At least one of 'a' or 'b' is required"
    with pytest.raises(ParamError) as info:
        extract(SELECT, {}, {"overwrite": True}, {})
    assert info.value.message == "At least one of 'uuids', 'name', 'data', or 'all' is required"
    assert extract(SELECT, {}, {"all": False}, {}) == {"all": False}


@pytest.mark.parametrize(
    "script",
    [
        "localStorage.x",
        "document.cookie",
        "eval('1')",
        "new Worker(u)",
        "x.__proto__",
        "atob(s)",
        "crypto.subtle",
        "globalThis.x",
        "game.settings.set('a','b',1)",
        "new Proxy({}, {})",
        "await import('x')",
        "const password = 1",
        "Function('return 1')",
        "Reflect.ownKeys(o)",
    ],
)
def test_forbidden_script_patterns(script: str) -> None:
    with pytest.raises(ParamError) as info:
        extract(SCRIPT, {}, {"script": script}, {})
    assert info.value.message == FORBIDDEN_SCRIPT


def test_allowed_scripts() -> None:
    for script in ("return game.actors.size", "", "return 1 + 1"):
        assert extract(SCRIPT, {}, {"script": script}, {}) == {"script": script}
    assert extract(SCRIPT, {}, {}, {}) == {}


@pytest.mark.parametrize("text", [" 10", "10 ", "1_000", "0x10", "1e999", "NaN", "", "+", "."])
def test_number_text_is_as_strict_as_the_reference(text: str) -> None:
    with pytest.raises(ParamError) as info:
        coerce(p("number"), text, True)
    assert info.value.message == "'x' must be a valid number"


@pytest.mark.parametrize(
    ("text", "expected"), [("+5", 5), (".5", 0.5), ("5.", 5), ("-1E2", -100), ("007", 7)]
)
def test_number_text_accepted(text: str, expected: float) -> None:
    assert coerce(p("number"), text, True) == expected


def test_canvas_document_type_adds_class_name_after_the_required_checks() -> None:
    put = route("PUT", "/canvas/{documentType}")
    got = extract(put, {}, {"documentId": "t1", "data": {"x": 450}}, {"documentType": "lights"})
    assert got == {
        "documentType": "lights",
        "documentId": "t1",
        "data": {"x": 450},
        "className": "AmbientLight",
    }
    with pytest.raises(ParamError, match="'documentId' is required"):
        extract(put, {}, {"data": {}}, {"documentType": "invalid"})
    with pytest.raises(ParamError) as refused:
        extract(put, {}, {"documentId": "t1", "data": {}}, {"documentType": "invalid"})
    valid = ["tokens", "tiles", "drawings", "lights", "sounds", "notes", "templates", "walls"]
    valid.append("regions")
    assert refused.value.message == "Invalid documentType. Must be one of: " + ", ".join(valid)
    assert refused.value.extra == {"validTypes": valid}
    post = route("POST", "/canvas/{documentType}")  # an array creates several (§15 X6)
    got = extract(post, {}, {"data": [{"x": 1}, {"x": 2}]}, {"documentType": "tokens"})
    assert got["data"] == [{"x": 1}, {"x": 2}] and got["className"] == "Token"


def test_user_routes_check_data_before_the_selector() -> None:
    put = route("PUT", "/user")
    with pytest.raises(ParamError, match="'data' is required"):
        extract(put, {}, {}, {})
    with pytest.raises(ParamError, match="^At least one of 'id' or 'name' is required$"):
        extract(put, {}, {"data": {"role": 2}}, {})
    assert extract(route("POST", "/user"), {}, {"name": "Cleo"}, {}) == {"name": "Cleo", "role": 1}
    with pytest.raises(ParamError, match="^At least one of 'id' or 'name' is required$"):
        extract(route("DELETE", "/user"), {}, {"id": "body-ignored"}, {})


def test_aliases_reach_the_world_under_the_name_it_reads() -> None:
    """DESIGN §6 item 9: `encounter`/`encounterId` and `tokens`/`tokenUuids` are both accepted;
    the extracted parameter (the frame's key) is the module's name."""
    nav = route("POST", "/next-turn")
    assert extract(nav, {"encounter": "c1"}, {}, {}) == {"encounterId": "c1"}
    assert extract(nav, {}, {"encounter": "c1"}, {}) == {"encounterId": "c1"}
    assert extract(nav, {"encounterId": "q"}, {"encounter": "b"}, {}) == {"encounterId": "b"}
    assert extract(nav, {}, {"encounterId": "a", "encounter": "b"}, {}) == {"encounterId": "a"}
    start = route("POST", "/start-encounter")
    assert extract(start, {}, {"tokens": ["Scene.s.Token.t"]}, {}) == {
        "tokenUuids": ["Scene.s.Token.t"]
    }
    with pytest.raises(ParamError, match="'tokenUuids' must be an array"):
        extract(start, {}, {"tokens": 5}, {})


def test_guards_of_a_macro_create() -> None:
    from vttrelay.relay.params import ParamError, check_guards

    create = next(r for r in ROUTES if r.path == "/create")
    macro = {"entityType": "Macro", "data": {"name": "m", "command": "Hello"}}
    check_guards(create, macro, ["entity:write", "macro:write"])
    check_guards(create, {**macro, "entityType": "Item"}, ["entity:write"])  # Macros only
    with pytest.raises(ParamError, match="^macro:write scope is required to create macros$"):
        check_guards(create, macro, ["entity:write"])
    sneaky = {**macro, "data": {"command": "localStorage.getItem('x')"}}
    with pytest.raises(ParamError, match="^Script contains forbidden patterns$"):
        check_guards(create, sneaky, ["macro:write"])
    check_guards(create, {**macro, "data": {"command": 5}}, ["macro:write"])  # not a script
