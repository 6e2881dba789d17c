"""The OpenAPI generator and the CLI's pure helpers."""

from __future__ import annotations

import argparse

import pytest

from vttrelay.cli import build_parser
from vttrelay.cli.common import expiry
from vttrelay.cli.serve_settings import resolve, serve_config
from vttrelay.relay.accounts.expiry import parse_expiry
from vttrelay.relay.openapi import build_document
from vttrelay.relay.routes import DEFAULT_SCOPES, ROUTES
from vttrelay.server.prepare import SERVE_SCOPES


def test_document_covers_the_table() -> None:
    doc = build_document()
    ops = [(path, method) for path, item in doc["paths"].items() for method in item]
    assert len(ops) == len(ROUTES)
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(set(ids)) == len(ids)
    skill = doc["paths"]["/dnd5e/skill-check"]["post"]
    schema = skill["requestBody"]["content"]["application/json"]["schema"]
    assert "required" not in schema  # actorUuid and skill may also come from the query
    assert schema["properties"]["createChatMessage"]["default"] is True
    assert skill["x-timeout"] == 10.0 and skill["x-system"] == "dnd5e"
    chat = doc["paths"]["/chat"]["get"]
    limit = next(p for p in chat["parameters"] if p["name"] == "limit")
    assert limit["in"] == "query" and limit["schema"]["default"] == 10
    details = doc["paths"]["/dnd5e/get-actor-details"]["get"]["parameters"]
    assert {p["name"]: p["required"] for p in details if p["required"]} == {
        "actorUuid": True,
        "details": True,
    }
    delete = doc["paths"]["/chat/{messageId}"]["delete"]
    assert {"name": "messageId", "in": "path"}.items() <= delete["parameters"][-1].items()
    assert delete["parameters"][-1]["required"] is True
    limited = skill["responses"]["429"]
    assert limited["headers"]["Retry-After"]["schema"] == {"type": "integer"}


def test_canvas_document_types_are_an_enum_of_the_path() -> None:
    canvas = build_document()["paths"]["/canvas/{documentType}"]
    assert set(canvas) == {"get", "post", "put", "delete"}
    for op in canvas.values():
        kind = next(p for p in op["parameters"] if p["name"] == "documentType")
        assert kind["in"] == "path" and kind["required"] is True
        assert kind["schema"]["enum"][0] == "tokens" and len(kind["schema"]["enum"]) == 9


def test_parse_expiry() -> None:
    assert parse_expiry("30d", now=100.0) == 100.0 + 30 * 86400
    assert parse_expiry("12h", now=0.0) == 43200
    assert parse_expiry("15m", now=0.0) == 900
    assert parse_expiry("2w", now=0.0) == 2 * 604800
    assert parse_expiry("2030-01-01T00:00:00Z") == 1893456000
    assert parse_expiry("2030-01-01") == 1893456000
    with pytest.raises(ValueError, match="not a duration"):
        parse_expiry("tomorrow")
    with pytest.raises(argparse.ArgumentTypeError, match="not a duration"):  # `--expires`
        expiry("tomorrow")


def test_parser() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["keys", "create", "--scope", "dnd5e", "--scope", "chat:read", "--client", "w1",
         "--rate", "5", "--data-dir", "/tmp/x"]
    )  # fmt: skip
    assert args.scope == ["dnd5e", "chat:read"] and args.client == ["w1"] and args.rate == 5
    with pytest.raises(SystemExit):
        parser.parse_args(["keys", "create", "--scope", "not-a-scope"])
    settings = resolve(parser.parse_args(["serve"]), {})
    assert (settings["host"].value, settings["port"].value) == ("127.0.0.1", 3010)
    assert settings["no-world"].value is False
    assert set(DEFAULT_SCOPES) < set(SERVE_SCOPES) and "execute-js" in SERVE_SCOPES


def test_serve_flags_reach_the_relay_config() -> None:
    parser = build_parser()
    defaults = serve_config(resolve(parser.parse_args(["serve", "--data-dir", "d"]), {}))
    assert (defaults.rate_per_minute, defaults.max_body_mb) == (300, 250)
    assert defaults.subscription_linger == 30.0 and defaults.key_request_rate_limit == 20
    assert defaults.code_miss_limit == 10
    config = serve_config(
        resolve(
            parser.parse_args(
                [
                    "serve",
                    "--data-dir",
                    "d",
                    "--port",
                    "4000",
                    "--rate",
                    "0",
                    "--max-body-mb",
                    "1.5",
                    "--subscription-linger",
                    "0",
                    "--key-request-rate",
                    "0",
                    "--code-miss-rate",
                    "3",
                    "--max-connections",
                    "500",
                    "--header-timeout",
                    "2",
                    "--idle-timeout",
                    "5",
                    "--body-timeout",
                    "7",
                ]
            ),
            {},
        )  # fmt: skip
    )
    assert (config.max_connections, config.header_timeout, config.idle_timeout) == (500, 2, 5)
    assert config.body_timeout == 7 and defaults.max_connections == 10_000
    assert (config.port, config.rate_per_minute, config.max_body_mb) == (4000, 0, 1.5)
    assert config.subscription_linger == 0.0 and config.key_request_rate_limit == 0
    assert config.code_miss_limit == 3


def test_tokens_parser() -> None:
    parser = build_parser()
    args = parser.parse_args(["tokens", "list", "--account", "a", "--data-dir", "d"])
    assert (args.account, args.data_dir) == ("a", "d")
    args = parser.parse_args(["tokens", "revoke", "tok_1"])
    assert args.token_id == "tok_1"
    with pytest.raises(SystemExit):
        parser.parse_args(["tokens"])


def test_openapi_pair_requires_code_and_world_id() -> None:
    pair = build_document()["paths"]["/auth/pair"]["post"]
    schema = pair["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["code", "worldId"] and pair["security"] == []
