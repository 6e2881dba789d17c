"""`types.conforms`: the run-time check of a reply against its TypedDict shape."""

from __future__ import annotations

import typing

from vttrelay.client.types import (
    Ability,
    ChatEventData,
    CheckResult,
    Denomination,
    DetailSection,
    Envelope,
    SearchReply,
    Skill,
    conforms,
)
from vttrelay.world.rules.abilities import ABILITIES, SKILLS
from vttrelay.world.rules.currency import DENOMINATIONS
from vttrelay.world.rules.details import DETAIL_NAMES

CHECK = {
    "type": "skill-check-result",
    "requestId": "skill-check_1_ab",
    "data": {
        "actorUuid": "Actor.x",
        "skill": "ste",
        "total": 14,
        "formula": "1d20",
        "result": "14",
    },
}


def test_a_reply_with_its_documented_keys_and_more_conforms() -> None:
    assert conforms(CHECK, Envelope[CheckResult]) == []
    extended = {**CHECK, "data": {**CHECK["data"], "newKey": [1]}, "extra": True}  # type: ignore[dict-item]
    assert conforms(extended, Envelope[CheckResult]) == []  # unknown keys are kept, not refused


def test_missing_keys_and_wrong_types_are_named_with_their_path() -> None:
    data = {**CHECK["data"], "total": "14"}  # type: ignore[dict-item]
    del data["formula"]
    assert sorted(conforms({**CHECK, "data": data}, Envelope[CheckResult])) == [
        "reply.data.total: expected int, got str",
        "reply.data: missing 'formula'",
    ]
    assert conforms({"type": "x"}, Envelope[CheckResult]) == ["reply: missing 'requestId'"]
    assert conforms({**CHECK, "data": {"total": True}}, Envelope[CheckResult])  # bool is no int
    search = {"type": "search-result", "requestId": "r", "query": "pip", "results": [{"id": 1}]}
    problems = conforms(search, SearchReply)
    assert "reply.results[0]: missing 'uuid'" in problems
    assert "reply.results[0].id: expected str, got int" in problems


def test_unions_take_the_closest_option() -> None:
    assert conforms({"clientId": "w"}, ChatEventData) == []
    assert conforms({"id": "m1"}, ChatEventData) == []
    assert conforms({"name": "?"}, ChatEventData) != []


def test_the_parameter_literals_are_the_world_rule_tables() -> None:
    assert typing.get_args(Ability) == ABILITIES
    assert typing.get_args(Skill) == tuple(SKILLS)
    assert typing.get_args(DetailSection) == DETAIL_NAMES
    assert typing.get_args(Denomination) == DENOMINATIONS
