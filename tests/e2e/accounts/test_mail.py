"""Mail against a real SMTP server (aiosmtpd on 127.0.0.1, with AUTH): with SMTP set, a new
account starts unverified and gets a verification link, resend replaces it, a forgotten
password gets a reset link, the notification test mails; an SMTP server that is down fails
nothing the caller sees."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

import aiohttp
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from bench.procs import free_port
from tests.support.accounts import PASSWORD, Auth
from tests.support.e2e import eventually

from vttrelay.relay.accounts.settings import SmtpSettings


@dataclass
class Mailbox:
    """What the SMTP server received, and who logged in."""

    port: int
    mails: list[Message] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.mails.append(message_from_bytes(envelope.content))
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            b"relay",
            b"s3cret",
        )
        if ok:
            self.logins.append(data.login.decode())
        return AuthResult(success=ok)

    def link(self, index: int = -1) -> str:
        body = self.mails[index].get_payload(decode=True)
        assert isinstance(body, bytes)
        found = re.search(r"http://\S+", body.decode())
        assert found, body
        return found.group(0)


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox(free_port())
    controller = Controller(
        box,
        hostname="127.0.0.1",
        port=box.port,
        authenticator=box.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


def smtp(port: int) -> SmtpSettings:
    return SmtpSettings(
        host="127.0.0.1",
        port=port,
        username="relay",
        password="s3cret",
        sender="vttrelay <relay@example.com>",
        tls="none",
    )


async def test_verification_and_reset_mails(make_auth: Any, mailbox: Mailbox) -> None:
    auth: Auth = await make_auth(smtp=smtp(mailbox.port))
    made = await auth.register("mail@example.com")
    assert made["emailVerified"] is False and "verificationToken" not in made
    session = made["sessionToken"]
    await eventually(lambda: len(mailbox.mails) == 1)
    mail = mailbox.mails[0]
    assert (mail["To"], mail["Subject"]) == ("mail@example.com", "Verify Your Email Address")
    assert mail["From"] == "vttrelay <relay@example.com>" and mailbox.logins == ["relay"]
    first_link = mailbox.link()
    assert first_link.startswith(auth.relay.url + "/auth/verify?token=")
    # unverified: user-data and the SH routes work, the SO routes do not
    data = await auth.call("GET", "/auth/user-data", session=session)
    assert data.json()["emailVerified"] is False
    refused = await auth.call("GET", "/auth/api-keys", session=session)
    assert (refused.status, refused.json()) == (
        403,
        {"error": "Please verify your email address before using the API."},
    )
    assert (await auth.call("GET", "/auth/export-data", session=session)).status == 200
    # resend: a new link, the old one stops working
    resent = await auth.call("POST", "/auth/resend-verification", session=session)
    assert (resent.status, resent.json()) == (200, {"message": "Verification email sent"})
    await eventually(lambda: len(mailbox.mails) == 2)
    link = mailbox.link()
    assert link != first_link
    async with aiohttp.ClientSession() as http:
        async with http.get(first_link) as resp:
            assert resp.status == 400 and "Invalid or Expired Link" in await resp.text()
        async with http.get(link) as resp:
            assert resp.status == 200 and "Email Verified!" in await resp.text()
        async with http.get(link) as resp:
            assert resp.status == 400  # used
    assert (await auth.call("GET", "/auth/api-keys", session=session)).status == 200
    again = await auth.call("POST", "/auth/resend-verification", session=session)
    assert again.json() == {"message": "Email is already verified"}
    # forgotten password: a reset link by mail, none for an unknown address
    forgot = await auth.call("POST", "/auth/forgot-password", json={"email": "mail@example.com"})
    assert forgot.status == 200 and "token" not in forgot.json()
    await auth.call("POST", "/auth/forgot-password", json={"email": "nobody@example.com"})
    await eventually(lambda: len(mailbox.mails) == 3)
    await asyncio.sleep(0.3)
    assert len(mailbox.mails) == 3
    assert mailbox.mails[-1]["Subject"] == "Reset Your Password"
    reset_link = mailbox.link()
    assert reset_link.startswith(auth.relay.url + "/dashboard/reset?token=")
    token = reset_link.split("token=", 1)[1]
    assert (await auth.call("GET", f"/auth/validate-reset-token/{token}")).json() == {"valid": True}
    done = await auth.call(
        "POST", "/auth/reset-password", json={"token": token, "password": "MailReset1"}
    )
    assert done.status == 200
    await auth.login("mail@example.com", "MailReset1")
    # the notification test goes out by mail
    test = await auth.call(
        "POST",
        "/auth/notification-settings/test",
        session=session,
        json={"notifyEmail": "alerts@example.com"},
    )
    assert (test.status, test.json()) == (
        200,
        {"message": "Test notification sent", "success": True},
    )
    await eventually(lambda: len(mailbox.mails) == 4)
    assert (mailbox.mails[-1]["To"], mailbox.mails[-1]["Subject"]) == (
        "alerts@example.com",
        "Test Notification",
    )
    settings = await auth.call("GET", "/auth/notification-settings", session=session)
    assert settings.json()["smtpAvailable"] is True


async def test_an_smtp_server_that_is_down_fails_nothing_the_caller_sees(make_auth: Any) -> None:
    auth: Auth = await make_auth(smtp=smtp(free_port()))  # nothing listens there
    made = await auth.register("down@example.com")
    assert made["emailVerified"] is False
    answer = await auth.call("POST", "/auth/resend-verification", session=made["sessionToken"])
    assert answer.json() == {"message": "Verification email sent"}
    answer = await auth.call("POST", "/auth/forgot-password", json={"email": "down@example.com"})
    assert answer.status == 200
    await auth.login("down@example.com", PASSWORD)
