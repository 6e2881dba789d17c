"""Stored Foundry credentials and notification settings over /auth, on SQLite and PostgreSQL:
passwords encrypted at rest under the operator's key (a 0600 file in the data dir, or the
environment variable), never returned; the reference's answers; one account never reaching
another's."""

from __future__ import annotations

import os
import stat
from typing import Any

import pytest
from tests.support.accounts import Auth

from vttrelay.relay.accounts.credentials import KEY_FILE, Vault
from vttrelay.relay.accounts.services import ACCOUNTS
from vttrelay.relay.accounts.settings import CREDENTIALS_KEY_ENV

SERVER = {
    "name": "Test Foundry Server",
    "foundryUrl": "http://localhost:30000",
    "foundryUsername": "testgm",
    "foundryPassword": "testpassword123",
}


def vault_of(auth: Auth) -> Vault:
    return auth.relay.app[ACCOUNTS].vault


async def test_credentials_are_sealed_and_never_returned(auth: Auth) -> None:
    made = await auth.register("vault@example.com")
    session, account = made["sessionToken"], made["id"]
    answer = await auth.call("POST", "/auth/credentials", session=session, json=SERVER)
    assert answer.status == 201
    body = answer.json()
    assert set(body) == {"id", "name", "foundryUrl", "foundryUsername", "world", "createdAt"}
    assert {k: body[k] for k in ("name", "foundryUrl", "foundryUsername", "world")} == {
        **{k: v for k, v in SERVER.items() if k != "foundryPassword"},
        "world": "",
    }
    key_file = auth.relay.config.data_dir / KEY_FILE
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    rows = auth.relay.store.db.all("SELECT * FROM credentials")
    assert len(rows) == 1 and "testpassword123" not in str(dict(rows[0]))
    assert vault_of(auth).password(account, body["id"]) == "testpassword123"
    listed = (await auth.call("GET", "/auth/credentials", session=session)).json()["credentials"]
    [entry] = listed
    assert not {
        "foundryPassword",
        "encryptedFoundryPassword",
        "passwordIv",
        "passwordAuthTag",
    } & set(entry)
    patched = await auth.call(
        "PATCH",
        f"/auth/credentials/{body['id']}",
        session=session,
        json={"name": "Updated Server Name", "foundryUrl": "http://localhost:31000",
              "foundryPassword": "newpassword456"},
    )  # fmt: skip
    assert patched.status == 200
    assert (patched.json()["name"], patched.json()["foundryUrl"]) == (
        "Updated Server Name",
        "http://localhost:31000",
    )
    assert vault_of(auth).password(account, body["id"]) == "newpassword456"
    # a sealed password moved to another row does not open there
    other = await auth.call("POST", "/auth/credentials", session=session, json=SERVER)
    other_id = other.json()["id"]
    store = auth.relay.store
    row = store.db.one("SELECT * FROM credentials WHERE id = ?", (body["id"],))
    store.db.run(
        "UPDATE credentials SET password_ciphertext = ?, password_nonce = ?, password_tag = ?"
        " WHERE id = ?",
        (row["password_ciphertext"], row["password_nonce"], row["password_tag"], other_id),
    )
    assert vault_of(auth).password(account, other_id) is None
    deleted = await auth.call("DELETE", f"/auth/credentials/{body['id']}", session=session)
    assert deleted.json() == {"message": "Credential deleted", "success": True}
    again = await auth.call("DELETE", f"/auth/credentials/{body['id']}", session=session)
    assert (again.status, again.json()) == (404, {"error": "Credential not found"})


async def test_credential_refusals(auth: Auth) -> None:
    session = (await auth.register("refuse-vault@example.com"))["sessionToken"]
    required = "name, foundryUrl, foundryUsername, and foundryPassword are all required"
    cases = [
        ({"name": "x"}, required),
        ({**SERVER, "foundryPassword": ""}, required),
        ({**SERVER, "foundryPassword": 5}, "Invalid request body"),
        ({**SERVER, "foundryUrl": "file:///etc/passwd"}, "foundryUrl must be an http or https URL"),
        ({**SERVER, "name": "n" * 200}, "'name' is too long (at most 128 characters)"),
    ]
    for body, text in cases:
        answer = await auth.call("POST", "/auth/credentials", session=session, json=body)
        assert (answer.status, answer.json()) == (400, {"error": text})
    for raw in (b"", b"{", b"[]"):
        answer = await auth.call("POST", "/auth/credentials", session=session, data=raw)
        assert (answer.status, answer.json()) == (400, {"error": "Invalid request body"})
    made = (await auth.call("POST", "/auth/credentials", session=session, json=SERVER)).json()
    answer = await auth.call(
        "PATCH", f"/auth/credentials/{made['id']}", session=session, json={"name": "x"}
    )
    assert (answer.status, answer.json()) == (
        400,
        {"error": "Password is required when updating a credential."},
    )
    for path in ("/auth/credentials/cred_000000000000", "/auth/credentials/nope"):
        answer = await auth.call("PATCH", path, session=session, json=SERVER)
        assert (answer.status, answer.json()) == (404, {"error": "Credential not found"})
    listed = (await auth.call("GET", "/auth/credentials", session=session)).json()["credentials"]
    assert [c["name"] for c in listed] == ["Test Foundry Server"]


async def test_the_operator_key_from_the_environment(
    make_auth: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CREDENTIALS_KEY_ENV, "ab" * 32)
    auth = await make_auth()
    made = await auth.register("env-vault@example.com")
    answer = await auth.call("POST", "/auth/credentials", session=made["sessionToken"], json=SERVER)
    assert answer.status == 201
    assert not (auth.relay.config.data_dir / KEY_FILE).exists()
    monkeypatch.setenv(CREDENTIALS_KEY_ENV, "not a key")
    broken = await make_auth(database=auth.relay.config.database)
    session = await broken.login("env-vault@example.com")
    answer = await broken.call("POST", "/auth/credentials", session=session, json=SERVER)
    assert answer.status == 400
    assert answer.json()["error"].startswith("Credential storage is not available")


async def test_notification_settings(auth: Auth) -> None:
    made = await auth.register("notify@example.com")
    session = made["sessionToken"]
    fresh = (await auth.call("GET", "/auth/notification-settings", session=session)).json()
    assert fresh == {
        "discordWebhookUrl": "", "logCrossWorldRequests": True,
        "notificationDebounceWindowSecs": 0, "notifyEmail": "", "notifyOnConnect": True,
        "notifyOnCrossWorldRequests": True, "notifyOnDisconnect": True,
        "notifyOnExecuteJs": True, "notifyOnMacroExecute": False,
        "notifyOnMetadataMismatch": True, "notifyOnNewClientConnect": True,
        "notifyOnSettingsChange": True, "remoteRequestBatchWindowSecs": 300,
        "smtpAvailable": False,
    }  # fmt: skip
    url = "https://discord.com/api/webhooks/test/test"
    put = await auth.call(
        "PUT",
        "/auth/notification-settings",
        session=session,
        json={"notifyOnConnect": True, "discordWebhookUrl": url, "notifyEmail": ""},
    )
    assert put.status == 200 and put.json()["discordWebhookUrl"] == url
    assert "smtpAvailable" not in put.json()
    put = await auth.call(
        "PUT", "/auth/notification-settings", session=session, json={"notifyOnConnect": False}
    )
    assert put.json()["notifyOnConnect"] is False and put.json()["discordWebhookUrl"] == ""
    got = (await auth.call("GET", "/auth/notification-settings", session=session)).json()
    assert got["notifyOnConnect"] is False
    for body in ({"notifyOnConnect": "no"}, {"notificationDebounceWindowSecs": -1}):
        answer = await auth.call("PUT", "/auth/notification-settings", session=session, json=body)
        assert answer.status == 400
    assert (await auth.call("GET", "/auth/notification-settings", session=session)).json() == got
    test = await auth.call("POST", "/auth/notification-settings/test", session=session)
    assert (test.status, test.json()) == (400, {"error": "No notification destination configured"})
    # per key and per world
    key = (
        await auth.call(
            "POST", "/auth/api-keys", session=session, json={"name": "k", "scopes": ["search"]}
        )
    ).json()
    path = f"/auth/api-keys/{key['id']}/notification-settings"
    got = (await auth.call("GET", path, session=session)).json()
    assert got == {
        "apiKeyId": key["id"], "discordWebhookUrl": "", "notifyEmail": "",
        "notifyOnError": False, "notifyOnExecuteJs": False, "notifyOnMacroExecute": False,
        "notifyOnRateLimit": False, "smtpAvailable": False,
    }  # fmt: skip
    test = await auth.call("POST", path + "/test", session=session)
    assert (test.status, test.json()) == (
        400,
        {"error": "No notification settings configured for this key"},
    )
    put = await auth.call("PUT", path, session=session, json={"notifyOnError": True})
    assert put.json()["notifyOnError"] is True and put.json()["apiKeyId"] == key["id"]
    assert (await auth.call("DELETE", path, session=session)).json() == {"success": True}
    await auth.relay.world("notify-world", account=made["id"])
    world_path = "/auth/known-clients/notify-world/notification-settings"
    put = await auth.call("PUT", world_path, session=session, json={"notifyOnConnect": True})
    assert put.json()["knownClientId"] == "notify-world" and put.json()["smtpAvailable"] is False
    missing = await auth.call(
        "GET", "/auth/known-clients/nope/notification-settings", session=session
    )
    assert (missing.status, missing.json()) == (404, {"error": "World not found"})


async def test_one_account_never_reaches_anothers_credentials_or_settings(auth: Auth) -> None:
    alice = await auth.register("alice-vault@example.com")
    bob = (await auth.register("bob-vault@example.com"))["sessionToken"]
    made = (
        await auth.call("POST", "/auth/credentials", session=alice["sessionToken"], json=SERVER)
    ).json()
    key = (
        await auth.call(
            "POST",
            "/auth/api-keys",
            session=alice["sessionToken"],
            json={"name": "k", "scopes": ["search"]},
        )
    ).json()
    await auth.relay.world("alice-vault-world", account=alice["id"])
    attempts = [
        ("PATCH", f"/auth/credentials/{made['id']}", SERVER, "Credential not found"),
        ("DELETE", f"/auth/credentials/{made['id']}", None, "Credential not found"),
        ("GET", f"/auth/api-keys/{key['id']}/notification-settings", None, "API key not found"),
        ("PUT", f"/auth/api-keys/{key['id']}/notification-settings", {}, "API key not found"),
        ("GET", "/auth/known-clients/alice-vault-world/notification-settings", None,
         "World not found"),
        ("PUT", "/auth/known-clients/alice-vault-world/notification-settings", {},
         "World not found"),
    ]  # fmt: skip
    for method, path, body, text in attempts:
        answer = await auth.call(method, path, session=bob, json=body)
        assert (answer.status, answer.json()) == (404, {"error": text}), path
    assert (await auth.call("GET", "/auth/credentials", session=bob)).json() == {"credentials": []}
    listed = await auth.call("GET", "/auth/credentials", session=alice["sessionToken"])
    assert [c["name"] for c in listed.json()["credentials"]] == ["Test Foundry Server"]
    assert vault_of(auth).password(alice["id"], made["id"]) == "testpassword123"
