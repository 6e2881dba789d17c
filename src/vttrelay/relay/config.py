"""The relay's settings: one dataclass, filled by the CLI or by tests.

Every interval is configurable so tests can use small values; the defaults are the reference
relay's (wire-protocol §2.4, §3.4, §7.5, §7.6).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from vttrelay.relay.accounts.settings import AccountSettings

DATA_DIR_ENV = "VTTRELAY_DATA_DIR"
REDIS_URL_ENV = "VTTRELAY_REDIS_URL"  # `vttrelay serve --redis`'s default
DATABASE_ENV = "VTTRELAY_DATABASE_URL"  # `--database`'s default
DB_FILE = "relay.db"


def new_instance_id() -> str:
    """A fresh id for a relay process: `relay-` and 8 hex digits."""
    return "relay-" + secrets.token_hex(4)


def default_data_dir() -> Path:
    """`$VTTRELAY_DATA_DIR`, else `./data`."""
    return Path(os.environ.get(DATA_DIR_ENV) or "data")


def normalize_base_path(text: str) -> str:
    """A path prefix as `RelayConfig.base_path` holds it: `""` or `/a/b` (one leading slash, no
    trailing one). Raises ValueError for a prefix with a scheme, query or unsafe characters."""
    parts = [p for p in text.strip().split("/") if p]
    for part in parts:
        if part in (".", "..") or not all(c.isalnum() or c in "-._~" for c in part):
            raise ValueError(f"invalid base path: {text!r}")
    return "".join("/" + p for p in parts)


@dataclass
class RelayConfig:
    """Everything the relay needs to run; `create_app(config)` reads nothing else."""

    host: str = "127.0.0.1"
    port: int = 3010
    data_dir: Path = field(default_factory=default_data_dir)
    # The relay store: a `postgresql://user:password@host:port/dbname` URL that every instance
    # shares, or a SQLite file's path; "" is `relay.db` in data_dir (store_target)
    database: str = ""
    # World WebSocket (/relay)
    auth_timeout: float = 10.0  # seconds to receive the auth frame
    ping_interval: float = 20.0  # WS ping frames to worlds
    pong_timeout: float | None = None  # drop a world after this long without a pong; 2x ping
    max_frame_bytes: int = 256 * 1024 * 1024  # largest world frame (a reply can be large)
    # Both WebSockets: bytes a socket may send before it has authenticated (the auth frame is
    # about 100 bytes); past it the socket is closed with 1009 (preauth.py)
    preauth_bytes: int = 64 * 1024
    client_frame_bytes: int = 16 * 1024 * 1024  # largest /ws/api frame (a request, 4x a param)
    close_timeout: float = 2.0  # how long to wait for a close handshake
    # client id -> the only connection-token id that may connect as it (None: no token may);
    # `vttrelay serve` reserves the embedded world's id for the token it mints at start-up
    reserved_client_ids: dict[str, str | None] = field(default_factory=dict)
    # Connections (listener.py): the first request's head must arrive within header_timeout;
    # a connection with no request in progress is closed after idle_timeout (keep-alive); past
    # max_connections open ones, new connections get 503 (serve keeps it below the fd limit)
    header_timeout: float = 10.0
    idle_timeout: float = 30.0
    body_timeout: float = 60.0  # seconds to receive a request's whole body, else 408 (app.py)
    max_connections: int = 10_000
    # REST
    timeout_override: float | None = None  # replaces every route timeout (tests)
    rate_per_minute: int = 300  # per key, token bucket; 0 disables
    max_body_mb: float = 250.0
    pair_rate_limit: int = 10  # POST /auth/pair per IP per 15 minutes; 0 disables
    unpair_rate_limit: int = 30  # POST /api/self-unpair per IP per 15 minutes; 0 disables
    # Pair and key requests (endpoints-beyond-seed §12): requests per IP per 15 minutes shared by
    # POST /auth/pair-request, POST /auth/key-request and the exchange
    key_request_rate_limit: int = 20  # 0 disables
    # Unknown request codes one IP may look up per 15 minutes (the two status polls and the
    # /pair and /approve pages); looking up a code that exists costs nothing. 0 disables
    code_miss_limit: int = 10
    # unknown API keys one IP may try per minute, over all instances; 0 disables
    unknown_key_rate_limit: int = 60
    # /mcp sessions: open at once over all keys, open at once per key, opened per key per
    # minute, open at once per account
    mcp_max_sessions: int = 1000
    mcp_sessions_per_key: int = 10
    mcp_sessions_per_minute: int = 10
    mcp_sessions_per_account: int = 50  # over all the keys of one account
    # ... and all callers together (many addresses are not many budgets); when spent, code
    # lookups are refused for the rest of the window. 0 disables
    code_miss_global_limit: int = 200
    pair_request_ttl: float = 600.0  # seconds a pair request waits for a decision
    key_request_ttl: float = 600.0  # seconds a key request waits for a decision
    probe_rate_limit: int = 60  # GET /api/clients/{id}/active per IP per minute; 0 disables
    # Revocations made elsewhere (another instance, the CLI) take effect here within these:
    token_check_interval: float = 5.0  # re-check the live worlds' connection tokens
    key_cache_ttl: float = 5.0  # re-read the known API keys; forget unknown secrets
    usage_flush_interval: float = 5.0  # seconds between usage-counter flushes
    # The activity log (activity.py): API calls kept this long, at most this many rows, written
    # every activity_flush_interval seconds (0 days: not recorded)
    activity_days: float = 14.0
    activity_max_rows: int = 200_000
    activity_flush_interval: float = 1.0
    # Logs (accesslog.py, logformat.py): "text" or "json" lines on stderr; "off": no access lines
    log_format: str = "text"
    access_log: str = "on"
    # Event streams (used by events/settings.py)
    keepalive_interval: float = 15.0
    event_buffer_size: int = 1000
    max_streams_per_channel: int = 10
    subscriber_queue_size: int = 1000
    subscription_linger: float = 30.0  # seconds a channel stays on after its last subscriber
    # Scale-out (relay/backends): the Redis URL the instances share (None: this process alone,
    # everything in-process); an instance that has not beaten for heartbeat_ttl seconds is dead
    # (its worlds are released), and each instance beats and looks for dead ones every
    # heartbeat_check_interval seconds
    redis_url: str | None = None
    heartbeat_ttl: float = 3.0
    heartbeat_check_interval: float = 0.25
    # Web dashboard (src/vttrelay/dashboard)
    # The path prefix a reverse proxy serves the relay under (e.g. "/vtt"; "" at the root): every
    # link the relay writes (dashboard pages, pairUrl, approvalUrl, relayUrl) starts with it
    base_path: str = ""
    # Reverse proxies (addresses or networks, forwarded.py) whose X-Forwarded-For/-Proto/-Host
    # (or Forwarded) name the client; nobody else's are believed. Empty: no proxy
    trusted_proxies: tuple[str, ...] = ()
    # TLS in the relay itself (tls.py): PEM certificate chain and private key ("" : plain HTTP);
    # `vttrelay serve` reloads them on SIGHUP
    tls_cert: str = ""
    tls_key: str = ""
    signin_rate_limit: int = 10  # dashboard sign-in attempts per IP per 15 minutes; 0 disables
    signin_token_ttl: float = 3600.0  # seconds a sign-in link printed by the CLI stays valid
    session_ttl: float = 12 * 3600.0  # seconds a dashboard session lasts
    # Operations: also serve GET /metrics alone on this port (None: not; 0: a free one)
    metrics_port: int | None = None
    # Accounts: sign-up policy, mail, per-IP limits of the /auth routes (relay/accounts)
    accounts: AccountSettings = field(default_factory=AccountSettings)
    # Sessions (relay/sessions_api.py, the `sessions` package): on or off (off: the session
    # routes answer as the reference's with ALLOW_HEADLESS=false), the Foundry hosts a browser
    # session may open (none by default), sessions per account, seconds a session may stay
    # without a forwarded request, seconds between sweeps for idle sessions; whether a request to
    # an offline stored world of the caller's account starts it (off by default)
    sessions_enabled: bool = True
    auto_start_worlds: bool = False
    headless_allow: tuple[str, ...] = ()
    max_sessions: int = 3
    session_idle_timeout: float = 600.0
    session_sweep_interval: float = 30.0
    # `vttrelay serve` itself: the embedded world's seed (`--seed`: its rolls, ids and clock
    # reproducible, and the relay's request ids too; None: random) and the file it writes once
    # it listens (`--ready-file`: JSON with url, port, pid, version, clientId, apiKey; "-" is
    # one JSON line on stdout; "": none)
    seed: int | None = None
    ready_file: str = ""
    # What another `vttrelay` command (dashboard-link, keys) is given to find this relay's data:
    # " --config FILE", " --data-dir DIR", ... ("": the defaults); serve's hints print it (the
    # CLI sets it from where the settings came from)
    command_options: str = ""
    # Identity
    instance_id: str = field(default_factory=new_instance_id)

    @property
    def scheme(self) -> str:
        """`https` when the relay serves TLS itself, else `http`."""
        return "https" if self.tls_cert else "http"

    def local_base(self, port: int | None = None) -> str:
        """The relay's base URL as this machine reaches it, on `port` (default: `self.port`):
        a relay listening on every address is reached on 127.0.0.1."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"{self.scheme}://{host}:{self.port if port is None else port}"

    def link_base(self, port: int | None = None) -> str:
        """The base URL the links this relay's dashboard and CLI print start with: the
        configured public URL, else (behind a proxy that strips it) the path prefix alone, to be
        opened on the proxy's origin, else `local_base(port)`."""
        return self.accounts.public_url or self.base_path or self.local_base(port)

    @property
    def db_path(self) -> Path:
        """The relay's SQLite database when no other `database` is set."""
        return Path(self.data_dir) / DB_FILE

    @property
    def store_target(self) -> str | Path:
        """What `RelayStore(...)` opens: the `database` URL or path, else `db_path`."""
        return self.database or self.db_path

    @property
    def effective_pong_timeout(self) -> float:
        """Seconds without a pong after which a world socket is dropped."""
        return self.pong_timeout if self.pong_timeout is not None else 2 * self.ping_interval

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)
