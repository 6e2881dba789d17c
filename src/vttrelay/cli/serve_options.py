"""`vttrelay serve`'s options as one table (data, not code).

Each row names a setting once: its name (the flag `--NAME`, the key `NAME` of the TOML file
given with `--config`, the environment variable `VTTRELAY_NAME` with `-` as `_`, unless the row
names another), its kind, its default, its help, where it goes in `RelayConfig` and whether it
is a secret (masked by `--print-config`). `serve_settings.py` builds the argparse options, reads
the environment and the file from these rows and resolves each setting (flag > environment >
file > default); `cli/serve.py` turns the result into a `RelayConfig`.

A row whose `field` is "" is read by `serve` itself (`--workers`, `--no-world`, ...). A default
of `FROM_FIELD` is the default of the `RelayConfig` (or `AccountSettings`, `SmtpSettings`) field.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from vttrelay.relay.accounts.credentials import VaultUnavailable, parse_key
from vttrelay.relay.accounts.settings import SIGNUP_POLICIES, AccountSettings, SmtpSettings
from vttrelay.relay.config import DATABASE_ENV, REDIS_URL_ENV, RelayConfig, normalize_base_path
from vttrelay.relay.forwarded import TrustedProxies

ENV_PREFIX: Final = "VTTRELAY_"

# A setting's value: what argparse, the environment and the file give once checked
Value = str | int | float | bool | tuple[str, ...] | None
# str: any text; int, float: numbers (within `minimum`..`maximum`); flag: on/off (a flag without
# a value on the command line); list: several texts (the flag repeated or comma-separated; a
# TOML array; comma-separated in the environment); choice: one of `choices`
Kind = Literal["str", "int", "float", "flag", "list", "choice"]


class _FromField:
    def __repr__(self) -> str:
        return "FROM_FIELD"


FROM_FIELD: Final = _FromField()


def _trusted_proxies(value: Value) -> Value:
    TrustedProxies.parse(value if isinstance(value, tuple) else ())
    return value


def _credentials_key(value: Value) -> Value:
    if value:
        try:
            parse_key(str(value))
        except VaultUnavailable as bad:
            raise ValueError(str(bad)) from None
    return value


def _base_path(value: Value) -> Value:
    return normalize_base_path(str(value))


def _strip_slash(value: Value) -> Value:
    return str(value).rstrip("/")


SEED_MAX: Final = 2**63 - 1


def _ready_path(value: Value) -> Value:
    path = str(value)
    if path and path != "-" and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise ValueError(f"no directory for the ready file {path!r}")
    return path


def _hosts(value: Value) -> Value:
    return tuple(h.strip() for h in value if h.strip()) if isinstance(value, tuple) else ()


@dataclass(frozen=True)
class ServeOption:
    """One setting of `vttrelay serve`."""

    name: str
    kind: Kind
    help: str
    default: Value | _FromField = FROM_FIELD
    # Where the value goes: a RelayConfig field, "accounts.<field>" (AccountSettings),
    # "smtp.<field>" (SmtpSettings, made when smtp-host is set), "" read by serve itself
    field: str = ""
    secret: bool = False  # masked by --print-config (a URL keeps all but its password)
    env: str = ""  # "" : VTTRELAY_ + NAME in capitals, `-` as `_`
    flag: bool = True  # False: environment and file only (a password is no command-line word)
    in_file: bool = True  # False: not a key of the file (--config itself)
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    check: Callable[[Value], Value] | None = None  # normalizes, or raises ValueError saying why
    default_text: str = ""  # what the default means, where the value alone says too little

    @property
    def env_name(self) -> str:
        return self.env or ENV_PREFIX + self.name.upper().replace("-", "_")

    @property
    def dest(self) -> str:
        """The argparse attribute."""
        return self.name.replace("-", "_")

    @property
    def default_value(self) -> Value:
        if not isinstance(self.default, _FromField):
            return self.default
        return field_default(self.field)


def field_default(path: str) -> Value:
    """The default of a RelayConfig field, or of an AccountSettings (`accounts.x`) or
    SmtpSettings (`smtp.x`) one."""
    owner: type = RelayConfig
    name = path
    if path.startswith("accounts."):
        owner, name = AccountSettings, path.removeprefix("accounts.")
    elif path.startswith("smtp."):
        owner, name = SmtpSettings, path.removeprefix("smtp.")
    for f in dataclasses.fields(owner):
        if f.name == name:
            made: object = f.default
            if made is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
                made = f.default_factory()
            if isinstance(made, list):
                made = tuple(made)
            if isinstance(made, Path):
                made = str(made)
            if made is None or isinstance(made, str | int | float | tuple):
                return made
            raise TypeError(f"{path!r}: a default a serve option cannot hold: {made!r}")
    raise KeyError(f"no field {path!r} for a serve option")


def _o(name: str, kind: Kind, help: str, **rest: object) -> ServeOption:
    return ServeOption(name, kind, help, **rest)  # type: ignore[arg-type]


# The options every command that reads the relay's data takes (`cli/common.py` builds them from
# these rows too): with them, `vttrelay keys`, `dashboard-link`, `backup`, ... find the store and
# URL a `vttrelay serve` given the same options (or environment, or file) uses
COMMON_OPTIONS: Final = (
    _o(
        "config",
        "str",
        "read settings from this TOML file, the one `vttrelay serve --config` reads (keys as "
        "serve's option names)",
        default=None,
        metavar="PATH",
        in_file=False,
        default_text="none",
    ),
    _o(
        "data-dir",
        "str",
        "where the relay keeps its database, the demo world and the demo key",
        default=str(Path("data")),
        field="data_dir",
    ),
    _o(
        "database",
        "str",
        "the relay's store: a postgresql://user:password@host:port/dbname URL that several "
        "relay instances share",
        field="database",
        env=DATABASE_ENV,
        secret=True,
        metavar="URL",
        default_text="relay.db in the data dir",
    ),
    _o(
        "log-level",
        "choice",
        "which log lines are written",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        check=lambda value: str(value).upper(),
    ),
)

SERVE_OPTIONS: Final = (
    *COMMON_OPTIONS,
    _o("host", "str", "the address to listen on", field="host"),
    _o(
        "port",
        "int",
        "the port to listen on (0: a free one)",
        field="port",
        minimum=0,
        maximum=65535,
    ),
    _o("no-world", "flag", "run the relay alone (no embedded demo world)", default=False),
    _o(
        "seed",
        "int",
        "make the embedded world reproducible: the same requests get the same replies (dice, "
        "ids, timestamps; and the request ids in one process)",
        field="seed",
        metavar="N",
        minimum=0,
        maximum=SEED_MAX,
        default_text="none: random",
    ),
    _o(
        "ready-file",
        "str",
        "once listening (the world connected), write JSON with url, port, pid, version, "
        "clientId, apiKey and seed to PATH atomically, removed at a clean stop ('-': one JSON "
        "line on stdout)",
        field="ready_file",
        metavar="PATH",
        check=_ready_path,
        default_text="none",
    ),
    _o(
        "no-sessions",
        "flag",
        "turn the session routes off (they answer as the reference's with headless off)",
        default=False,
    ),
    _o(
        "auto-start-worlds",
        "flag",
        "a request to an offline stored world of the caller's account (vttrelay world create) "
        "starts it, stopped again when idle",
        field="auto_start_worlds",
    ),
    _o(
        "headless-allow",
        "list",
        "Foundry hosts (host or host:port; repeat or comma-separate) browser sessions may open",
        field="headless_allow",
        metavar="HOSTS",
        check=_hosts,
        default_text="none",
    ),
    _o(
        "session-idle",
        "float",
        "end a session after this many seconds without a forwarded request (0: never)",
        field="session_idle_timeout",
        metavar="SECONDS",
        minimum=0,
    ),
    _o("rate", "int", "requests per minute per key (0: off)", field="rate_per_minute", minimum=0),
    _o(
        "activity-days",
        "float",
        "days the activity log keeps each API call (0: record none)",
        field="activity_days",
        minimum=0,
    ),
    _o(
        "activity-rows",
        "int",
        "API calls the activity log keeps at most (the oldest go first)",
        field="activity_max_rows",
        minimum=0,
    ),
    _o(
        "log-format",
        "choice",
        "the log lines on stderr: text, or one JSON object per line (access lines and the others)",
        field="log_format",
        choices=("text", "json"),
    ),
    _o(
        "access-log",
        "choice",
        "one access line per request (client address, key name, world, request id, status, "
        "bytes, time); off: none (the activity log still records API calls)",
        field="access_log",
        choices=("on", "off"),
    ),
    _o("max-body-mb", "float", "largest request body in MiB", field="max_body_mb", minimum=0),
    _o(
        "subscription-linger",
        "float",
        "seconds a world keeps sending a channel's events after its last subscriber leaves, so "
        "a reconnecting client misses nothing (0: stop at once)",
        field="subscription_linger",
        minimum=0,
    ),
    _o(
        "key-request-rate",
        "int",
        "pair/key requests and key exchanges per IP per 15 minutes (0: off)",
        field="key_request_rate_limit",
        minimum=0,
    ),
    _o(
        "code-miss-rate",
        "int",
        "unknown pair/key request codes an IP may look up per 15 minutes; polling a code that "
        "exists is free (0: off)",
        field="code_miss_limit",
        minimum=0,
    ),
    _o(
        "max-connections",
        "int",
        "open connections past which new ones get 503 (kept below the open-files limit)",
        field="max_connections",
        minimum=1,
    ),
    _o(
        "header-timeout",
        "float",
        "seconds a new connection has to send its first request's headers",
        field="header_timeout",
        minimum=0,
    ),
    _o(
        "idle-timeout",
        "float",
        "seconds a keep-alive connection may wait for its next request",
        field="idle_timeout",
        minimum=0,
    ),
    _o(
        "body-timeout",
        "float",
        "seconds a request's body may take to arrive, else 408",
        field="body_timeout",
        minimum=0,
    ),
    _o(
        "redis",
        "str",
        "share worlds with the other relay instances on this Redis (redis://host:port/db)",
        field="redis_url",
        env=REDIS_URL_ENV,
        secret=True,
        metavar="URL",
        default_text="none: this process alone",
    ),
    _o(
        "heartbeat-ttl",
        "float",
        "with --redis: seconds without a heartbeat after which an instance is dead and its "
        "worlds are released",
        field="heartbeat_ttl",
        minimum=0,
    ),
    _o(
        "base-path",
        "str",
        "the path prefix a reverse proxy serves the relay under, e.g. /vtt (the proxy strips "
        "it); links the relay writes (dashboard, pairUrl, relayUrl) start with it",
        field="base_path",
        check=_base_path,
        default_text="none",
    ),
    _o(
        "trusted-proxy",
        "list",
        "a reverse proxy (address or network, e.g. 127.0.0.1 or 10.0.0.0/8; repeat or "
        "comma-separate) whose X-Forwarded-For/-Proto/-Host (or Forwarded) name the client; "
        "nobody else's are believed",
        field="trusted_proxies",
        metavar="ADDRESS",
        check=_trusted_proxies,
        default_text="none",
    ),
    _o(
        "tls-cert",
        "str",
        "serve HTTPS and wss:// with this certificate chain (with --tls-key); both files are "
        "read again on SIGHUP, so a renewed certificate needs no restart",
        field="tls_cert",
        metavar="PEM",
        default_text="none: plain HTTP",
    ),
    _o(
        "tls-key",
        "str",
        "the private key of --tls-cert",
        field="tls_key",
        metavar="PEM",
        default_text="none",
    ),
    _o(
        "signin-rate",
        "int",
        "dashboard sign-in attempts per IP per 15 minutes (0: off)",
        field="signin_rate_limit",
        minimum=0,
    ),
    _o(
        "signup",
        "choice",
        "who may register over POST /auth/register: nobody (closed: `vttrelay accounts "
        "create`), holders of an invite code (invite), anyone (open)",
        field="accounts.signup",
        choices=SIGNUP_POLICIES,
    ),
    _o(
        "public-url",
        "str",
        "the relay's public base URL for links in mails",
        field="accounts.public_url",
        check=_strip_slash,
        default_text="as a request reached it",
    ),
    _o(
        "smtp-host",
        "str",
        "send verification and reset mail through this SMTP server",
        field="smtp.host",
        default="",
        default_text="none: no mail",
    ),
    _o("smtp-port", "int", "the SMTP server's port", field="smtp.port", minimum=1, maximum=65535),
    _o("smtp-user", "str", "SMTP login", field="smtp.username"),
    _o(
        "smtp-password",
        "str",
        "SMTP password (environment or file only)",
        field="smtp.password",
        secret=True,
        flag=False,
    ),
    _o("smtp-from", "str", "the sender of the relay's mail", field="smtp.sender"),
    _o(
        "smtp-tls",
        "choice",
        "starttls (port 587), tls (implicit, port 465) or none",
        field="smtp.tls",
        choices=("starttls", "tls", "none"),
    ),
    _o(
        "auth-rate",
        "int",
        "register/login/regenerate-key/resend per IP per 15 minutes (0: off)",
        field="accounts.auth_rate_limit",
        minimum=0,
    ),
    _o(
        "reset-rate",
        "int",
        "forgot/reset-password per IP per hour (0: off)",
        field="accounts.reset_rate_limit",
        minimum=0,
    ),
    _o(
        "account-rate",
        "int",
        "change-password/export/delete per IP per hour (0: off)",
        field="accounts.account_rate_limit",
        minimum=0,
    ),
    _o(
        "credentials-key",
        "str",
        "the key stored Foundry credentials are encrypted under: 64 hex digits or base64 of 32 "
        "bytes (environment or file only); every relay sharing a store needs the same",
        field="accounts.credentials_key",
        secret=True,
        flag=False,
        check=_credentials_key,
        default=None,
        default_text="the file credentials.key in the data dir, made on first use",
    ),
    _o(
        "workers",
        "int",
        "run N relay processes sharing the port (SO_REUSEPORT), one per core; needs --redis, "
        "through which they share worlds, events and limits",
        default=1,
        metavar="N",
        minimum=1,
    ),
    _o(
        "metrics-port",
        "int",
        "also serve GET /metrics alone on this port; with --workers N, worker i on PORT+i (0: "
        "a free port each, logged)",
        field="metrics_port",
        metavar="PORT",
        minimum=0,
        maximum=65535,
        default_text="not served",
    ),
)

BY_NAME: Final = {o.name: o for o in SERVE_OPTIONS}
