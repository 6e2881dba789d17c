"""The declared parameter limits (routes.Param): enforced by params.extract, shown by OpenAPI."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from tests.support.routes import route

from vttrelay.relay.openapi import build_document
from vttrelay.relay.params import ParamError, body_limit, check_limits, extract
from vttrelay.relay.routes import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LENGTH,
    MAX_SAFE_INTEGER,
    Param,
    Route,
)


def refused(param: Param, value: Any) -> tuple[int, str]:
    with pytest.raises(ParamError) as info:
        check_limits(param, value)
    return info.value.status, info.value.message


def deep(depth: int) -> Any:
    return orjson.loads("[" * depth + "]" * depth)


def test_defaults_apply_to_every_parameter() -> None:
    number = Param("n", "number", ("query",))
    assert refused(number, 2**53) == (
        400,
        f"'n' must be between {-MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}",
    )
    check_limits(number, MAX_SAFE_INTEGER)
    check_limits(number, -1.5)
    text = Param("s", "string", ("body",))
    check_limits(text, "x" * DEFAULT_MAX_LENGTH)
    assert refused(text, "x" * (DEFAULT_MAX_LENGTH + 1)) == (
        413,
        f"'s' is too long (at most {DEFAULT_MAX_LENGTH} characters)",
    )
    obj = Param("o", "object", ("body",))
    check_limits(obj, deep(DEFAULT_MAX_DEPTH))
    assert refused(obj, deep(DEFAULT_MAX_DEPTH + 1)) == (
        400,
        f"'o' is nested too deeply (at most {DEFAULT_MAX_DEPTH} levels)",
    )
    big = {"a": "x" * DEFAULT_MAX_BYTES}
    assert refused(obj, big) == (
        413,
        f"'o' is too large (at most {DEFAULT_MAX_BYTES} bytes of JSON)",
    )


def test_untyped_values_are_held_to_the_limit_of_their_shape() -> None:
    untyped = Param("u", None, ("body",), max_length=3, max_bytes=10, max_depth=2)
    check_limits(untyped, "abc")
    assert refused(untyped, "abcd")[0] == 413
    check_limits(untyped, [[1]])
    assert refused(untyped, [[[1]]])[0] == 400
    assert refused(untyped, [1, 2, 3, 4, 5, 6])[0] == 413
    check_limits(untyped, 10**30)  # an untyped number is passed through as given


def test_nesting_is_checked_without_recursion() -> None:
    # As deep as orjson parses (1024): a recursive walk would raise RecursionError.
    value = deep(1000)
    assert refused(Param("x", "array", ("body",)), value) == (
        400,
        "'x' is nested too deeply (at most 32 levels)",
    )


def test_declared_limits_of_the_route_table() -> None:
    chat = route("GET", "/chat")
    with pytest.raises(ParamError) as info:
        extract(chat, {"offset": "1e20"}, {}, {})
    assert info.value.message == "'offset' must be between 0 and 9007199254740991"
    with pytest.raises(ParamError):
        extract(chat, {"limit": "-1"}, {}, {})
    assert extract(chat, {"limit": "1000", "offset": "5"}, {}, {}) == {"limit": 1000, "offset": 5}
    transfer = route("POST", "/dnd5e/transfer-currency")
    ok = extract(transfer, {}, {"currency": {"gp": 5}}, {})
    assert ok["currency"] == {"gp": 5}
    with pytest.raises(ParamError) as info:
        extract(transfer, {}, {"currency": {"gp": {"gp": 1}}}, {})
    assert info.value.message == "'currency' is nested too deeply (at most 1 level)"


def test_a_real_actor_document_passes_the_default_object_limits() -> None:
    # A 5e actor is ~20-600 KB of JSON nesting about 8 levels: well inside 4 MiB and 32 levels.
    item = {"system": {"activities": {"a1": {"damage": {"parts": [{"types": ["fire"]}]}}}}}
    actor = {"name": "Hero", "system": {"attributes": {"hp": {"value": 10}}}, "items": [item] * 500}
    assert len(orjson.dumps(actor)) > 20_000
    check_limits(Param("data", "object", ("body",)), actor)


def test_openapi_shows_the_limits() -> None:
    doc = build_document()
    chat_get = {p["name"]: p["schema"] for p in doc["paths"]["/chat"]["get"]["parameters"]}
    assert chat_get["offset"]["minimum"] == 0
    assert chat_get["offset"]["maximum"] == MAX_SAFE_INTEGER
    assert chat_get["limit"]["maximum"] == 1000
    assert chat_get["limit"]["type"] == chat_get["chatType"]["type"] == "integer"
    body = doc["paths"]["/chat"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["content"]["maxLength"] == 100_000
    assert body["properties"]["flavor"]["maxLength"] == 10_000
    body_limit_shown = doc["paths"]["/chat"]["post"]["requestBody"]["x-max-bytes"]
    assert body_limit_shown == body_limit(route("POST", "/chat"))
    script = doc["paths"]["/execute-js"]["post"]["requestBody"]["content"]["application/json"]
    assert script["schema"]["properties"]["script"]["maxLength"] == 1_000_000
    transfer = doc["paths"]["/dnd5e/transfer-currency"]["post"]["requestBody"]["content"]
    currency = transfer["application/json"]["schema"]["properties"]["currency"]
    assert currency["x-max-depth"] == 1 and currency["x-max-bytes"] == DEFAULT_MAX_BYTES


def test_a_route_body_limit_fits_every_valid_body() -> None:
    chat = route("POST", "/chat")
    # The largest valid body: every character escaped, pretty-printed.
    largest = {
        "content": "é" * 100_000,
        "flavor": "é" * 10_000,
        "speaker": "é" * DEFAULT_MAX_LENGTH,
        "alias": "é" * DEFAULT_MAX_LENGTH,
        "userId": "é" * DEFAULT_MAX_LENGTH,
        "whisper": ["u" * 60] * 900,
        "chatType": 1,
    }
    text = json.dumps(largest, ensure_ascii=True, indent=2).encode()
    extract(chat, {}, orjson.loads(text), {})  # accepted parameter by parameter
    assert len(text) < body_limit(chat) < 20 * 1024 * 1024  # and as a whole, far under 250 MB
    # A route whose parameters need more gets more (the global limit stays the ceiling).
    big = Route(
        "POST", "/x", "forward", "", "", params=(Param("f", "string", ("body",), max_length=10**8),)
    )
    assert body_limit(big) > 250 * 1024 * 1024
