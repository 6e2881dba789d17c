"""What `vttrelay serve` does once before any relay process listens, and what it prints then.

`prepare` mints the key `serve` prints, reserves the embedded world's client id for a fresh
connection token and issues the operator's one-time dashboard sign-in token (and removes a ready
file left by an earlier run); `announce_listening` prints the "listening" lines (where, the key,
a ready `curl` line, the sign-in link) and writes the ready file (`ready.py`).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from vttrelay import __version__
from vttrelay.dashboard.sessions import issue_signin_token
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.relay.store import DEFAULT_ACCOUNT, RelayStore
from vttrelay.server.ready import clear_ready, ready_info, write_ready

SERVE_KEY_SETTING = "serve.key_id"
EMBEDDED_TOKEN_NAME = "embedded world"
EMBEDDED_CLIENT_ID = "vttrelay-demo"
# The demo key: the defaults plus what trying the demo world needs (rolls, effects, folders,
# macros, chat, scripts).
SERVE_SCOPES = (
    *DEFAULT_SCOPES,
    "chat:write",
    "execute-js",
    "roll:execute",
    "effects:write",
    "structure:write",
    "macro:execute",
)


def serve_scope(config: RelayConfig) -> str:
    """What tells this `serve` apart from the others on its store: "" for its own data dir's
    file; on a `--database` several instances share, " @host:port", so that one instance's
    start-up does not revoke the key and embedded-world token another one printed."""
    return f" @{socket.gethostname()}:{config.port}" if config.database else ""


def mint_serve_key(store: RelayStore, config: RelayConfig) -> str:
    """A fresh key for `serve` (SERVE_SCOPES); revokes the last one of this instance."""
    scope = serve_scope(config)
    previous = store.get_setting(SERVE_KEY_SETTING + scope)
    if previous:
        store.revoke_key(previous)
    key_id, secret = store.create_key(DEFAULT_ACCOUNT, SERVE_SCOPES, name="serve" + scope)
    store.set_setting(SERVE_KEY_SETTING + scope, key_id)
    return secret


def reserve_embedded_id(store: RelayStore, config: RelayConfig) -> str:
    """A fresh connection token for the embedded world (this instance's last one is revoked);
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
    """What `serve` does once, before any relay process listens: the API key it prints, the
    embedded world's connection token (None: no embedded world) and the operator's dashboard
    sign-in token it prints as a link."""

    api_key: str
    world_token: str | None
    signin_token: str  # the operator's one-time dashboard sign-in token


def prepare(store: RelayStore, config: RelayConfig, with_world: bool) -> Prepared:
    """Mint the serve key and a dashboard sign-in token and, with the embedded world, reserve its
    id for a fresh token, before the relay listens: no other token can take the id, not even
    while the world (re)connects. Sets `config.reserved_client_ids` (`vttrelay serve --workers`
    passes it to every worker)."""
    clear_ready(config.ready_file)  # a file left by an earlier run: not this relay's
    token = reserve_embedded_id(store, config) if with_world else None
    if token is None:
        config.reserved_client_ids[EMBEDDED_CLIENT_ID] = None
    signin = issue_signin_token(store, None, config.signin_token_ttl)
    return Prepared(mint_serve_key(store, config), token, signin)


def dashboard_link(store: RelayStore, url: str, account: str | None, ttl: float) -> str:
    """A one-time dashboard sign-in link: `url` (the relay's base URL as a browser reaches it,
    path prefix included) with a new sign-in token of the operator (`account` None) or of one
    account's owner."""
    return signin_url(url, issue_signin_token(store, account, ttl))


def signin_url(url: str, token: str) -> str:
    """The dashboard sign-in link of `token` under `url` (a base URL, path prefix included)."""
    return f"{url.rstrip('/')}/dashboard/signin?token={token}"


def announce_listening(
    base: str, prepared: Prepared, config: RelayConfig, *, with_world: bool, workers: int = 1
) -> None:
    """The lines `vttrelay serve` prints once it listens: where, the key, a ready curl line and
    the operator's one-time dashboard sign-in link; then the ready file (`--ready-file`)."""
    path = "/world-info" if with_world else "/clients"
    processes = f" ({workers} worker processes)" if workers > 1 else ""
    key = prepared.api_key
    print(f"vttrelay {__version__} listening on {base}{processes}", flush=True)
    print(f"API key: {key}", flush=True)
    print(f'Try: curl -H "x-api-key: {key}" {base}{path}', flush=True)
    if config.base_path:  # reached through a reverse proxy that strips the prefix
        link = signin_url(config.base_path, prepared.signin_token)
        print(f"Dashboard (through your proxy's origin): {link}", flush=True)
    else:
        print(f"Dashboard: {signin_url(base, prepared.signin_token)}", flush=True)
    if config.ready_file:
        client_id = EMBEDDED_CLIENT_ID if with_world else None
        port = urlsplit(base).port or config.port
        info = ready_info(base, port, client_id, prepared.api_key, config.seed)
        write_ready(config.ready_file, info)
