"""A signed-in dashboard session's API calls and event streams, through the relay's request core.

A session needs no API key: it acts as its account's own key (`session_key`: every scope, every
world of the account, no forced user), so the same steps run as for a key sent in a header
(`core.Gate.admit_key`: the named world, the rate limit, the scope; then `Gate.forward`: the
account's worlds only, the system check, the world's reply) and the call is recorded in the
activity log like any API call (`RequestRecord`, key name `SESSION_KEY_NAME`). The operator,
who sees every account, acts as the account of the world it names.

`RouteFinder` matches a method and path to the route table (its `{name}` and `{name:regex}`
path parameters). Only forward routes and the local routes that are forwards too
(`/scene/image`: its picture; `/download`: the world's JSON reply with the file's data URL) are
offered: the other local routes read a key from the request themselves.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from vttrelay.relay.accesslog import RequestRecord
from vttrelay.relay.core import RelayError, admitted, error
from vttrelay.relay.forward import image_response, read_body, reply_response
from vttrelay.relay.link.pending import Reply
from vttrelay.relay.params import ParamError, extract, parse_body
from vttrelay.relay.routes import ALL_SCOPES, Route
from vttrelay.relay.store import KeyRecord

if TYPE_CHECKING:
    from vttrelay.relay.activity import ActivityLog
    from vttrelay.relay.backends.ports import WorldDirectory
    from vttrelay.relay.core import Gate

SESSION_KEY_NAME: Final = "dashboard (signed in)"
# local routes that are forwards too, and how a session's call of each is answered: the scene's
# picture as its bytes (`forward.image_response`), a file of the world as the world's JSON reply
# (its data URL: the world page's portraits)
LOCAL_FORWARDS: Final[dict[str, Callable[[Reply], web.Response]]] = {
    "scene_image": image_response,
    "download": reply_response,
}
NOT_OFFERED: Final = (
    "This route is not offered to a dashboard session (it reads an API key itself): "
    "call it with an API key"
)
_PARAM = re.compile(r"\{(\w+)(?::([^{}]+))?\}")


def session_key_id(account: str) -> str:
    """The id a session of `account` acts under (its rate budget, stream slots, activity)."""
    return f"dashboard:{account}"


def session_key(account: str) -> KeyRecord:
    """The key a signed-in session of `account` acts as: the account's own (every scope, every
    world of the account, no forced user, the relay's default rate). Its id names the account,
    so the rate budget and the stream slots are the account's sessions' together."""
    return KeyRecord(
        id=session_key_id(account),
        account=account,
        name=SESSION_KEY_NAME,
        scopes=ALL_SCOPES,
        client_ids=(),
        user_id=None,
        expires_at=None,
        enabled=True,
        rate_per_minute=None,
        created_at=0.0,
        last_used_at=None,
        request_count=0,
    )


def session_callable(route: Route) -> bool:
    """Whether a session may call `route`: a forward route, or a picture that is a forward."""
    return route.mode == "forward" or (route.mode == "local" and route.handler in LOCAL_FORWARDS)


def _pattern(path: str) -> re.Pattern[str]:
    """A route-table path (`/chat/{messageId}`, `/contents/{path:.*}`) as a full-match regex."""
    out, at = [], 0
    for found in _PARAM.finditer(path):
        out.append(re.escape(path[at : found.start()]))
        out.append(f"(?P<{found.group(1)}>{found.group(2) or '[^/]+'})")
        at = found.end()
    out.append(re.escape(path[at:]))
    return re.compile("".join(out))


class RouteFinder:
    """The route of a method and path, among the routes a session may call."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.routes = [(r, _pattern(r.path)) for r in routes if session_callable(r)]

    def find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route and its path parameters, or None."""
        if len(path) > 1024:
            return None
        for route, pattern in self.routes:
            if route.method == method and (found := pattern.fullmatch(path)):
                return route, found.groupdict()
        return None


async def read_call(
    request: web.Request, route: Route, path_params: Mapping[str, str]
) -> dict[str, Any]:
    """The route's parameters from the session's request (query, JSON body, path), bounded as
    any API call's body is (`forward.read_body`); RelayError 400/413."""
    raw = await read_body(request, route) if request.method != "GET" else b""
    try:
        return extract(route, request.query, parse_body(request.method, raw), path_params)
    except ParamError as exc:
        raise error(exc.status, exc.message, **exc.extra) from None


class SessionCalls:
    """The request core as a session uses it: `call` runs one route for an account."""

    def __init__(self, gate: Gate, worlds: WorldDirectory, activity: ActivityLog) -> None:
        self.gate = gate
        self.worlds = worlds
        self.activity = activity

    def account_of(self, viewer_account: str | None, client_id: str | None) -> str:
        """The account a viewer's call acts as: its own; the operator's, the named world's
        (RelayError 400 when it names none, 404 when that world is not connected)."""
        if viewer_account is not None:
            return viewer_account
        if not client_id:
            raise error(400, "Choose a world (clientId): the operator acts as its account")
        world = self.worlds.get(client_id)
        if world is None:
            raise error(404, "Invalid client ID", clientId=client_id)
        return world.account

    async def call(
        self,
        request: web.Request,
        viewer_account: str | None,
        route: Route,
        params: Mapping[str, Any] | Mapping[str, str],
        read: bool = False,
    ) -> web.Response:
        """`route` for a viewer (`viewer_account`; None: the operator) as its account's own key
        through the request core, recorded in the activity log as an API call, its refusals
        too (RelayError, raised). With `read`, `params` are the route's path parameters and the
        rest is read from the request (`read_call`); else `params` are the call's parameters."""
        started = time.perf_counter()
        account = viewer_account or ""
        client_id: Any = request.query.get("clientId", "") if read else params.get("clientId")
        status = 500
        try:
            values = await read_call(request, route, params) if read else params
            client_id = values.get("clientId")
            account = self.account_of(viewer_account, client_id)
            key = await admitted(self.gate.admit_key(session_key(account), route.scope, client_id))
            reply = await self.gate.forward(key, route, values)
            response = LOCAL_FORWARDS.get(route.handler or "", reply_response)(reply)
            status = response.status
            return response
        except RelayError as exc:
            status = exc.status
            raise
        finally:
            self.record(request, account, client_id, route, status, started)

    def record(
        self,
        request: web.Request,
        account: str,
        client_id: Any,
        route: Route,
        status: int,
        started: float,
    ) -> None:
        """A session's call (or stream, when it ends) in the activity log, as the middleware
        records a keyed one: when, account, the session's key, world, route, status, duration
        (since `started`, a `time.perf_counter()`), address."""
        if not self.activity.enabled:
            return
        self.activity.add(
            RequestRecord(
                time.time(),
                session_key(account),
                account,
                str(client_id or ""),
                route.method,
                request.path,
                route.path,
                status,
                (time.perf_counter() - started) * 1000,
                request.remote or "",
                0,  # not an access line: the page's own request has one
                0,
            )
        )
