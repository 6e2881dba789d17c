"""`vttrelay serve`'s settings: one table read from flags, the environment and a TOML file
(flag > environment > file > default), every value checked, secrets masked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vttrelay.cli import build_parser
from vttrelay.cli.serve_options import COMMON_OPTIONS, FROM_FIELD, SERVE_OPTIONS
from vttrelay.cli.serve_settings import SettingsError, masked, render, resolve, serve_config
from vttrelay.relay.accounts.settings import AccountSettings, SmtpSettings
from vttrelay.relay.config import RelayConfig


def settings_of(argv: list[str], environ: dict[str, str] | None = None) -> dict[str, object]:
    resolved = resolve(build_parser().parse_args(["serve", *argv]), environ or {})
    return {name: s.value for name, s in resolved.items()}


def sources_of(argv: list[str], environ: dict[str, str]) -> dict[str, str]:
    resolved = resolve(build_parser().parse_args(["serve", *argv]), environ)
    return {name: s.source for name, s in resolved.items()}


def test_every_row_names_a_real_field_and_one_env_variable_by_one_rule() -> None:
    owners = {"": RelayConfig, "accounts": AccountSettings, "smtp": SmtpSettings}
    envs = [o.env_name for o in SERVE_OPTIONS]
    assert len(set(envs)) == len(envs)
    for option in SERVE_OPTIONS:
        if option.field:
            owner, _, name = option.field.rpartition(".")
            assert name in {f.name for f in dataclasses.fields(owners[owner])}, option.name
            assert option.default_value is not FROM_FIELD  # raises for a field it cannot hold
        rule = "VTTRELAY_" + option.name.upper().replace("-", "_")
        # two names kept from 0.1 (documented in the README): --database, --redis
        assert option.env_name == rule or option.name in ("database", "redis"), option.name
    assert {o.name for o in COMMON_OPTIONS} <= {o.name for o in SERVE_OPTIONS}


def test_defaults_are_the_relay_configs() -> None:
    config = serve_config(resolve(build_parser().parse_args(["serve"]), {}))
    plain = RelayConfig(data_dir=Path("data"))
    for name in ("port", "rate_per_minute", "max_body_mb", "heartbeat_ttl", "metrics_port"):
        assert getattr(config, name) == getattr(plain, name), name
    assert config.accounts == AccountSettings() and config.redis_url is None
    assert config.sessions_enabled and config.session_sweep_interval == 30.0


def test_flag_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    path = tmp_path / "relay.toml"
    path.write_text('port = 4001\nrate = 7\nhost = "0.0.0.0"\nsignup = "invite"\n')
    environ = {"VTTRELAY_PORT": "4002", "VTTRELAY_RATE": "8", "VTTRELAY_CONFIG": str(path)}
    values = settings_of(["--rate", "9"], environ)
    assert (values["rate"], values["port"], values["host"]) == (9, 4002, "0.0.0.0")
    assert values["signup"] == "invite" and values["workers"] == 1
    sources = sources_of(["--rate", "9"], environ)
    assert sources["rate"] == "flag" and sources["port"] == "env VTTRELAY_PORT"
    assert sources["host"] == f"file {path}" and sources["workers"] == "default"
    assert sources["config"] == "env VTTRELAY_CONFIG"


def test_each_kind_from_each_source(tmp_path: Path) -> None:
    path = tmp_path / "relay.toml"
    path.write_text(
        'trusted-proxy = ["10.0.0.0/8", "127.0.0.1"]\nno-world = true\nmax-body-mb = 2\n'
        'base-path = "vtt/"\nsmtp-host = "mail.example"\nsmtp-password = "pw"\n'
    )
    values = settings_of(["--config", str(path)])
    assert values["trusted-proxy"] == ("10.0.0.0/8", "127.0.0.1") and values["no-world"] is True
    assert values["max-body-mb"] == 2.0 and values["base-path"] == "/vtt"
    environ = {
        "VTTRELAY_NO_WORLD": "off",
        "VTTRELAY_HEADLESS_ALLOW": "a:1, b",
        "VTTRELAY_LOG_LEVEL": "debug",
    }
    values = settings_of(["--trusted-proxy", "::1,10.1.0.0/16"], environ)
    assert values["no-world"] is False and values["headless-allow"] == ("a:1", "b")
    assert values["trusted-proxy"] == ("::1", "10.1.0.0/16") and values["log-level"] == "DEBUG"
    config = serve_config(resolve(build_parser().parse_args(["serve", "--config", str(path)]), {}))
    assert config.accounts.smtp == SmtpSettings(host="mail.example", password="pw")
    assert config.base_path == "/vtt" and config.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")


@pytest.mark.parametrize(
    ("argv", "environ", "message"),
    [
        ([], {"VTTRELAY_PORT": "abc"}, "VTTRELAY_PORT: not an integer: 'abc'"),
        ([], {"VTTRELAY_PORT": "70000"}, "VTTRELAY_PORT: 70000 is above 65535"),
        ([], {"VTTRELAY_RATE": "-1"}, "VTTRELAY_RATE: -1 is below 0"),
        ([], {"VTTRELAY_NO_WORLD": "maybe"}, "VTTRELAY_NO_WORLD: not one of"),
        ([], {"VTTRELAY_MAX_BODY_MB": "nan"}, "VTTRELAY_MAX_BODY_MB: not a number: nan"),
        ([], {"VTTRELAY_SIGNUP": "everyone"}, "VTTRELAY_SIGNUP: 'everyone' is not one of"),
        ([], {"VTTRELAY_TRUSTED_PROXY": "proxy.lan"}, "VTTRELAY_TRUSTED_PROXY: not an address"),
        ([], {"VTTRELAY_CREDENTIALS_KEY": "short"}, "VTTRELAY_CREDENTIALS_KEY: the credentials"),
        (["--port", "x"], {}, "--port: not an integer: 'x'"),
        (["--base-path", "/a/../b"], {}, "--base-path: invalid base path"),
        (["--workers", "0"], {}, "--workers: 0 is below 1"),
    ],
)
def test_a_bad_value_names_its_setting(
    argv: list[str], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_of(argv, environ)
    assert str(refused.value).startswith(message), str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prot = 3\n", "unknown setting 'prot' (did you mean 'port'?)"),
        ("config = 'x.toml'\n", "unknown setting 'config'"),
        ("[serve]\nport = 3\n", "unknown setting 'serve'"),
        ("port = '3010'\n", "port: not an integer: '3010'"),
        ("no-world = 'yes'\n", "no-world: not true or false: 'yes'"),
        ("trusted-proxy = [1]\n", "trusted-proxy: not a list of texts: [1]"),
        ("port = \n", "not TOML: "),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "relay.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as refused:
        settings_of(["--config", str(path)])
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"^--config .*missing.toml: cannot be read: No such"):
        settings_of(["--config", str(tmp_path / "missing.toml")])
    with pytest.raises(SettingsError, match="cannot be read: Is a directory"):
        settings_of(["--config", str(tmp_path)])


def test_print_config_masks_secrets_and_says_where_each_came_from(tmp_path: Path) -> None:
    path = tmp_path / "relay.toml"
    path.write_text('smtp-password = "hunter2"\nredis = "redis://:s3cret@cache:6379/0"\n')
    environ = {
        "VTTRELAY_DATABASE_URL": "postgresql://relay:pgpass@db:5432/vtt",
        "VTTRELAY_CREDENTIALS_KEY": "ab" * 32,
        "VTTRELAY_PORT": "4005",
    }
    resolved = resolve(build_parser().parse_args(["serve", "--config", str(path)]), environ)
    text = render(resolved)
    for secret in ("hunter2", "s3cret", "pgpass", "ab" * 32):
        assert secret not in text
    lines = text.splitlines()
    assert (
        'database = "postgresql://relay:********@db:5432/vtt"  # env VTTRELAY_DATABASE_URL' in lines
    )
    assert f'redis = "redis://:********@cache:6379/0"  # file {path}' in lines
    assert f'smtp-password = "********"  # file {path}' in lines
    assert 'credentials-key = "********"  # env VTTRELAY_CREDENTIALS_KEY' in lines
    assert "port = 4005  # env VTTRELAY_PORT" in lines and "rate = 300  # default" in lines
    assert "# metrics-port: not set (not served)  # default" in lines
    assert masked(resolved["host"]) == "127.0.0.1"
