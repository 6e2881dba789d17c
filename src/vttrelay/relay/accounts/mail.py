"""Verification and password-reset mail over SMTP (aiosmtplib), when the operator set SMTP.

`send_later` queues one mail in the background (the HTTP answer never waits for the SMTP
server): three attempts, at once, after 2 s and after 4 s, as the reference; a failure is
logged, never shown to the caller. The links point at the relay's public URL
(`AccountSettings.public_url`, else the origin the request came to).
"""

from __future__ import annotations

import asyncio
import logging
from email.message import EmailMessage
from typing import TYPE_CHECKING, Final

import aiosmtplib
from aiohttp import web

from vttrelay.relay.accounts.settings import SmtpSettings

if TYPE_CHECKING:
    from vttrelay.relay.accounts.services import AccountServices

log = logging.getLogger("vttrelay.relay")

RETRY_DELAYS: Final = (0.0, 2.0, 4.0)


def base_url(public_url: str, request: web.Request, base_path: str) -> str:
    """The relay's public base URL: the configured one, else as the request reached it."""
    if public_url:
        return public_url.rstrip("/")
    return f"{request.scheme}://{request.host}{base_path}"


def verify_link(base: str, token: str) -> str:
    return f"{base}/auth/verify?token={token}"


def reset_link(base: str, token: str) -> str:
    """The dashboard page that sets a new password with a reset token."""
    return f"{base}/dashboard/reset?token={token}"


def message(kind: str, link: str) -> tuple[str, str]:
    """`(subject, plain text)` of a mail of `kind` ("verify" or "reset")."""
    if kind == "verify":
        return (
            "Verify Your Email Address",
            "Welcome to vttrelay.\n\nPlease verify your email address by opening this link:\n\n"
            f"{link}\n\nThis link expires in 24 hours. "
            "If you did not register, ignore this mail.\n",
        )
    return (
        "Reset Your Password",
        "Someone (hopefully you) asked to reset the password of your vttrelay account.\n\n"
        f"Set a new password here:\n\n{link}\n\nThis link expires in 1 hour and works once. "
        "If you did not ask for it, ignore this mail: your password stays as it is.\n",
    )


async def send(smtp: SmtpSettings, to: str, subject: str, body: str) -> None:
    """Send one plain-text mail (raises on failure)."""
    mail = EmailMessage()
    mail["From"] = smtp.sender
    mail["To"] = to
    mail["Subject"] = subject
    mail.set_content(body)
    await aiosmtplib.send(
        mail,
        hostname=smtp.host,
        port=smtp.port,
        username=smtp.username or None,
        password=smtp.password or None,
        use_tls=smtp.tls == "tls",
        start_tls=smtp.tls == "starttls",
        timeout=smtp.timeout,
    )


async def _deliver(smtp: SmtpSettings, to: str, subject: str, body: str) -> None:
    for attempt, delay in enumerate(RETRY_DELAYS, 1):
        await asyncio.sleep(delay)
        try:
            await send(smtp, to, subject, body)
            log.info("mail %r sent", subject)
            return
        except (aiosmtplib.SMTPException, OSError) as exc:
            log.warning("mail %r: attempt %d failed: %s", subject, attempt, exc)
    log.error("mail %r could not be sent", subject)


def send_later(
    accounts: AccountServices, request: web.Request, kind: str, to: str, token: str
) -> None:
    """Queue the mail of `kind` with its link for `token` to `to` (no-op without SMTP)."""
    smtp = accounts.settings.smtp
    if smtp is None:
        return
    base = base_url(accounts.settings.public_url, request, accounts.base_path)
    link = verify_link(base, token) if kind == "verify" else reset_link(base, token)
    subject, body = message(kind, link)
    task = asyncio.ensure_future(_deliver(smtp, to, subject, body))
    accounts.pending.add(task)
    task.add_done_callback(accounts.pending.discard)
