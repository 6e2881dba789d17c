"""Stored Foundry credentials and notification settings over REST (accounts-auth.md §8, §9):
/auth/credentials (create, list, PATCH, delete) and the notification settings of the account,
of one key and of one world (GET, PUT, DELETE, POST .../test).

Every route takes a session (`SO`) and reaches only the caller's account: another account's
id answers what an unknown id answers. Passwords are sealed by the `Vault` (credentials.py)
and never returned. What `/test` sends: notifications.py.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from aiohttp import web

from vttrelay.protocol import valid_id
from vttrelay.relay.accounts import keys, mail, notifications
from vttrelay.relay.accounts.bodies import answer, loose_body, stamp, strict_body
from vttrelay.relay.accounts.credentials import MAX_PER_ACCOUNT, Credential, Vault
from vttrelay.relay.accounts.notifications import ACCOUNT, KEY, WORLD, Level
from vttrelay.relay.accounts.services import services
from vttrelay.relay.accounts.sessions import SO, Signed, signed_in
from vttrelay.relay.core import error
from vttrelay.relay.routes import Route

if TYPE_CHECKING:
    from vttrelay.relay.accounts.deps import AccountDeps

REQUIRED: Final = "name, foundryUrl, foundryUsername, and foundryPassword are all required"
LIMITS: Final = {
    "name": 128,
    "foundryUrl": 2048,
    "foundryUsername": 256,
    "foundryPassword": 1024,
    "world": 256,
}


def _vault(request: web.Request) -> Vault:
    return services(request).vault


def credential_view(credential: Credential) -> dict[str, Any]:
    return {
        "id": credential.id,
        "name": credential.name,
        "foundryUrl": credential.foundry_url,
        "foundryUsername": credential.foundry_username,
        "world": credential.world,
    }


def _fields(body: dict[str, Any], bad: str) -> dict[str, str | None]:
    """The credential's string fields of a body (None: absent), bounded; `bad` for a wrong type."""
    fields: dict[str, str | None] = {}
    for name, limit in LIMITS.items():
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            raise error(400, bad)
        if value is not None and len(value) > limit:
            raise error(400, f"'{name}' is too long (at most {limit} characters)")
        fields[name] = value
    url = fields["foundryUrl"]
    if url and urlsplit(url).scheme not in ("http", "https"):
        raise error(400, "foundryUrl must be an http or https URL")
    return fields


def _check_vault(vault: Vault) -> None:
    problem = vault.available()
    if problem:
        raise error(400, f"Credential storage is not available: {problem}.")


async def h_create_credential(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed = await signed_in(request, state, SO)
    fields = _fields(
        await strict_body(request, route, "Invalid request body"), "Invalid request body"
    )
    required = ("name", "foundryUrl", "foundryUsername", "foundryPassword")
    if not all(fields[name] for name in required):
        raise error(400, REQUIRED)
    vault = _vault(request)
    await asyncio.to_thread(_check_vault, vault)
    made = await asyncio.to_thread(
        vault.create,
        signed.account,
        (fields["name"] or "").strip(),
        fields["foundryUrl"] or "",
        fields["foundryUsername"] or "",
        fields["foundryPassword"] or "",
        (fields["world"] or "").strip(),
    )
    if made is None:
        raise error(400, f"At most {MAX_PER_ACCOUNT} credentials per account")
    return answer({**credential_view(made), "createdAt": stamp(made.created_at)}, 201)


async def h_list_credentials(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed = await signed_in(request, state, SO)
    listed = await asyncio.to_thread(_vault(request).list, signed.account)
    return answer(
        {
            "credentials": [
                {
                    **credential_view(c),
                    "createdAt": stamp(c.created_at),
                    "updatedAt": stamp(c.updated_at),
                }
                for c in listed
            ]
        }
    )


def _credential_id(request: web.Request) -> str:
    value = request.match_info["id"]
    if not valid_id(value) or len(value) > 64:
        raise error(400, "Invalid credential ID")
    return value


async def h_update_credential(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed = await signed_in(request, state, SO)
    credential_id = _credential_id(request)
    vault = _vault(request)
    if await asyncio.to_thread(vault.get, signed.account, credential_id) is None:
        raise error(404, "Credential not found")
    fields = _fields(await loose_body(request, route), "Invalid request body")
    if not fields["foundryPassword"]:
        raise error(400, "Password is required when updating a credential.")
    await asyncio.to_thread(_check_vault, vault)
    changed = await asyncio.to_thread(
        vault.update,
        signed.account,
        credential_id,
        fields["foundryPassword"],
        (fields["name"] or "").strip() or None,
        fields["foundryUrl"] or None,
        fields["foundryUsername"] or None,
        None if fields["world"] is None else fields["world"].strip(),
    )
    if changed is None:
        raise error(404, "Credential not found")
    return answer({**credential_view(changed), "updatedAt": stamp(changed.updated_at)})


async def h_delete_credential(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    signed = await signed_in(request, state, SO)
    credential_id = _credential_id(request)
    if not await asyncio.to_thread(_vault(request).delete, signed.account, credential_id):
        raise error(404, "Credential not found")
    return answer({"message": "Credential deleted", "success": True})


# Notification settings -----------------------------------------------------------------------

OWNERS: Final = {  # level kind -> (400 text for a bad id, 404 text)
    "key": ("Invalid key ID", "API key not found"),
    "world": ("Invalid known client ID", "World not found"),
}


async def _owner(request: web.Request, state: AccountDeps, level: Level) -> tuple[Signed, str]:
    """The caller and the owner id of the settings a route names (its key or world must be the
    caller's)."""
    signed = await signed_in(request, state, SO)
    if level is ACCOUNT:
        return signed, signed.account
    invalid, missing = OWNERS[level.kind]
    owner = request.match_info["id"]
    if not valid_id(owner) or len(owner) > 64:
        raise error(400, invalid)
    find = keys.account_key if level is KEY else keys.account_world
    if await asyncio.to_thread(find, state.store, signed.account, owner) is None:
        raise error(404, missing)
    return signed, owner


def _with_owner(level: Level, owner: str, values: dict[str, Any]) -> dict[str, Any]:
    return {level.owner_key: owner, **values} if level.owner_key else values


def _level(route: Route) -> Level:
    return {"account": ACCOUNT, "key": KEY, "world": WORLD}[route.extra["level"]]


async def h_get_notifications(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    level = _level(route)
    signed, owner = await _owner(request, state, level)
    values = await asyncio.to_thread(
        notifications.current, state.store, level, signed.account, owner
    )
    smtp = services(request).settings.mail_enabled
    return answer({**_with_owner(level, owner, values), "smtpAvailable": smtp})


async def h_put_notifications(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    level = _level(route)
    signed, owner = await _owner(request, state, level)
    values = notifications.parse(level, await strict_body(request, route, "Invalid request body"))
    await asyncio.to_thread(notifications.write, state.store, level, signed.account, owner, values)
    body = _with_owner(level, owner, values)
    if level is WORLD:  # the reference's world answer carries it, the others do not
        body["smtpAvailable"] = services(request).settings.mail_enabled
    return answer(body)


async def h_delete_notifications(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    level = _level(route)
    signed, owner = await _owner(request, state, level)
    await asyncio.to_thread(notifications.delete, state.store, level, signed.account, owner)
    return answer({"success": True})


async def h_test_notifications(
    request: web.Request, route: Route, state: AccountDeps
) -> web.Response:
    level = _level(route)
    signed, owner = await _owner(request, state, level)
    saved = await asyncio.to_thread(notifications.read, state.store, level, signed.account, owner)
    if saved is None and level is not ACCOUNT:
        which = "key" if level is KEY else "world"
        raise error(400, f"No notification settings configured for this {which}")
    sent = await loose_body(request, route) if level is ACCOUNT else {}
    values = saved or dict(level.fields)
    email = sent.get("notifyEmail") if isinstance(sent.get("notifyEmail"), str) else ""
    webhook = (
        sent.get("discordWebhookUrl") if isinstance(sent.get("discordWebhookUrl"), str) else ""
    )
    email = (email or values["notifyEmail"])[: notifications.MAX_TEXT]
    webhook = webhook or values["discordWebhookUrl"]
    if not email and not webhook:
        raise error(400, "No notification destination configured")
    accounts = services(request)
    if not email or accounts.settings.smtp is None:
        raise error(
            400,
            "This relay sends test notifications by email only (with SMTP configured); "
            "Discord webhooks are stored but not called",
        )
    try:
        await mail.send(
            accounts.settings.smtp,
            email,
            "Test Notification",
            "This is a test notification from your vttrelay account.\n",
        )
    except Exception as exc:  # the SMTP server's answer, as the reference reports it
        raise error(500, f"Test notification failed: {type(exc).__name__}") from None
    return answer({"message": "Test notification sent", "success": True})


HANDLERS: Final = {
    "auth_create_credential": h_create_credential,
    "auth_list_credentials": h_list_credentials,
    "auth_update_credential": h_update_credential,
    "auth_delete_credential": h_delete_credential,
    "auth_get_notifications": h_get_notifications,
    "auth_put_notifications": h_put_notifications,
    "auth_delete_notifications": h_delete_notifications,
    "auth_test_notifications": h_test_notifications,
}
