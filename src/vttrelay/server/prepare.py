"""What `vttrelay serve` does once it has its port, and what it prints then.

`prepare` makes the demo key on the first start of a data dir (and only then: later starts
revoke nothing and mint nothing an operator must find again), reserves the embedded world's
client id for a fresh connection token and, on that first start, issues the operator's one-time
dashboard sign-in token; `announce_listening` prints the "listening" lines (where, the key or
where to find it, a ready `curl` line, the sign-in link or how to get one) and writes the
ready file (`ready.py`; `prepare` removes one left by an earlier run).

The demo key (the "gm" scope preset: every README recipe runs with it) is printed once, on the
first start, and written once to `demo-key` in the data dir, readable by its owner only: a later
start, a script or the README's recipes read it there (`$(cat data/demo-key)`), and nothing
secret goes to stdout or the logs again. The data dir already holds what a reader of that file
could use instead (the store, `credentials.key`), so the file adds no new way in.
"""

from __future__ import annotations

import logging
import os
import shlex
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from vttrelay import __version__
from vttrelay.dashboard.sessions import issue_signin_token
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.routes import GM_SCOPES
from vttrelay.relay.store import DEFAULT_ACCOUNT, RelayStore
from vttrelay.server.ready import clear_ready, ready_info, write_ready

log = logging.getLogger("vttrelay")

SERVE_KEY_SETTING = "serve.key_id"  # the demo key's id ("" while it is being made)
DEMO_KEY_FILE = "demo-key"
EMBEDDED_TOKEN_NAME = "embedded world"
EMBEDDED_CLIENT_ID = "vttrelay-demo"
SERVE_SCOPES = GM_SCOPES  # the demo key: the "gm" preset, which runs every README recipe


def serve_scope(config: RelayConfig) -> str:
    """What tells this `serve` apart from the others on its store: "" for its own data dir's
    file; on a `--database` several instances share, " @host:port", so that each instance has
    its own demo key and embedded-world token."""
    return f" @{socket.gethostname()}:{config.port}" if config.database else ""


def demo_key_path(config: RelayConfig) -> Path:
    """Where the demo key is written: `demo-key` in the data dir (`demo-key-PORT` for an
    instance on a shared `--database`)."""
    suffix = f"-{config.port}" if config.database else ""
    return Path(config.data_dir) / (DEMO_KEY_FILE + suffix)


def _write_owner_only(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        os.fchmod(out.fileno(), 0o600)  # an older file keeps its mode otherwise
        out.write(text + "\n")


def make_demo_key(store: RelayStore, config: RelayConfig) -> str | None:
    """The demo key, made on the first start of this data dir (or instance) only: its secret
    then (also written to `demo_key_path`), None on every later start. Nothing is revoked."""
    setting = SERVE_KEY_SETTING + serve_scope(config)
    if not store.claim_setting(setting, ""):  # an earlier start made it (or is making it right now)
        return None
    key_id, secret = store.create_key(
        DEFAULT_ACCOUNT, SERVE_SCOPES, name="serve" + serve_scope(config)
    )
    store.set_setting(setting, key_id)
    path = demo_key_path(config)
    try:
        _write_owner_only(path, secret)
    except OSError as exc:
        log.warning("the demo key was not written to %s (%s); it is printed once", path, exc)
    return secret


def reserve_embedded_id(store: RelayStore, config: RelayConfig) -> str:
    """A fresh connection token for the embedded world (this instance's last one is revoked:
    only the world of this process used it, and `serve` calls this once it holds the port);
    its id becomes the only token that may connect as EMBEDDED_CLIENT_ID here
    (`RelayConfig.reserved_client_ids`)."""
    name = EMBEDDED_TOKEN_NAME + serve_scope(config)
    store.revoke_tokens_named(DEFAULT_ACCOUNT, name)
    token = store.create_connection_token(DEFAULT_ACCOUNT, EMBEDDED_CLIENT_ID, name=name)
    record = store.token_by_secret(token)
    assert record is not None
    config.reserved_client_ids[EMBEDDED_CLIENT_ID] = record.id
    return token


@dataclass(frozen=True)
class Prepared:
    """What `serve` does once it holds its port, before the embedded world connects: the demo
    key (its secret on the first start of the data dir, else None), the embedded world's
    connection token (None: no embedded world) and, on that first start only, the operator's
    one-time dashboard sign-in token it prints as a link."""

    api_key: str | None
    world_token: str | None
    signin_token: str | None
    key_file: Path  # where the demo key was written on the first start


def prepare(store: RelayStore, config: RelayConfig, with_world: bool) -> Prepared:
    """The demo key and a sign-in token on the first start, and, with the embedded world, its id
    reserved for a fresh token: no other token can take the id, not even while the world
    (re)connects. Sets `config.reserved_client_ids` (`vttrelay serve --workers` passes it to
    every worker). Called once the port is bound, so that a second `serve` on the same data dir
    that cannot bind it changes nothing."""
    clear_ready(config.ready_file)  # a file left by an earlier run: not this relay's
    token = reserve_embedded_id(store, config) if with_world else None
    if token is None:
        config.reserved_client_ids[EMBEDDED_CLIENT_ID] = None
    key = make_demo_key(store, config)
    signin = issue_signin_token(store, None, config.signin_token_ttl) if key else None
    return Prepared(key, token, signin, demo_key_path(config))


def dashboard_link(store: RelayStore, url: str, account: str | None, ttl: float) -> str:
    """A one-time dashboard sign-in link: `url` (the relay's base URL as a browser reaches it,
    path prefix included) with a new sign-in token of the operator (`account` None) or of one
    account's owner."""
    return signin_url(url, issue_signin_token(store, account, ttl))


def signin_url(url: str, token: str) -> str:
    """The dashboard sign-in link of `token` under `url` (a base URL, path prefix included)."""
    return f"{url.rstrip('/')}/dashboard/signin?token={token}"


def _read_key(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def announce_listening(
    base: str, prepared: Prepared, config: RelayConfig, *, with_world: bool, workers: int = 1
) -> None:
    """The lines `vttrelay serve` prints once it listens: where, the demo key (on the first
    start; later, where it is kept), a ready curl line and the operator's one-time dashboard
    sign-in link (first start; later, the command that prints one); then the ready file
    (`--ready-file`, with the demo key read back from its file on a later start)."""
    path = "/world-info" if with_world else "/clients"
    processes = f" ({workers} worker processes)" if workers > 1 else ""
    url = config.link_base(urlsplit(base).port)
    where = "Dashboard (through your proxy's origin)" if url.startswith("/") else "Dashboard"
    file = shlex.quote(str(prepared.key_file))
    lines = [f"vttrelay {__version__} listening on {base}{processes}"]
    if prepared.api_key is not None and prepared.signin_token is not None:
        lines += [
            f"API key: {prepared.api_key}",
            f'Try: curl -H "x-api-key: {prepared.api_key}" {base}{path}',
            f"{where}: {signin_url(url, prepared.signin_token)}",
            f"(First start of this data dir: the demo key, with the gm scopes, is kept in {file}, "
            "owner-only; later starts print neither it nor a sign-in link.)",
        ]
    elif prepared.key_file.exists():
        lines += [
            f"API key: the demo key is in {file} (made on the first start)",
            f'Try: curl -H "x-api-key: $(cat {file})" {base}{path}',
        ]
    else:
        lines += [
            "API key: printed by the first start; another: vttrelay keys create --preset gm"
            + config.command_options,
            f'Try: curl -H "x-api-key: $KEY" {base}{path}',
        ]
    if prepared.signin_token is None:
        lines.append(f"{where}: vttrelay dashboard-link --url {url}{config.command_options}")
    for line in lines:
        print(line, flush=True)
    if config.ready_file:
        client_id = EMBEDDED_CLIENT_ID if with_world else None
        port = urlsplit(base).port or config.port
        key = prepared.api_key or _read_key(prepared.key_file)
        write_ready(config.ready_file, ready_info(base, port, client_id, key, config.seed))
