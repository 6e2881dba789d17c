"""The operator's account settings: sign-up policy, mail, per-IP limits, lifetimes.

One value (`AccountSettings`) that `RelayConfig.accounts` holds; `vttrelay serve` fills it from
its options (`--signup`, `--smtp-*`), tests from their arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

SignupPolicy = Literal["closed", "invite", "open"]
SIGNUP_POLICIES: Final = ("closed", "invite", "open")
CREDENTIALS_KEY_ENV: Final = "VTTRELAY_CREDENTIALS_KEY"  # 64 hex or base64 of 32 bytes
DAY: Final = 86400.0


@dataclass(frozen=True)
class SmtpSettings:
    """Where mail goes out. `tls`: "starttls" (upgrade a plain connection; port 587), "tls"
    (implicit TLS; port 465) or "none" (plain; a relay on the same host)."""

    host: str
    port: int = 587
    username: str = ""
    password: str = ""
    sender: str = "vttrelay <no-reply@localhost>"
    tls: Literal["starttls", "tls", "none"] = "starttls"
    timeout: float = 10.0


@dataclass
class AccountSettings:
    """Everything the /auth routes read besides the store."""

    # Who may register: nobody (accounts come from `vttrelay accounts create`), holders of an
    # invite code (`vttrelay accounts invite`, the dashboard), or anyone
    signup: SignupPolicy = "closed"
    # The relay's public origin for links in mails and reset links ("" : as the request reached
    # the relay, or http://<host>:<port> for the CLI)
    public_url: str = ""
    smtp: SmtpSettings | None = None  # None: accounts are verified at once; resets by the CLI
    # Per-IP limits of the reference (token buckets in the shared Counters; 0 disables)
    auth_rate_limit: int = 5  # register, login, regenerate-key, resend-verification / 15 min
    reset_rate_limit: int = 3  # forgot-password, reset-password / hour
    account_rate_limit: int = 10  # change-password, export-data, delete account / hour
    blocked_email_domains: frozenset[str] = field(default_factory=frozenset)
    session_ttl: float = 30 * DAY  # fixed from creation, as the reference
    verification_ttl: float = DAY
    reset_ttl: float = 3600.0
    invite_ttl: float = 7 * DAY
    # The credential key (see credentials.py): None reads CREDENTIALS_KEY_ENV, else the file
    # `credentials.key` in the data dir, made on first use with owner-only permissions
    credentials_key: str | None = None

    @property
    def mail_enabled(self) -> bool:
        return self.smtp is not None
