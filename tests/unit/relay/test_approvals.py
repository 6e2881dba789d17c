"""Pair and key requests without a server: the body rules of pairing.py, the records and
transitions of approvals.py on a real store with an injected clock, and the CLI's parser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vttrelay.cli import build_parser
from vttrelay.cli.pair import cmd_pair, cmd_pair_approve
from vttrelay.relay.accounts import pair_requests, worlds
from vttrelay.relay.accounts.key_requests import KeyAsk
from vttrelay.relay.accounts.pair_requests import PairAsk
from vttrelay.relay.accounts.pairing import parse_key_ask, parse_pair_ask, url_problem
from vttrelay.relay.core import RelayError
from vttrelay.relay.openapi import build_document
from vttrelay.relay.store import PairingError, RelayStore


@pytest.fixture
def store(store_target: Path | str) -> Iterator[RelayStore]:
    """The relay store, once on SQLite and once on PostgreSQL."""
    s = RelayStore(store_target)
    yield s
    s.close()


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://bot.example/cb?x=1", None),
        ("http://8.8.8.8:8080/", None),
        ("bot.example", "URL must use http or https scheme"),
        ("javascript:alert(1)", "URL must use http or https scheme"),
        ("http:///path", "URL must have a non-empty host"),
        ("http://localhost.example", None),
        ("http://10.0.0.2/", "URL must not target a private or loopback address"),
        ("http://192.168.1.9/", "URL must not target a private or loopback address"),
        ("http://169.254.169.254/", "URL must not target a private or loopback address"),
        ("http://[::1]:80/", "URL must not target a private or loopback address"),
        ("http://0.0.0.0/", "URL must not target a private or loopback address"),
        ("http://x.example:port/", "invalid URL"),
    ],
)
def test_url_rules(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


def test_body_rules() -> None:
    ask = parse_pair_ask(
        {"worldId": " w ", "requestedTargetClients": ["*", "a", "a"], "upgradeOnly": None}
    )
    assert ask == PairAsk(world_id="w", target_clients=("a",))
    assert ask.world == "w" and PairAsk("w", world_title="T").world == "T"
    with pytest.raises(RelayError, match="worldId is required"):
        parse_pair_ask({"worldId": "   "})
    with pytest.raises(RelayError, match="Invalid request body"):
        parse_pair_ask({"worldId": "w", "requestedTargetClients": [1]})
    with pytest.raises(RelayError, match="too long"):
        parse_pair_ask({"worldId": "w", "requestedRemoteScopes": ["search"] * 65})
    key = parse_key_ask({"appName": "A", "scopes": ["search", "search"], "unknown": 1})
    assert key == KeyAsk(app_name="A", scopes=("search",))
    with pytest.raises(RelayError, match="Invalid request body"):
        parse_key_ask({"appName": "A", "scopes": ["search"], "suggestedMonthlyLimit": True})


def test_pair_request_lifecycle_with_a_clock(store: RelayStore) -> None:
    made = pair_requests.create_pair_request(store, PairAsk("w"), "1.2.3.4", ttl=600, now=1000.0)
    assert made.expires_at == 1600.0 and made.state(1599.0) == "pending"
    assert made.state(1600.0) == "expired"
    assert pair_requests.pair_status(store, made.code, now=1599.0) == (200, {"status": "pending"})
    assert pair_requests.pair_status(store, made.code, now=1600.0) == (410, {"status": "expired"})
    assert pair_requests.pair_requests(store, now=1599.0) == [made]
    assert pair_requests.pair_requests(store, now=1600.0) == []
    with pytest.raises(RelayError) as refused:
        pair_requests.approve_pair_request(store, made.code, "default", now=1600.0)
    assert (refused.value.status, refused.value.message) == (410, "Pair request has expired")

    done = pair_requests.approve_pair_request(store, made.code, "acct", now=1500.0, code_ttl=60)
    assert done.pairing_code is not None and not done.upgraded
    # The approved code is a normal pairing code of that account, valid code_ttl seconds.
    status = pair_requests.pair_status(store, made.code, now=1501.0)
    assert status == (200, {"pairingCode": done.pairing_code, "status": "approved"})
    assert pair_requests.pair_status(store, made.code)[1]["status"] == "exchanged"
    # Minted at t=1500 and valid 60 s: long expired by the real clock.
    assert store.redeem_pairing_code(done.pairing_code) is PairingError.EXPIRED
    fresh = pair_requests.create_pair_request(store, PairAsk("w"))
    code = pair_requests.approve_pair_request(store, fresh.code, "acct").pairing_code
    assert getattr(store.redeem_pairing_code(code or ""), "account", None) == "acct"


def test_a_refused_approval_changes_nothing(store: RelayStore) -> None:
    ask = PairAsk("w", client_id="fvtt_unknown", upgrade_only=True)
    made = pair_requests.create_pair_request(store, ask)
    with pytest.raises(RelayError, match="cannot upgrade"):
        pair_requests.approve_pair_request(store, made.code, "default")
    assert pair_requests.get_pair_request(store, made.code) == made
    store.create_connection_token("other", "fvtt_unknown")  # another account's world
    with pytest.raises(RelayError, match="cannot upgrade"):
        pair_requests.approve_pair_request(store, made.code, "default")
    done = pair_requests.approve_pair_request(store, made.code, "other")
    assert done.upgraded and done.pairing_code is None
    assert pair_requests.pair_status(store, made.code) == (
        200,
        {"status": "approved", "upgraded": True},
    )


def test_pair_subcommands_parse(tmp_path: Path) -> None:
    parser = build_parser()
    bare = parser.parse_args(["pair", "--account", "a", "--data-dir", "d"])
    assert bare.func is cmd_pair and (bare.account, bare.data_dir) == ("a", "d")
    sub = parser.parse_args(["pair", "--data-dir", "d", "approve", "CODE"])
    assert sub.func is cmd_pair_approve and sub.data_dir == "d" and sub.code == "CODE"
    assert parser.parse_args(["pair", "approve", "C", "--data-dir", "e"]).data_dir == "e"


def test_openapi_lists_the_answers_of_the_request_routes() -> None:
    paths = build_document()["paths"]
    created = paths["/auth/pair-request"]["post"]
    assert set(created["responses"]) == {"201", "400", "429"} and created["security"] == []
    assert created["requestBody"]["content"]["application/json"]["schema"]["required"] == [
        "worldId"
    ]
    assert set(paths["/auth/key-request/exchange"]["post"]["responses"]) == {
        "200", "400", "404", "410", "429",
    }  # fmt: skip
    page = paths["/pair/{code}"]["get"]["responses"]["200"]
    assert list(page["content"]) == ["text/html"]


def test_an_approved_upgrade_grants_its_cross_world_permissions(store: RelayStore) -> None:
    store.create_connection_token("acct", "fvtt_up")
    store.create_connection_token("acct", "fvtt_sib")
    store.create_connection_token("other", "fvtt_theirs")
    ask = PairAsk(
        "w",
        client_id="fvtt_up",
        upgrade_only=True,
        remote_scopes=("entity:read", "roll:execute"),
        target_clients=("fvtt_sib", "fvtt_up", "fvtt_theirs", "fvtt_nobody"),
    )
    made = pair_requests.create_pair_request(store, ask)
    assert pair_requests.approve_pair_request(store, made.code, "acct").upgraded
    settings = worlds.world_settings(store, "fvtt_up")
    assert settings is not None
    # the world itself, another account's world and an unknown one are dropped
    assert settings.allowed_targets == ("fvtt_sib",)
    assert settings.remote_scopes == ("entity:read", "roll:execute")
