"""What the `vttrelay` commands share: the common options (`--config`, `--data-dir`,
`--database`, `--log-level`), the relay settings and store they give (resolved from serve's
one table as `vttrelay serve` resolves them: flag > environment > file > default), argument
types, and output helpers (results a script may capture on stdout, everything else on stderr,
tables)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from vttrelay.cli.serve_options import COMMON_OPTIONS
from vttrelay.cli.serve_settings import (
    Setting,
    SettingsError,
    add_arguments,
    resolve,
    serve_config,
)
from vttrelay.relay.accounts.expiry import parse_expiry
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import RelayError
from vttrelay.relay.routes import ALL_SCOPES, SCOPE_PRESETS, ScopePreset, scope_preset
from vttrelay.relay.store import RelayStore

T = TypeVar("T")


def common_options() -> argparse.ArgumentParser:
    """The options every command that reads the relay's data takes (a parent parser); a
    command parsed with them has `args.relay_settings` set (see `settings`)."""
    common = argparse.ArgumentParser(add_help=False)
    add_arguments(common, COMMON_OPTIONS)
    common.set_defaults(relay_settings=True)
    return common


def sub_common_options() -> argparse.ArgumentParser:
    """The common options of a subcommand whose command takes them itself: they must not reset
    what was given before the subcommand's name."""
    sub_common = argparse.ArgumentParser(add_help=False)
    for option in COMMON_OPTIONS:
        sub_common.add_argument(
            f"--{option.name}", default=argparse.SUPPRESS, help="as for the command"
        )
    return sub_common


def settings(args: argparse.Namespace) -> dict[str, Setting]:
    """Every setting of `vttrelay serve`'s table as that command resolves it (its flags are the
    common options; then `VTTRELAY_*`, then the `--config` file, then the default), resolved
    once per run; SettingsError (one line) for a bad value, file or key."""
    resolved: dict[str, Setting] | None = getattr(args, "resolved_settings", None)
    if resolved is None:
        given = {o.dest: getattr(args, o.dest, None) for o in COMMON_OPTIONS}
        resolved = resolve(argparse.Namespace(**given), os.environ)
        args.resolved_settings = resolved
    return resolved


def expiry(text: str) -> float:
    """`--expires`: `30d`, `12h`, `15m` from now or an ISO date/time (`accounts.expiry`)."""
    try:
        return parse_expiry(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def scope(text: str) -> str:
    """`--scope`: one of the relay's scopes."""
    if text not in ALL_SCOPES:
        raise argparse.ArgumentTypeError(
            f"unknown scope {text!r}; known scopes: {', '.join(ALL_SCOPES)}"
        )
    return text


def preset(text: str) -> ScopePreset:
    """`--preset`: one of the named scope sets (`routes.SCOPE_PRESETS`)."""
    found = scope_preset(text)
    if found is None:
        known = "; ".join(f"{p.name} ({p.help})" for p in SCOPE_PRESETS)
        raise argparse.ArgumentTypeError(f"unknown preset {text!r}; presets: {known}")
    return found


def chosen_scopes(
    scopes: Sequence[str] | None, preset: ScopePreset | None, all_scopes: bool
) -> tuple[str, ...]:
    """The scopes of `--preset` and `--all-scopes`, then those of `--scope` in the order given,
    each once (empty when none of them was given)."""
    given = (*(preset.scopes if preset else ()), *(ALL_SCOPES * all_scopes), *(scopes or ()))
    return tuple(dict.fromkeys(given))


def data_dir(args: argparse.Namespace) -> Path:
    """The relay's data dir, as `vttrelay serve` with these options would use it."""
    return Path(str(settings(args)["data-dir"].value))


def relay_config(args: argparse.Namespace) -> RelayConfig:
    """The relay's settings (data dir, database, URL, ...) as `vttrelay serve` with these
    options would run with them."""
    return serve_config(settings(args))


def link_base(args: argparse.Namespace) -> str:
    """The base URL a printed link starts with: `--url`, else the one a `vttrelay serve` with
    these settings links to (`RelayConfig.link_base`: public-url, else base-path, else its host
    and port); SettingsError when that would be a port not known here (port 0)."""
    if args.url:
        return str(args.url)
    config = relay_config(args)
    base = config.link_base()
    if config.port == 0 and base == config.local_base():
        raise SettingsError(
            "the relay listens on a free port (port 0): give --url (or set public-url)"
        )
    if base.startswith("/"):
        err(f"The link is a path ({base}): open it on your proxy's origin (or set public-url).")
    return base


def open_store(args: argparse.Namespace) -> RelayStore:
    return RelayStore(relay_config(args).store_target)


def err(*parts: Any) -> None:
    print(*parts, file=sys.stderr)


def iso(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def decided(code: str, decide: Callable[[], T]) -> T | None:
    """Run one approve/refuse call of a request; on a refusal print its message with the
    request's code and return None (the command then exits 1)."""
    try:
        return decide()
    except RelayError as refused:
        err(f"{refused.message} ({code}).")
        return None


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], empty: str) -> None:
    """Print the rows under their header as left-aligned columns (the last column is not
    padded), or `empty` on stderr when there are no rows."""
    if not rows:
        err(empty)
        return
    lines = [header, *rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(header) - 1)]
    for row in lines:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
