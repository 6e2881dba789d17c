"""`vttrelay serve`'s settings from their four sources, by the rows of `serve_options.py`.

A setting comes from its flag, else its environment variable, else the TOML file of `--config`
(or `$VTTRELAY_CONFIG`), else its default. Every value is checked the same way whatever its
source; a bad one, an unknown key of the file or a file that cannot be read is a
`SettingsError` whose one line names the setting and where it came from, raised before anything
listens. `render` is `--print-config`: the effective settings as a TOML file would hold them,
each with its source, secrets masked. `serve_config` makes the relay's `RelayConfig` of them:
`vttrelay serve` runs that one, and every other command that reads the relay's data
(`cli/common.py`) resolves the same table from its common options and uses the same
`RelayConfig`, so that both find one store, one data dir and one URL. `command_options` is what
such a command needs to be given to find what this `serve` uses (printed in serve's hints).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from vttrelay.cli.serve_options import BY_NAME, SERVE_OPTIONS, ServeOption, Value
from vttrelay.relay.accounts.settings import SmtpSettings
from vttrelay.relay.config import RelayConfig

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
MASK = "********"


class SettingsError(Exception):
    """A setting that cannot be used; the message is one line naming it."""


@dataclass(frozen=True)
class Setting:
    """A setting's effective value and where it came from: "flag", "env VTTRELAY_X",
    "file PATH" or "default"."""

    option: ServeOption
    value: Value
    source: str


def _shown_default(option: ServeOption) -> str:
    if option.default_text:
        return option.default_text
    value = option.default_value
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def add_arguments(parser: argparse.ArgumentParser, options: Iterable[ServeOption]) -> None:
    """The options' flags (those with one). Every default is None, so that a flag not given
    leaves the setting to the environment, the file or the default; values are checked later
    (`resolve`), as those of the other sources."""
    for option in options:
        if not option.flag:
            continue
        help = f"{option.help} (default {_shown_default(option)}; ${option.env_name})"
        help = help.replace("%", "%%")
        if option.kind == "flag":
            parser.add_argument(f"--{option.name}", action="store_true", default=None, help=help)
            continue
        metavar = option.metavar
        if option.kind == "choice" and metavar is None:
            metavar = "{" + ",".join(option.choices) + "}"
        action = "append" if option.kind == "list" else "store"
        parser.add_argument(
            f"--{option.name}", action=action, default=None, metavar=metavar, help=help
        )


def _number(option: ServeOption, value: object) -> Value:
    if option.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"not an integer: {value!r}")
        number: int | float = value
    else:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"not a number: {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"not a number: {value!r}")
        number = float(value)
    if option.minimum is not None and number < option.minimum:
        raise ValueError(f"{number} is below {option.minimum:g}")
    if option.maximum is not None and number > option.maximum:
        raise ValueError(f"{number} is above {option.maximum:g}")
    return number


def checked(option: ServeOption, value: object) -> Value:
    """`value` (a TOML value, or what `from_text` made of a text) as the option takes it;
    ValueError saying why not."""
    result: Value
    if option.kind in ("int", "float"):
        result = _number(option, value)
    elif option.kind == "flag":
        if not isinstance(value, bool):
            raise ValueError(f"not true or false: {value!r}")
        result = value
    elif option.kind == "list":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"not a list of texts: {value!r}")
        result = tuple(t.strip() for item in items for t in item.split(",") if t.strip())
    else:
        if not isinstance(value, str):
            raise ValueError(f"not a text: {value!r}")
        result = value
    if option.check is not None:
        result = option.check(result)
    if option.choices and result not in option.choices:
        raise ValueError(f"{result!r} is not one of {', '.join(option.choices)}")
    return result


def from_text(option: ServeOption, text: str) -> object:
    """A text (an environment variable, a flag's word) as the value it stands for (unchecked)."""
    if option.kind == "int":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"not an integer: {text!r}") from None
    if option.kind == "float":
        try:
            return float(text.strip())
        except ValueError:
            raise ValueError(f"not a number: {text!r}") from None
    if option.kind == "flag":
        word = text.strip().lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise ValueError(f"not one of {'/'.join(TRUE_WORDS)} or {'/'.join(FALSE_WORDS)}: {text!r}")
    return text


def read_file(path: str) -> dict[str, object]:
    """The TOML file's settings by name; SettingsError for a file that cannot be read or parsed,
    a key that is no setting, or a table."""
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
    except OSError as bad:
        raise SettingsError(f"--config {path}: cannot be read: {bad.strerror or bad}") from None
    except tomllib.TOMLDecodeError as bad:
        raise SettingsError(f"--config {path}: not TOML: {bad}") from None
    for key, value in data.items():
        option = BY_NAME.get(key)
        if option is None or not option.in_file:
            known = [o.name for o in SERVE_OPTIONS if o.in_file]
            near = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise SettingsError(f"{path}: unknown setting {key!r}{hint}")
        if isinstance(value, dict):
            raise SettingsError(f"{path}: {key}: a value, not a table")
    return data


def resolve(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Setting]:
    """Every setting by name: flag > environment > file > default, each value checked."""
    config_flag = getattr(args, "config", None)  # a command without the flag: None
    config_env = environ.get(BY_NAME["config"].env_name, "")
    config_path = config_flag or config_env
    in_file = read_file(config_path) if config_path else {}
    settings: dict[str, Setting] = {}
    for option in SERVE_OPTIONS:
        given = getattr(args, option.dest, None) if option.flag else None
        env_text = environ.get(option.env_name, "")
        try:
            if given is not None:
                where, source = f"--{option.name}", "flag"
                raw = given if option.kind in ("flag", "list") else from_text(option, given)
            elif env_text:
                where, source = option.env_name, f"env {option.env_name}"
                raw = from_text(option, env_text)
            elif option.name in in_file:
                where = f"{config_path}: {option.name}"
                source = f"file {config_path}"
                raw = in_file[option.name]
            else:
                settings[option.name] = Setting(option, option.default_value, "default")
                continue
            settings[option.name] = Setting(option, checked(option, raw), source)
        except ValueError as bad:
            raise SettingsError(f"{where}: {bad}") from None
    return settings


def masked(setting: Setting) -> Value:
    """The value `--print-config` shows: a secret's is masked (a URL keeps all but its
    password)."""
    value = setting.value
    if not setting.option.secret or not value:
        return value
    text = str(value)
    parts = urlsplit(text)
    if parts.scheme and parts.netloc:
        if parts.password is None:
            return text
        userinfo = f"{parts.username or ''}:{MASK}"
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))
    return MASK


def _toml(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def render(settings: Mapping[str, Setting]) -> str:
    """`--print-config`: one line per setting, as a TOML file would hold it, with its source
    (a setting without a value, and --config itself, as a comment)."""
    lines = ["# vttrelay serve: effective settings (flag > environment > file > default)"]
    for setting in settings.values():
        name, shown = setting.option.name, masked(setting)
        if shown is None:
            meaning = _shown_default(setting.option)
            lines.append(f"# {name}: not set ({meaning})  # {setting.source}")
        elif not setting.option.in_file:
            lines.append(f"# {name} = {_toml(shown)}  # {setting.source}")
        else:
            lines.append(f"{name} = {_toml(shown)}  # {setting.source}")
    return "\n".join(lines)


def serve_config(settings: Mapping[str, Setting]) -> RelayConfig:
    """The relay's settings from the resolved settings: each row's value goes to its `field`
    (serve_options.py); the mail settings become an SmtpSettings when smtp-host is set."""
    config = RelayConfig(data_dir=Path(str(settings["data-dir"].value)))
    smtp: dict[str, Any] = {}
    for name, setting in settings.items():
        field, value = setting.option.field, setting.value
        if not field or name == "data-dir":
            continue
        if field.startswith("smtp."):
            smtp[field.removeprefix("smtp.")] = value
        elif field.startswith("accounts."):
            setattr(config.accounts, field.removeprefix("accounts."), value)
        else:
            setattr(config, field, value)
    if smtp["host"]:
        config.accounts.smtp = SmtpSettings(**smtp)
    config.accounts.credentials_key = config.accounts.credentials_key or None
    config.redis_url = config.redis_url or None
    config.sessions_enabled = not settings["no-sessions"].value
    if config.session_idle_timeout > 0:  # swept often enough to end a session near its time
        config.session_sweep_interval = min(30.0, max(0.5, config.session_idle_timeout / 4))
    return config


def command_options(settings: Mapping[str, Setting]) -> str:
    """The options (" --config FILE --data-dir DIR ...", or "") with which another `vttrelay`
    command, run in a shell without this process's environment, resolves the data dir and store
    these settings name: `--config` when a file was read, `--data-dir` when the file and the
    defaults give another one, `--database ...` when the file does not give the one in use (its
    URL is not repeated: it may hold a password)."""
    path = settings["config"].value
    words: list[str] = ["--config", str(path)] if path else []
    alone = resolve(argparse.Namespace(config=path), {})  # what the file and defaults give
    data_dir = Path(str(settings["data-dir"].value))
    if Path(str(alone["data-dir"].value)).resolve() != data_dir.resolve():
        words += ["--data-dir", str(data_dir)]
    database = settings["database"].value
    tail = " --database ..." if database and alone["database"].value != database else ""
    return "".join(f" {shlex.quote(w)}" for w in words) + tail
