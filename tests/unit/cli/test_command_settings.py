"""Every command that reads the relay's data resolves `vttrelay serve`'s one table as `serve`
does (its flags are the common options, then `VTTRELAY_*`, then the `--config` file, then the
default), and `command_options` is what such a command must be given to find what a `serve`
uses (printed in serve's hints)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from vttrelay.cli import build_parser, main
from vttrelay.cli.common import data_dir, relay_config
from vttrelay.cli.serve_settings import command_options, resolve


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def _serve_options(argv: list[str], environ: dict[str, str]) -> str:
    return command_options(resolve(_parse("serve", *argv), environ))


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "relay.toml"
    path.write_text(text)
    return path


def test_a_command_reads_the_file_and_environment_as_serve_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(
        tmp_path,
        f'data-dir = "{tmp_path / "from-file"}"\npublic-url = "https://vtt.example.org/vtt/"\n'
        'port = 4100\nbase-path = "/vtt"\n',
    )
    for name in ("VTTRELAY_DATA_DIR", "VTTRELAY_DATABASE_URL", "VTTRELAY_CONFIG", "VTTRELAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    args = _parse("keys", "list", "--config", str(path))
    config = relay_config(args)
    assert data_dir(args) == tmp_path / "from-file" == config.data_dir
    assert (config.port, config.base_path) == (4100, "/vtt")
    assert config.accounts.public_url == "https://vtt.example.org/vtt"  # checked as serve does

    # the environment beats the file, a flag beats the environment ($VTTRELAY_CONFIG too)
    monkeypatch.setenv("VTTRELAY_CONFIG", str(path))
    monkeypatch.setenv("VTTRELAY_DATA_DIR", str(tmp_path / "from-env"))
    assert data_dir(_parse("tokens", "list")) == tmp_path / "from-env"
    flagged = _parse("pair", "requests", "--data-dir", str(tmp_path / "from-flag"))
    assert data_dir(flagged) == tmp_path / "from-flag"
    assert relay_config(flagged).port == 4100  # the rest still from the file
    monkeypatch.setenv("VTTRELAY_DATABASE_URL", "postgresql://u:p@db:5432/relay")
    assert relay_config(_parse("backup", "out")).database == "postgresql://u:p@db:5432/relay"


def test_a_bad_setting_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VTTRELAY_CONFIG", raising=False)
    path = _file(tmp_path, "prot = 4100\n")
    assert main(["keys", "list", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"vttrelay keys: {path}: unknown setting 'prot' (did you mean 'port'?)\n"
    )
    monkeypatch.setenv("VTTRELAY_PORT", "many")
    assert main(["dashboard-link", "--data-dir", str(tmp_path / "d")]) == 2
    assert (
        capsys.readouterr().err
        == "vttrelay dashboard-link: VTTRELAY_PORT: not an integer: 'many'\n"
    )
    assert not (tmp_path / "d").exists()


def test_dashboard_link_takes_the_url_the_settings_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("VTTRELAY_CONFIG", "VTTRELAY_PUBLIC_URL", "VTTRELAY_BASE_PATH", "VTTRELAY_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VTTRELAY_DATA_DIR", str(tmp_path / "data"))

    said: list[str] = []

    def link(*argv: str) -> str:
        assert main(["dashboard-link", *argv]) == 0
        out, err = capsys.readouterr()
        said.append(err)
        return out.strip().split("?token=")[0]

    monkeypatch.setenv("VTTRELAY_PORT", "4200")
    assert link() == "http://127.0.0.1:4200/dashboard/signin"
    monkeypatch.setenv("VTTRELAY_HOST", "0.0.0.0")  # every address: reached on 127.0.0.1
    assert link() == "http://127.0.0.1:4200/dashboard/signin"
    assert "proxy" not in said[-1]
    monkeypatch.setenv("VTTRELAY_BASE_PATH", "vtt")  # a path, to open on the proxy's origin
    assert link() == "/vtt/dashboard/signin"
    assert "open it on your proxy's origin" in said[-1]
    monkeypatch.setenv("VTTRELAY_PUBLIC_URL", "https://vtt.example.org/vtt")
    assert link() == "https://vtt.example.org/vtt/dashboard/signin"
    assert link("--url", "http://h:1/") == "http://h:1/dashboard/signin"  # --url wins

    monkeypatch.delenv("VTTRELAY_PUBLIC_URL")
    monkeypatch.delenv("VTTRELAY_BASE_PATH")
    monkeypatch.setenv("VTTRELAY_PORT", "0")  # a free port: not known here
    assert main(["dashboard-link"]) == 2
    assert "give --url" in capsys.readouterr().err


def test_command_options_name_what_a_clean_shell_lacks(tmp_path: Path) -> None:
    assert _serve_options([], {}) == ""
    assert _serve_options(["--data-dir", "data"], {}) == ""  # the default
    assert _serve_options(["--data-dir", "my data"], {}) == " --data-dir 'my data'"
    assert _serve_options([], {"VTTRELAY_DATA_DIR": "/srv/v"}) == " --data-dir /srv/v"

    path = _file(tmp_path, 'data-dir = "/var/lib/vttrelay"\nport = 4300\n')
    assert _serve_options(["--config", str(path)], {}) == f" --config {path}"
    assert _serve_options([], {"VTTRELAY_CONFIG": str(path)}) == f" --config {path}"
    assert (
        _serve_options(["--config", str(path), "--data-dir", "/srv/v"], {})
        == f" --config {path} --data-dir /srv/v"
    )
    # a database URL is not repeated (it may hold a password); one from the file needs nothing
    env = {"VTTRELAY_DATABASE_URL": "postgresql://u:secret@db/relay"}
    assert _serve_options([], env) == " --database ..."
    with_db = _file(tmp_path, 'database = "postgresql://u:secret@db/relay"\n')
    assert _serve_options(["--config", str(with_db)], env) == f" --config {with_db}"
