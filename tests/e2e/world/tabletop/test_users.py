"""User routes end to end (endpoints-beyond-seed §7): the relay's checks, the embedded world's
replies in the module's key order, the GM gate with `userId`, and a created user usable as
`userId` at once (for calls and for streams)."""

from __future__ import annotations

from typing import Any

from tests.support.e2e import CLIENT_ID, Api, api_for, eventually

from vttrelay.relay.routes import DEFAULT_SCOPES
from vttrelay.world.actions.users import CREDENTIALS, hash_password

GM = "gmUser0000000001"
ARIA = "playerAria000001"
USER_KEYS = ["id", "name", "role", "isGM", "active", "color", "avatar", "character"]


async def test_list_and_get_users(relay: Any, world: Any, api: Api) -> None:
    status, body = await api("GET", "/users")
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"] and body["type"] == "get-users-result"
    assert [u["name"] for u in body["data"]] == ["Gamemaster", "Aria", "Ben"]
    gm, aria = body["data"][0], body["data"][1]
    assert list(gm) == USER_KEYS
    assert gm == {
        "id": GM,
        "name": "Gamemaster",
        "role": 4,
        "isGM": True,
        "active": True,
        "color": "#161068",
        "avatar": "icons/svg/mystery-man.svg",
        "character": None,
    }
    assert aria["active"] is False and aria["character"] == "elaraWizard00001"

    assert (await api("GET", "/user", id=ARIA))[1]["data"] == aria
    status, body = await api("GET", "/user", name="aRIA")
    assert status == 200 and body["data"]["id"] == ARIA
    # an unknown id does not fall back to the name
    status, body = await api("GET", "/user", id="nobody", name="Aria")
    assert status == 400
    assert body == {
        "type": "get-user-result",
        "requestId": body["requestId"],
        "error": "User not found",
        "data": None,
    }
    status, body = await api("GET", "/user")
    assert (status, body) == (400, {"error": "At least one of 'id' or 'name' is required"})


async def test_create_update_delete_a_user_and_use_it_at_once(
    relay: Any, world: Any, api: Api, sse: Any
) -> None:
    status, body = await api("POST", "/user", {"name": "Cleo", "role": 1, "password": "s3cret"})
    assert status == 200, body
    assert list(body) == ["type", "requestId", "data"] and body["type"] == "create-user-result"
    cleo = body["data"]
    assert list(cleo) == USER_KEYS
    assert cleo["name"] == "Cleo" and cleo["role"] == 1 and cleo["isGM"] is False
    assert cleo["active"] is False and cleo["character"] is None
    assert cleo["color"].startswith("#") and len(cleo["color"]) == 7
    # the password is kept as a salted hash outside the User document: no route shows it
    with world.world.store.transaction() as tx:
        stored = tx.get("User", cleo["id"])
        credential = tx.get(CREDENTIALS, cleo["id"])
    assert stored is not None and "password" not in stored
    assert credential is not None
    assert credential["hash"] == hash_password("s3cret", credential["salt"])
    status, body = await api("GET", "/get", uuid=f"User.{cleo['id']}")
    assert status == 200 and body["data"]["name"] == "Cleo", body
    assert credential["hash"] not in str(body) and "password" not in str(body)

    # the new user is a userId at once: a player may not list users...
    status, body = await api("GET", "/users", userId="Cleo")
    assert status == 400 and body["error"] == "User 'Cleo' must be a GM to list users"
    assert body["data"] is None and list(body) == ["type", "requestId", "error", "data"]
    # ...and owns nothing, so a dnd5e write on Aria's wizard is refused by name
    status, body = await api(
        "POST",
        "/dnd5e/modify-experience",
        {"actorUuid": "Actor.elaraWizard00001", "amount": 5, "userId": cleo["id"]},
    )
    assert status == 400 and "User 'Cleo' does not have permission" in body["error"], body
    # the relay knows the new user for its stream filters too: a stream as Cleo opens
    await eventually(lambda: any(u["id"] == cleo["id"] for u in world_users(relay)))
    stream = await sse(relay, "/chat/subscribe", relay.key(DEFAULT_SCOPES), clientId=CLIENT_ID,
                       userId="Cleo")  # fmt: skip
    assert stream.status == 200 and (await stream.event()).name == "connected"

    status, body = await api(
        "PUT",
        "/user",
        {"id": cleo["id"], "data": {"role": 2, "character": "Actor.pipMonk000000001"}},
    )
    assert status == 200, body
    assert body["data"]["role"] == 2 and body["data"]["character"] == "pipMonk000000001"
    status, body = await api("PUT", "/user", {"data": {"name": "Cleo the Bold"}}, name="cleo")
    assert status == 200 and body["data"]["name"] == "Cleo the Bold"

    status, body = await api("DELETE", "/user", id=cleo["id"])
    assert (status, list(body)) == (200, ["type", "requestId", "success"])
    assert body["type"] == "delete-user-result" and body["success"] is True
    names = [u["name"] for u in (await api("GET", "/users"))[1]["data"]]
    assert names == ["Gamemaster", "Aria", "Ben"]
    with world.world.store.transaction() as tx:
        assert tx.get(CREDENTIALS, cleo["id"]) is None
    status, body = await api("GET", "/dnd5e/get-actor-details", actorUuid="x", details="[]",
                             userId=cleo["id"])  # fmt: skip
    assert status == 400 and body["error"] == f"User not found: {cleo['id']}"


def world_users(relay: Any) -> list[dict[str, Any]]:
    users: list[dict[str, Any]] = relay.state.registry.get(CLIENT_ID).users
    return users


async def test_user_errors_change_nothing(relay: Any, world: Any, api: Api) -> None:
    before = (await api("GET", "/users"))[1]["data"]
    cases: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
        ("POST", {}, {}, "'name' is required"),
        ("POST", {"name": "X", "role": "high"}, {}, "'role' must be a valid number"),
        ("PUT", {"id": ARIA}, {}, "'data' is required"),
        ("PUT", {"data": {"role": 2}}, {}, "At least one of 'id' or 'name' is required"),
        ("DELETE", {}, {}, "At least one of 'id' or 'name' is required"),
    ]
    for method, body, query, text in cases:
        status, reply = await api(method, "/user", body or None, **query)
        assert (status, reply) == (400, {"error": text}), (method, body)

    def err(body: dict[str, Any]) -> str:
        return str(body["error"])

    status, body = await api("POST", "/user", {"name": "  "})
    assert status == 400 and err(body) == "User name is required"
    assert list(body) == ["type", "requestId", "error"]
    status, body = await api("POST", "/user", {"name": "aria"})
    assert status == 400 and err(body) == "A user named 'Aria' already exists"
    status, body = await api("POST", "/user", {"name": "Dax", "role": 7})
    assert status == 400 and err(body).startswith("Invalid role: 7.")
    status, body = await api("PUT", "/user", {"id": "nobody", "data": {"role": 2}})
    assert status == 400 and err(body) == "User not found"
    status, body = await api("PUT", "/user", {"id": GM, "data": {"role": 1}})
    assert status == 400 and err(body) == "Cannot demote the last GM user"
    status, body = await api("PUT", "/user", {"id": ARIA, "data": {"role": 2, "color": "red"}})
    assert status == 400 and err(body).startswith("Invalid color: red.")
    status, body = await api("PUT", "/user", {"id": ARIA, "data": {"character": "Actor.nope"}})
    assert status == 400 and err(body) == "Actor not found: Actor.nope"
    status, body = await api("DELETE", "/user", id=GM)
    assert status == 400
    assert body == {
        "type": "delete-user-result",
        "requestId": body["requestId"],
        "success": False,
        "error": "Cannot delete the currently active GM user",
    }
    status, body = await api("DELETE", "/user", name="nobody")
    assert status == 400 and err(body) == "User not found" and body["success"] is False
    assert (await api("GET", "/users"))[1]["data"] == before  # nothing changed


async def test_userId_gates_writes_to_gms(relay: Any, world: Any, api: Api) -> None:
    for method, path, body, query, operation in [
        ("GET", "/user", None, {"id": GM}, "get user"),
        ("POST", "/user", {"name": "Eve"}, {}, "create users"),
        ("PUT", "/user", {"id": ARIA, "data": {"role": 4}}, {}, "update users"),
        ("DELETE", "/user", None, {"id": ARIA}, "delete users"),
    ]:
        status, reply = await api(method, path, body, userId="Aria", **query)
        assert status == 400 and reply["error"] == f"User 'Aria' must be a GM to {operation}"
    status, reply = await api("GET", "/users", userId="nonexistent-user-xyz-99999")
    assert status == 400 and reply["error"] == "User not found: nonexistent-user-xyz-99999"
    # a second GM may manage users, and a GM other than the running one can be deleted
    status, reply = await api("POST", "/user", {"name": "Co-GM", "role": 4})
    assert status == 200, reply
    co_gm = reply["data"]["id"]
    status, reply = await api("PUT", "/user", {"id": ARIA, "data": {"role": 2}}, userId="Co-GM")
    assert status == 200 and reply["data"]["role"] == 2
    status, reply = await api("PUT", "/user", {"id": GM, "data": {"role": 3}}, userId=co_gm)
    assert status == 200 and reply["data"]["isGM"] is True  # another full GM remains
    status, reply = await api("DELETE", "/user", id=co_gm)
    assert status == 400 and reply["error"] == "Cannot delete the last GM user"


async def test_user_scopes(relay: Any, world: Any) -> None:
    read_only = api_for(relay, DEFAULT_SCOPES)
    assert (await read_only("GET", "/users"))[0] == 200
    status, body = await read_only("POST", "/user", {"name": "Eve"})
    assert (status, body) == (403, {"error": "API key lacks required scope: user:write"})
