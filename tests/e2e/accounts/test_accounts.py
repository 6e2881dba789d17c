"""Accounts and sessions over real sockets, on SQLite and PostgreSQL: register, login, logout,
user data, change password, reset password, regenerate the master key, export, delete; the
reference's checks in order with their statuses and texts (accounts-auth.md §5), and that a
refused call changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from tests.support.accounts import HEX64, PASSWORD, Auth

from vttrelay.relay.accounts import module_events, users


def count_users(auth: Auth) -> int:
    return len(users.list_users(auth.relay.store))


async def test_register_answers_a_session_and_user_data_reads_it(auth: Auth) -> None:
    body = await auth.register("Relay-Test@Example.com")
    assert set(body) == {
        "id",
        "email",
        "emailVerified",
        "createdAt",
        "subscriptionStatus",
        "sessionToken",
        "sessionExpiresAt",
    }
    assert body["email"] == "relay-test@example.com"  # stored bare and lower-cased
    assert body["emailVerified"] is True  # no mail configured: verified at once
    assert body["subscriptionStatus"] == "free"
    assert HEX64.match(body["sessionToken"])
    assert body["createdAt"].endswith("Z") and body["sessionExpiresAt"] > body["createdAt"]
    answer = await auth.call("GET", "/auth/user-data", session=body["sessionToken"])
    assert answer.status == 200
    assert answer.json() == {
        "id": body["id"],
        "email": "relay-test@example.com",
        "emailVerified": True,
        "apiKeyRotationRequired": False,
        "role": "user",
        "requestsThisMonth": 0,
        "subscriptionStatus": "free",
        "limits": {"monthlyLimit": 0, "unlimitedMonthly": False},
    }
    assert answer.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"email": "incomplete@example.com"}, 400, "Email and password are required"),
        ({"email": 5, "password": PASSWORD}, 400, "Email and password are required"),
        ({"email": "weak@example.com", "password": "short"}, 400,
         "Password must be at least 8 characters long"),
        ({"email": "weak@example.com", "password": "lowercase1"}, 400,
         "Password must contain at least one uppercase letter"),
        ({"email": "weak@example.com", "password": "UPPERCASE1"}, 400,
         "Password must contain at least one lowercase letter"),
        ({"email": "weak@example.com", "password": "NoDigitsHere"}, 400,
         "Password must contain at least one number"),
        ({"email": "weak@example.com", "password": "Aa1" + "x" * 1100}, 400,
         "Password must be at most 1024 bytes long"),
        ({"email": "test@mailinator.com", "password": PASSWORD}, 400,
         "This email domain is not allowed."),
        ({"email": "notanemail", "password": PASSWORD}, 400, "Invalid email address."),
        ({"email": "a@b.c, d@e.f", "password": PASSWORD}, 400, "Invalid email address."),
        ({"email": "x" * 600 + "@example.com", "password": PASSWORD}, 400,
         "'email' is too long (at most 512 characters)"),
    ],
)  # fmt: skip
async def test_register_refusals(auth: Auth, body: dict[str, Any], status: int, error: str) -> None:
    answer = await auth.call("POST", "/auth/register", json=body)
    assert (answer.status, answer.json()) == (status, {"error": error})
    assert count_users(auth) == 0


async def test_register_refuses_bad_bodies_and_duplicates(auth: Auth) -> None:
    bad_json = await auth.call(
        "POST", "/auth/register", data=b"{x", headers={"Content-Type": "application/json"}
    )
    assert bad_json.status == 400 and bad_json.json()["error"].startswith("invalid JSON: ")
    array = await auth.call("POST", "/auth/register", json=[1, 2])
    assert array.status == 400 and array.json()["error"].startswith("invalid JSON: ")
    huge = await auth.call("POST", "/auth/register", data=b"{" + b" " * 70_000 + b"}")
    assert (huge.status, huge.json()) == (413, {"error": "Request body too large"})
    assert count_users(auth) == 0
    first = await auth.register("dup@example.com")
    again = await auth.call(
        "POST", "/auth/register", json={"email": "DUP@example.com", "password": PASSWORD}
    )
    assert (again.status, again.json()) == (409, {"error": "User already exists"})
    assert count_users(auth) == 1
    # the first account is untouched: its session and password still work
    assert (await auth.call("GET", "/auth/user-data", session=first["sessionToken"])).status == 200
    await auth.login("dup@example.com")


async def test_signup_closed_by_default_and_by_invitation(make_auth: Any) -> None:
    closed = await make_auth(signup="closed")
    answer = await closed.call(
        "POST", "/auth/register", json={"email": "a@example.com", "password": PASSWORD}
    )
    assert (answer.status, answer.json()) == (
        403,
        {"error": "Registration is disabled on this server"},
    )
    invite = await make_auth(signup="invite")
    store = invite.relay.store
    needed = {"error": "A valid invite code is required to register on this server"}
    for extra in ({}, {"inviteCode": "nope"}, {"inviteCode": 7}):
        body = {"email": "a@example.com", "password": PASSWORD, **extra}
        answer = await invite.call("POST", "/auth/register", json=body)
        assert (answer.status, answer.json()) == (403, needed)
    code = users.new_invite(store, ttl=60)
    made = await invite.register("a@example.com", inviteCode=code)
    assert made["emailVerified"] is True
    answer = await invite.call(
        "POST", "/auth/register", json={"email": "b@example.com", "password": PASSWORD,
                                        "inviteCode": code},
    )  # fmt: skip
    assert (answer.status, answer.json()) == (403, needed)  # single use
    # a clash does not use the code up
    code = users.new_invite(store, ttl=60)
    answer = await invite.call(
        "POST", "/auth/register", json={"email": "a@example.com", "password": PASSWORD,
                                        "inviteCode": code},
    )  # fmt: skip
    assert answer.status == 409
    await invite.register("b@example.com", inviteCode=code)
    assert [u.email for u in users.list_users(store)] == ["a@example.com", "b@example.com"]


async def test_login_and_logout(auth: Auth) -> None:
    made = await auth.register("login@example.com")
    answer = await auth.call(
        "POST",
        "/auth/login",
        json={"email": "Login@Example.com", "password": PASSWORD},
        headers={"User-Agent": "tests"},
    )
    assert answer.status == 200
    body = answer.json()
    assert set(body) == {
        "id", "email", "emailVerified", "apiKeyRotationRequired", "role", "requestsThisMonth",
        "createdAt", "sessionToken", "sessionExpiresAt",
    }  # fmt: skip
    assert body["id"] == made["id"] and body["sessionToken"] != made["sessionToken"]
    for wrong in (
        {"email": "login@example.com", "password": "WrongPassword1"},
        {"email": "nobody@example.com", "password": PASSWORD},
        {"email": "not an email", "password": PASSWORD},
    ):
        answer = await auth.call("POST", "/auth/login", json=wrong)
        assert (answer.status, answer.json()) == (401, {"error": "Invalid credentials"})
    answer = await auth.call("POST", "/auth/login", json={"email": "login@example.com"})
    assert (answer.status, answer.json()) == (400, {"error": "Email and password are required"})
    # logout ends that session only
    session = body["sessionToken"]
    assert (await auth.call("POST", "/auth/logout", session=session)).json() == {"success": True}
    gone = await auth.call("GET", "/auth/user-data", session=session)
    assert (gone.status, gone.json()) == (401, {"error": "Invalid or expired session"})
    assert (await auth.call("GET", "/auth/user-data", session=made["sessionToken"])).status == 200
    again = await auth.call("POST", "/auth/logout", session=session)
    assert (again.status, again.json()) == (401, {"error": "Invalid token"})
    none = await auth.call("POST", "/auth/logout")
    assert (none.status, none.json()) == (401, {"error": "Bearer token required"})
    for header in ("Bearer", "bearer " + made["sessionToken"], "Basic abc"):
        answer = await auth.call("GET", "/auth/user-data", headers={"Authorization": header})
        assert (answer.status, answer.json()) == (401, {"error": "Bearer token required"})
    long = await auth.call("GET", "/auth/user-data", session="x" * 5000)
    assert long.status == 401


async def test_change_password_keeps_sessions(auth: Auth) -> None:
    made = await auth.register("change@example.com")
    session = made["sessionToken"]
    change = {"currentPassword": PASSWORD, "newPassword": "ChangedPassword2"}
    answer = await auth.call("POST", "/auth/change-password", session=session, json=change)
    assert (answer.status, answer.json()) == (200, {"message": "Password changed successfully"})
    await auth.login("change@example.com", "ChangedPassword2")
    old = await auth.call(
        "POST", "/auth/login", json={"email": "change@example.com", "password": PASSWORD}
    )
    assert old.status == 401
    cases = [
        ({"currentPassword": "WrongCurrent1", "newPassword": "NewPassword1"}, 401,
         "Current password is incorrect"),
        ({"currentPassword": "ChangedPassword2", "newPassword": "weak"}, 400,
         "Password must be at least 8 characters long"),
        ({"currentPassword": "ChangedPassword2"}, 400,
         "Current password and new password are required"),
    ]  # fmt: skip
    for body, status, text in cases:
        answer = await auth.call("POST", "/auth/change-password", session=session, json=body)
        assert (answer.status, answer.json()) == (status, {"error": text})
    await auth.login("change@example.com", "ChangedPassword2")  # nothing changed
    for session_value, text in (
        (None, "Session required"),
        ("0" * 64, "Invalid or expired session"),
    ):
        answer = await auth.call(
            "POST", "/auth/change-password", session=session_value, json=change
        )
        assert (answer.status, answer.json()) == (401, {"error": text})


async def test_forgot_and_reset_password(auth: Auth) -> None:
    made = await auth.register("reset@example.com")
    answer = await auth.call("POST", "/auth/forgot-password", json={"email": "reset@example.com"})
    generic = {
        "message": "If an account with that email exists, a password reset link has been sent."
    }
    assert (answer.status, answer.json()) == (200, generic)  # never a token in the answer
    unknown = await auth.call("POST", "/auth/forgot-password", json={"email": "no@example.com"})
    assert (unknown.status, unknown.json()) == (200, generic)
    empty = await auth.call("POST", "/auth/forgot-password", json={})
    assert (empty.status, empty.json()) == (400, {"error": "Email is required"})
    # without mail the operator makes the link (`vttrelay accounts reset-link`): the same call
    token = users.new_reset(auth.relay.store, made["id"], 3600)
    valid = await auth.call("GET", f"/auth/validate-reset-token/{token}")
    assert valid.json() == {"valid": True}
    invalid = await auth.call("GET", "/auth/validate-reset-token/invalidtoken123456")
    assert (invalid.status, invalid.json()) == (200, {"valid": False})
    bad = await auth.call(
        "POST", "/auth/reset-password", json={"token": "invalidtoken123456",
                                              "password": "NewValidPassword1"},
    )  # fmt: skip
    assert (bad.status, bad.json()) == (400, {"error": "Invalid or expired reset token"})
    weak = await auth.call("POST", "/auth/reset-password", json={"token": token, "password": "x"})
    assert (weak.status, weak.json()) == (
        400,
        {"error": "Password must be at least 8 characters long"},
    )
    missing = await auth.call("POST", "/auth/reset-password", json={"token": token})
    assert (missing.status, missing.json()) == (400, {"error": "Token and password are required"})
    assert (await auth.call("GET", f"/auth/validate-reset-token/{token}")).json()["valid"]
    done = await auth.call(
        "POST", "/auth/reset-password", json={"token": token, "password": "ResetPassword1"}
    )
    assert (done.status, done.json()) == (200, {"message": "Password has been reset successfully"})
    await auth.login("reset@example.com", "ResetPassword1")
    assert (await auth.call("GET", f"/auth/validate-reset-token/{token}")).json() == {
        "valid": False
    }
    again = await auth.call(
        "POST", "/auth/reset-password", json={"token": token, "password": "ResetPassword2"}
    )
    assert again.status == 400
    # the session made at registration survives a reset (the reference's suites rely on it)
    assert (await auth.call("GET", "/auth/user-data", session=made["sessionToken"])).status == 200
    # a newer reset token voids the older one
    first = users.new_reset(auth.relay.store, made["id"], 3600)
    users.new_reset(auth.relay.store, made["id"], 3600)
    assert (await auth.call("GET", f"/auth/validate-reset-token/{first}")).json() == {
        "valid": False
    }


async def test_regenerate_key_revokes_everything_and_returns_a_master_key(auth: Auth) -> None:
    made = await auth.register("regen@example.com")
    account = made["id"]
    other = await auth.register("bystander@example.com")
    other_key = auth.relay.key(account=other["id"])
    old_key = auth.relay.key(account=account)
    world = await auth.relay.world("regen-world", account=account)
    answer = await auth.call(
        "POST", "/auth/regenerate-key", json={"email": "regen@example.com", "password": PASSWORD}
    )
    assert answer.status == 200
    master = answer.json()["apiKey"]
    assert HEX64.match(master)
    assert await asyncio.wait_for(world.wait_closed(), 5) == 4002
    assert world.close_reason == "Master API key regenerated"
    gone = await auth.call("GET", "/auth/export-data", session=made["sessionToken"])
    assert gone.status == 401
    assert (await auth.relay.call("GET", "/api/key", key=old_key)).status == 401
    info = await auth.relay.call("GET", "/api/key", key=master)
    assert info.status == 200 and info.json()["account"] == account
    assert len(info.json()["scopes"]) == 32
    # another account is untouched
    assert (await auth.relay.call("GET", "/api/key", key=other_key)).status == 200
    assert (await auth.call("GET", "/auth/user-data", session=other["sessionToken"])).status == 200
    session = await auth.login("regen@example.com")
    export = await auth.call("GET", "/auth/export-data", session=session)
    assert export.json()["apiAccess"] == {"hasMasterKey": True}
    for body, status, text in (
        ({"email": "regen@example.com", "password": "WrongPassword1"}, 401, "Invalid credentials"),
        ({"email": "regen@example.com"}, 400, "Email and password are required"),
    ):
        answer = await auth.call("POST", "/auth/regenerate-key", json=body)
        assert (answer.status, answer.json()) == (status, {"error": text})
    assert (await auth.relay.call("GET", "/api/key", key=master)).status == 200


async def test_export_data(auth: Auth) -> None:
    made = await auth.register("export@example.com")
    auth.relay.store.create_key(made["id"], ["entity:read"], ["w1"], user_id="u1", name="bot")
    answer = await auth.call("GET", "/auth/export-data", session=made["sessionToken"])
    assert answer.status == 200
    body = answer.json()
    assert set(body) == {
        "exportDate", "user", "subscription", "usage", "apiAccess", "scopedKeys",
    }  # fmt: skip
    assert body["user"]["email"] == "export@example.com" and body["user"]["id"] == made["id"]
    assert body["subscription"] == {"status": "free", "stripeCustomerId": "", "subscriptionId": ""}
    assert body["usage"] == {"requestsThisMonth": 0, "requestsToday": 0}
    assert body["apiAccess"] == {"hasMasterKey": False}
    [key] = body["scopedKeys"]
    assert key["name"] == "bot" and key["scopedClientId"] == "w1" and key["scopedUserId"] == "u1"
    assert "key" not in key and key["enabled"] is True
    none = await auth.call("GET", "/auth/export-data")
    assert (none.status, none.json()) == (401, {"error": "Session required"})


async def test_delete_account_removes_everything_of_it(auth: Auth) -> None:
    made = await auth.register("delete@example.com")
    session, account = made["sessionToken"], made["id"]
    other = await auth.register("keep@example.com")
    key = auth.relay.key(account=account)
    other_key = auth.relay.key(account=other["id"])
    world = await auth.relay.world("doomed-world", account=account)
    await world.emit({"type": "module-notify", "event": "settings-change", "details": "x"})
    for _ in range(100):  # its module event is logged
        if module_events.every(auth.relay.store, account):
            break
        await asyncio.sleep(0.05)
    assert module_events.every(auth.relay.store, account)
    cases = [
        ({"confirmEmail": "wrong@example.com", "password": PASSWORD}, 400,
         {"error": "Email confirmation required",
          "message": "Please provide your email address in the confirmEmail field to confirm "
                     "account deletion"}),
        ({"confirmEmail": "delete@example.com"}, 400,
         {"error": "Password required",
          "message": "Please provide your password to confirm account deletion"}),
        ({"confirmEmail": "delete@example.com", "password": "WrongPassword1"}, 401,
         {"error": "Invalid password"}),
    ]  # fmt: skip
    for body, status, expected in cases:
        answer = await auth.call("DELETE", "/auth/account", session=session, json=body)
        assert (answer.status, answer.json()) == (status, expected)
    assert (await auth.relay.call("GET", "/api/key", key=key)).status == 200  # nothing changed
    answer = await auth.call(
        "DELETE",
        "/auth/account",
        session=session,
        json={"confirmEmail": "delete@example.com", "password": PASSWORD},
    )
    assert (answer.status, answer.json()) == (
        200,
        {"message": "Account successfully deleted", "success": True},
    )
    assert await asyncio.wait_for(world.wait_closed(), 5) == 4002
    assert world.close_reason == "Account deleted"
    login = await auth.call(
        "POST", "/auth/login", json={"email": "delete@example.com", "password": PASSWORD}
    )
    assert login.status == 401
    assert (await auth.call("GET", "/auth/user-data", session=session)).status == 401
    assert (await auth.relay.call("GET", "/api/key", key=key)).status == 401
    store = auth.relay.store
    assert store.list_keys(account) == [] and store.known_clients(account) == []
    assert module_events.every(store, account) == []
    assert all(t.revoked_at for t in store.list_tokens(account))
    assert (await auth.relay.call("GET", "/api/key", key=other_key)).status == 200
    assert (await auth.call("GET", "/auth/user-data", session=other["sessionToken"])).status == 200


async def test_a_session_made_on_one_instance_works_on_another(auth: Auth, make_auth: Any) -> None:
    other = await make_auth(database=auth.relay.config.database)
    made = await auth.register("scaled@example.com")
    answer = await other.call("GET", "/auth/user-data", session=made["sessionToken"])
    assert answer.status == 200 and answer.json()["email"] == "scaled@example.com"
    session = await other.login("scaled@example.com")
    assert (await other.call("POST", "/auth/logout", session=session)).status == 200
    assert (await auth.call("GET", "/auth/user-data", session=session)).status == 401


async def test_per_ip_limits(make_auth: Any) -> None:
    auth = await make_auth(auth_rate_limit=3, reset_rate_limit=1, account_rate_limit=1)
    made = await auth.register("limits@example.com")  # 1 of 3
    for _ in range(2):  # a wrong login costs a token too
        answer = await auth.call("POST", "/auth/login", json={"email": "x@example.com"})
        assert answer.status == 400
    answer = await auth.call(
        "POST", "/auth/login", json={"email": "limits@example.com", "password": PASSWORD}
    )
    too_many = "Too many authentication attempts from this IP, please try again after 15 minutes"
    assert (answer.status, answer.json()) == (429, {"error": too_many})
    assert (
        await auth.call("POST", "/auth/forgot-password", json={"email": "a@b.co"})
    ).status == 200
    answer = await auth.call("POST", "/auth/reset-password", json={})
    assert (answer.status, answer.json()) == (
        429,
        {"error": "Too many password reset attempts from this IP, please try again later"},
    )
    session = made["sessionToken"]
    assert (await auth.call("GET", "/auth/export-data", session=session)).status == 200
    answer = await auth.call("GET", "/auth/export-data", session=session)
    assert (answer.status, answer.json()) == (
        429,
        {"error": "Too many account management requests from this IP, please try again later"},
    )
    # user-data and logout are not limited
    assert (await auth.call("GET", "/auth/user-data", session=session)).status == 200


async def test_per_ip_limits_hold_across_instances(make_auth: Any, redis_server: Any) -> None:
    first = await make_auth(auth_rate_limit=2, redis_url=redis_server.url)
    second = await make_auth(
        auth_rate_limit=2, redis_url=redis_server.url, database=first.relay.config.database
    )
    body = {"email": "x@example.com", "password": "WrongPassword1"}
    assert (await first.call("POST", "/auth/login", json=body)).status == 401
    assert (await second.call("POST", "/auth/login", json=body)).status == 401
    assert (await first.call("POST", "/auth/login", json=body)).status == 429
    assert (await second.call("POST", "/auth/login", json=body)).status == 429


async def test_billing_is_not_offered(auth: Auth) -> None:
    made = await auth.register("billing@example.com")
    key = auth.relay.key(account=made["id"])
    for credentials in ({"key": key}, {"session": made["sessionToken"]}):
        status = await auth.call("GET", "/api/subscriptions/status", **credentials)
        assert status.status == 200
        assert status.json()["subscriptionStatus"] == "free"
        assert "disabled" in status.json()["message"]
        for name in ("create-checkout-session", "create-portal-session"):
            answer = await auth.call("POST", f"/api/subscriptions/{name}", **credentials)
            assert answer.status == 503
            assert answer.json()["error"] == "Billing is not offered by this relay"
    none = await auth.call("GET", "/api/subscriptions/status")
    assert (none.status, none.json()) == (401, {"error": "API key is required"})
    bad = await auth.call("GET", "/api/subscriptions/status", session="0" * 64)
    assert (bad.status, bad.json()) == (
        401,
        {"error": "Invalid or expired session. Please log in again."},
    )
    # Stripe's webhook: acknowledged, as the reference does with Stripe off; nothing changes
    event = {"type": "customer.subscription.updated", "data": {"object": {"status": "active"}}}
    hook = await auth.call("POST", "/api/webhooks/stripe", json=event)
    assert (hook.status, hook.json()) == (200, {"received": "true"})
    status = await auth.call("GET", "/api/subscriptions/status", key=key)
    assert status.json()["subscriptionStatus"] == "free"


async def test_verify_page_without_mail(auth: Auth) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(auth.relay.url + "/auth/verify") as resp:
            assert resp.status == 400 and resp.content_type == "text/html"
            assert "No verification token was provided." in await resp.text()
        async with http.get(auth.relay.url + "/auth/verify?token=invalid-token-abc123") as resp:
            assert resp.status == 400
            assert "Invalid or Expired Link" in await resp.text()
    made = await auth.register("verified@example.com")
    answer = await auth.call("POST", "/auth/resend-verification", session=made["sessionToken"])
    assert (answer.status, answer.json()) == (200, {"message": "Email is already verified"})
    none = await auth.call("POST", "/auth/resend-verification")
    assert (none.status, none.json()) == (401, {"error": "Bearer token required"})
    bad = await auth.call("POST", "/auth/resend-verification", session="0" * 64)
    assert (bad.status, bad.json()) == (401, {"error": "Invalid session"})


async def test_account_changes_reach_worlds_on_other_instances(
    make_auth: Any, redis_server: Any
) -> None:
    first = await make_auth(redis_url=redis_server.url)
    second = await make_auth(redis_url=redis_server.url, database=first.relay.config.database)
    made = await first.register("fleet@example.com")
    world = await second.relay.world("fleet-world", account=made["id"])
    key = second.relay.key(account=made["id"])
    answer = await first.call(
        "POST", "/auth/regenerate-key", json={"email": "fleet@example.com", "password": PASSWORD}
    )
    assert answer.status == 200
    assert await asyncio.wait_for(world.wait_closed(), 10) == 4002
    assert world.close_reason == "Master API key regenerated"
    # the other instance's key cache drops the deleted key within its ttl
    for _ in range(100):
        if (await second.relay.call("GET", "/api/key", key=key)).status == 401:
            break
        await asyncio.sleep(0.1)
    assert (await second.relay.call("GET", "/api/key", key=key)).status == 401
