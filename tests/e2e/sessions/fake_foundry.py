"""A small fake Foundry server for the browser-session tests: the join page with the
reference's form fields (`select[name=userid]`, `input[name=password]`), `POST /join` taking
`{action: "join", userid, password}` as Foundry does, and a game page (`#ui-left`) whose script
connects to the relay's `/relay` as the module does: the world's client id (its world setting,
set when the world was paired) and the connection token from local storage
(`foundry-rest-api.connectionToken`, a JSON string), the auth frame first, then it answers every
request with `{type: <type>-result, requestId, data: {answeredBy: "fake-foundry"}}`."""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

USERS = (
    ("gm000001", "Gamemaster", False),
    ("pl000001", "Player", False),
    ("bz000001", "Busy", True),
)
PASSWORD = "hunter2"
JOIN_PAGE = """<!doctype html><title>Join Game Session</title>
<form id="join"><select name="userid">{options}</select>
<input type="password" name="password"><button>Join</button></form>"""
GAME_PAGE = """<!doctype html><title>Fake World</title><div id="ui-left"></div><script>
const token = JSON.parse(localStorage.getItem("foundry-rest-api.connectionToken"));
const query = new URLSearchParams({{id: "{client_id}", worldId: "fake-world",
  worldTitle: "Fake World", foundryVersion: "14.363", systemId: "dnd5e",
  systemTitle: "Dungeons & Dragons Fifth Edition", systemVersion: "5.0.4"}});
const ws = new WebSocket("{relay}?" + query);
ws.onopen = () => ws.send(JSON.stringify({{type: "auth", token}}));
ws.onmessage = (message) => {{
  const frame = JSON.parse(message.data);
  if (frame.requestId) ws.send(JSON.stringify({{type: frame.type + "-result",
    requestId: frame.requestId, data: {{answeredBy: "fake-foundry"}}}}));
}};
</script>"""


def fake_foundry(relay_ws_url: str, client_id: str) -> web.Application:
    sessions: set[str] = set()

    async def join_page(request: web.Request) -> web.Response:
        options = "".join(
            f'<option value="{uid}"{" disabled" if busy else ""}>{name}</option>'
            for uid, name, busy in USERS
        )
        return web.Response(text=JOIN_PAGE.format(options=options), content_type="text/html")

    async def join(request: web.Request) -> web.Response:
        body: Any = await request.json()
        if body.get("action") != "join" or body.get("userid") != USERS[0][0]:
            return web.json_response({"status": "failed", "message": "Unknown user"})
        if body.get("password") != PASSWORD:
            return web.json_response(
                {"status": "failed", "message": "Incorrect password for user Gamemaster"}
            )
        cookie = secrets.token_hex(8)
        sessions.add(cookie)
        answer = web.json_response({"status": "success", "redirect": "/game"})
        answer.set_cookie("session", cookie)
        return answer

    async def game(request: web.Request) -> web.Response:
        if request.cookies.get("session") not in sessions:
            raise web.HTTPFound("/join")
        page = GAME_PAGE.format(client_id=client_id, relay=relay_ws_url)
        return web.Response(text=page, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", join_page)
    app.router.add_get("/join", join_page)
    app.router.add_post("/join", join)
    app.router.add_get("/game", game)
    return app
