"""The account rules as pure functions (accounts-auth.md §4.1, §4.2) and the password check's
constant cost: an unknown account is checked against a dummy hash, so it costs what a wrong
password costs."""

from __future__ import annotations

from typing import Literal

import argon2
import pytest

from vttrelay.relay.accounts.passwords import Passwords
from vttrelay.relay.accounts.rules import (
    BLOCKED_EMAIL,
    INVALID_EMAIL,
    bare_email,
    email_problem,
    password_problem,
)


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("Short1A", "Password must be at least 8 characters long"),
        ("éééaA1", None),  # 6 characters but 9 bytes of UTF-8: long enough, as the reference
        ("alllower1", "Password must contain at least one uppercase letter"),
        ("ALLUPPER1", "Password must contain at least one lowercase letter"),
        ("NoNumbers", "Password must contain at least one number"),
        ("TestPassword123!", None),
        ("Aa1" + "é" * 600, "Password must be at most 1024 bytes long"),
    ],
)
def test_password_rules_in_the_reference_order(password: str, problem: str | None) -> None:
    assert password_problem(password) == problem


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Bob <Bob@Example.COM>", "bob@example.com"),
        ("plain@example.org", "plain@example.org"),
        ("notanemail", None),
        ("a@nodot", None),
        ("a@b.c, d@e.f", None),
        ("a@@b.com", None),
        ("a b@c.com", None),
        ("a@.com", None),
        ("a@b..com", None),
        ("x" * 300 + "@example.com", None),
    ],
)
def test_bare_email(text: str, address: str | None) -> None:
    assert bare_email(text) == address


def test_email_problems() -> None:
    assert email_problem("x@mailinator.com") == (BLOCKED_EMAIL, "x@mailinator.com")
    assert email_problem("x@MAILINATOR.com") == (BLOCKED_EMAIL, "x@mailinator.com")
    assert email_problem("x@sub.mailinator.com") == (None, "x@sub.mailinator.com")  # as reference
    assert email_problem("x@corp.example", {"corp.example"}) == (BLOCKED_EMAIL, "x@corp.example")
    assert email_problem("bad") == (INVALID_EMAIL, "")


class CountingHasher(argon2.PasswordHasher):
    """A cheap argon2id hasher that records which hashes it verified."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.verified: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:  # noqa: A002
        self.verified.append(str(hash))
        return super().verify(hash, password)


async def test_an_unknown_account_costs_one_hash_like_a_wrong_password() -> None:
    hasher = CountingHasher()
    passwords = Passwords(hasher)
    stored = await passwords.hash("TestPassword123!")
    assert stored.startswith("$argon2id$")
    assert await passwords.verify(stored, "TestPassword123!") is True
    assert await passwords.verify(stored, "WrongPassword1") is False
    assert await passwords.verify(None, "TestPassword123!") is False
    assert await passwords.verify("not a hash", "TestPassword123!") is False
    # every check ran argon2 once: the unknown account against the dummy hash, same parameters
    assert len(hasher.verified) == 4
    dummy = hasher.verified[2]
    assert dummy != stored and dummy.split("$")[:4] == stored.split("$")[:4]
