"""The one request core shared by REST, SSE and /ws/api (DESIGN §8a).

Every keyed call, whatever its transport, goes through the same steps, written once here and in
this order (wire-protocol §4.1 stages 3, 4, 7, 8-13). The adapters reach them through one
`Gate`, which holds the few services a call needs (the key cache, the usage counter, the rate
budgets, the world directory, the relay's limits) and nothing else of the relay:

1. `gate.admit(secret, scope, client_id)` (`gate.admit_key(key, ...)` for a key already at hand,
   a dashboard session's): the API key (401 `API key is required`, `Invalid API
   key`, `API key is disabled`, `API key has expired`; 403 `Account disabled` for a key of an
   account its operator disabled), the world the caller named (404 `Invalid
   client ID` when it is not connected, 401 `Invalid API key for this client ID` when it belongs
   to another account), the key's rate limit (429 with `Retry-After`; the call is then counted
   for usage), the scope (403 `API key lacks required scope: <scope>`). Returns the key.
2. Parameters: `params.extract` with the route's declarations (400 `'x' is required`, ...). The
   adapter gives it the sources: REST the query, body and path; /ws/api the frame's top level.
3. `gate.target_world(key, client_id)`: the key's allowed worlds (403 `API key is not
   authorized for this client`), then the target world (§4.3: named, the key's only world, the
   account's only live world; 404 / 400). An offline world the gate's `WorldStarter` may start
   (`serve --auto-start-worlds`, a paired Foundry world armed for auto-start) is started first,
   in `_start_offline`, the one place for every transport.
4. Requests: `gate.forward(key, route, params)` checks the route's guards for this key
   (`params.check_guards`: a parameter value that needs another scope or a script check), runs
   step 3 with `params["clientId"]`, checks the world's game system (400), builds the frame with
   `build_frame` (declared parameters, `_scopes`, the key's forced `userId` over the caller's)
   and awaits the reply (408 `Request timed out`, 503 `World disconnected before replying`). It
   returns the world's `Reply` untouched.
   Streams: `build_filter(channel, params, key.user_id, users)` is the stream's frame: the key's
   forced user wins over the caller's `userId`, and a bound non-GM user may open only the chat
   and roll streams (403).

Every refusal is one `RelayError(status, body)` with the documented JSON body. The adapters only
translate it: REST and SSE into an HTTP response with that status and body (`forward.py`;
`app.relay_middleware` does it for every route), /ws/api into an error frame with the caller's
`requestId` (`events/ws_api.py`).

The hot path (a forwarded request) does per call: one key-cache lookup, a few attribute checks,
one token-bucket step and a usage-counter increment, the parameter extraction, the route's guards
(none on most routes), one registry lookup, the frame dict, and the world round trip (the only
await besides reading the body). No store access, no extra task.
"""

from __future__ import annotations

import itertools
import math
import os
import secrets
from collections.abc import Awaitable, Mapping
from typing import Any, Final, Protocol

import orjson

from vttrelay import protocol
from vttrelay.relay.accounts.key_cache import KeyCache, UsageCounter
from vttrelay.relay.backends.ports import Counters, WorldDirectory, WorldHandle
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.events.model import EventFilter, parse_hooks, resolve_user
from vttrelay.relay.link.pending import Reply, WorldGone
from vttrelay.relay.params import ParamError, check_guards
from vttrelay.relay.routes import Route
from vttrelay.relay.store import KeyRecord

TIMED_OUT: Final = "Request timed out"
WORLD_GONE: Final = "World disconnected before replying"
RATE_LIMITED: Final = "Too many API requests, please slow down"
MONTHLY_LIMITED: Final = "Scoped key monthly request limit exceeded"
SUBSCRIBE_SCOPE: Final = "events:subscribe"
AUTO_START_TIMEOUT: Final = 60.0  # an offline world started for a call has this long to connect


class RelayError(Exception):
    """A refused call: the HTTP-style `status` and the documented JSON `body`
    (`{"error": "<text>", ...}`), and HTTP `headers` for the REST adapter (`Retry-After` on a
    rate-limited call). Raised by the core; translated by each adapter."""

    __slots__ = ("status", "body", "headers")

    def __init__(
        self, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(body.get("error"))
        self.status = status
        self.body = body
        self.headers = headers

    @property
    def message(self) -> str:
        return str(self.body.get("error"))

    def json(self) -> bytes:
        return orjson.dumps(self.body)


def error(status: int, text: str, /, **extra: Any) -> RelayError:
    """`RelayError(status, {"error": text, **extra})`."""
    return RelayError(status, {"error": text, **extra})


# 1. Key, named world, rate, scope ----------------------------------------------------------------


def key_problem(key: KeyRecord | None) -> str | None:
    """Why a key cannot be used (unknown, its account disabled, disabled, expired), or None."""
    if key is None:
        return "Invalid API key"
    if key.account_disabled:
        return protocol.ACCOUNT_DISABLED
    if not key.enabled:
        return "API key is disabled"
    if key.expired():
        return "API key has expired"
    return None


Admission = KeyRecord | Awaitable[KeyRecord]


class WorldStarter(Protocol):
    """Starts an account's offline world for a call that names it: a stored embedded world
    (`serve --auto-start-worlds`) or a paired Foundry world its owner armed for auto-start (the
    `sessions` package). Given to the gate by the composition root, so the relay knows nothing
    of sessions."""

    def may_start(self, account: str, client_id: str) -> bool | None:
        """Could this be a world of the account it starts? True or False when the id alone
        tells (no I/O), None when only `armed` can. Asked by `admit`."""
        ...

    async def armed(self, account: str, client_id: str) -> bool:
        """Is this a world of the account that it would start (a store look-up)?"""
        ...

    async def start(self, account: str, client_id: str, timeout: float) -> bool:
        """Start it and wait up to `timeout` s until it is connected: True once live, False when
        it is none of the account's worlds; raises RelayError when the start failed."""
        ...


class Gate:
    """The request core's gate: what a keyed call may use of the relay, and the steps of §8a
    over it. One per application; every adapter (REST, SSE, /ws/api) is handed this, never the
    application's state."""

    __slots__ = ("config", "counters", "keys", "starter", "usage", "worlds")

    def __init__(
        self,
        config: RelayConfig,
        keys: KeyCache,
        usage: UsageCounter,
        counters: Counters,
        worlds: WorldDirectory,
    ) -> None:
        self.config = config  # read per call: its default rate and the tests' timeout override
        self.keys = keys
        self.usage = usage
        self.counters = counters  # the per-key rate budgets (backends.Counters)
        self.worlds = worlds  # where each world lives (backends.WorldDirectory)
        self.starter: WorldStarter | None = None  # auto-start of offline worlds (server sets it)

    def admit(self, secret: str | None, scope: str | None, client_id: str | None) -> Admission:
        """Key, named world, rate limit and scope of one call (step 1); returns the key.

        In-process every step is synchronous and the key comes back as it is. A budget shared
        by several instances (`backends.Counters` on Redis) answers after a round trip: then the
        steps after it run once it has answered, and an awaitable of the key comes back. The
        adapters write `key = await admitted(gate.admit(...))`; the REST forward path checks
        inline instead, so a forwarded call in-process has no await before the world's.
        """
        if not secret:
            raise error(401, "API key is required")
        key = self.keys.lookup(secret)
        if key is None or not key.enabled or key.expired():
            status = 403 if key is not None and key.account_disabled else 401
            raise error(status, key_problem(key) or "Invalid API key")
        return self.admit_key(key, scope, client_id)

    def admit_key(self, key: KeyRecord, scope: str | None, client_id: str | None) -> Admission:
        """`admit` for a key the caller already holds (a signed-in dashboard session's, which
        acts as its account's own key: `dashboard/calls.py`): the named world, rate limit,
        monthly limit, usage count and scope, the same steps as for a key sent in a header."""
        if client_id:
            world = self.worlds.get(client_id)
            if world is None:
                starter = self.starter
                startable = starter.may_start(key.account, client_id) if starter else False
                if startable is None:
                    return self._admit_offline(key, scope, client_id)
                if not startable:
                    raise error(404, "Invalid client ID")
            elif world.account != key.account:
                raise error(401, "Invalid API key for this client ID")
        limit = key.rate_per_minute
        if limit is None:
            limit = self.config.rate_per_minute
        allowed = self.counters.allow(key.id, limit)
        if allowed is not True:
            if allowed is False:
                raise RelayError(429, {"error": RATE_LIMITED}, {"Retry-After": retry_after(limit)})
            return self._admit_shared(key, scope, allowed, limit)
        return self._admitted(key, scope)

    async def _admit_offline(self, key: KeyRecord, scope: str | None, client_id: str) -> KeyRecord:
        """`admit` for a named offline world only a store look-up can tell startable (a paired
        Foundry world armed for auto-start): the rate limit and scope first, so the look-up
        costs no more calls than the key may make; 404 `Invalid client ID` when it is not."""
        admitted_key = await admitted(self.admit_key(key, scope, None))  # rate and scope
        starter = self.starter
        if starter is None or not await starter.armed(key.account, client_id):
            raise error(404, "Invalid client ID")
        return admitted_key

    def _admitted(self, key: KeyRecord, scope: str | None) -> KeyRecord:
        """The steps after the rate limit: the key's monthly limit, usage count, scope."""
        if key.monthly_limit and key.over_monthly_limit(self.usage.pending(key.id)):
            raise error(429, MONTHLY_LIMITED)
        self.usage.count(key.id)
        if scope is not None and scope not in key.scopes:
            raise error(403, f"API key lacks required scope: {scope}")
        return key

    async def _admit_shared(
        self, key: KeyRecord, scope: str | None, allowed: Awaitable[bool], limit: int
    ) -> KeyRecord:
        """The rest of `admit` once a shared budget has answered."""
        if not await allowed:
            raise RelayError(429, {"error": RATE_LIMITED}, {"Retry-After": retry_after(limit)})
        return self._admitted(key, scope)

    def key_problem(self, secret: str) -> str | None:
        """Why an open stream's API key no longer works (revoked, expired...), or None."""
        return key_problem(self.keys.lookup(secret))

    async def forward(self, key: KeyRecord, route: Route, params: Mapping[str, Any]) -> Reply:
        """Steps 3-4 of a request: the route's guards for this key, target world, system check,
        frame, the world's reply."""
        try:
            check_guards(route, params, key.scopes)
        except ParamError as exc:
            raise error(exc.status, exc.message, **exc.extra) from None
        timeout = self.config.timeout_override or route.timeout
        try:
            world = resolve_world(key, params.get("clientId"), self.worlds)
        except RelayError as exc:
            world = await self._start_offline(key, exc)
        check_system(route, world)
        frame = build_frame(route, params, key, world.client_id)
        try:
            return await world.request(frame, timeout)
        except TimeoutError:
            raise error(408, TIMED_OUT) from None
        except WorldGone:
            raise error(503, WORLD_GONE) from None

    async def target_world(self, key: KeyRecord, client_id: str | None) -> WorldHandle:
        """Step 3 for the calls that are not forwarded requests (SSE streams, a /ws/api socket,
        uploads): the target world, an offline one started first as `forward` starts it."""
        try:
            return resolve_world(key, client_id, self.worlds)
        except RelayError as exc:
            return await self._start_offline(key, exc)

    async def _start_offline(self, key: KeyRecord, refused: RelayError) -> WorldHandle:
        """The world of a call refused as offline (`refused`, the 404 naming its client id), once
        the starter has started it (within `AUTO_START_TIMEOUT`); else `refused` is raised. The
        one place every transport starts an offline world."""
        client_id = refused.body.get("clientId")
        starter = self.starter
        if refused.status != 404 or starter is None or not isinstance(client_id, str):
            raise refused
        if starter.may_start(key.account, client_id) is False:
            raise refused
        if not await starter.start(key.account, client_id, AUTO_START_TIMEOUT):
            raise refused
        return resolve_world(key, client_id, self.worlds)


async def admitted(admission: Admission) -> KeyRecord:
    """The key `Gate.admit` let through, once a shared rate budget has answered."""
    return admission if isinstance(admission, KeyRecord) else await admission


def retry_after(per_minute: int) -> str:
    """`Retry-After` for a call refused by a limit of `per_minute` calls: whole seconds until
    the key's budget has a call again (one call's share of the minute, the longest it takes)."""
    return str(max(1, math.ceil(60 / per_minute)))


# 3. The target world -----------------------------------------------------------------------------


def resolve_world(key: KeyRecord, client_id: str | None, registry: WorldDirectory) -> WorldHandle:
    """The target world of a call (wire-protocol §4.3), restricted to the key's account/list."""
    allowed = key.client_ids
    if client_id:
        if allowed and client_id not in allowed:
            raise error(403, "API key is not authorized for this client")
    elif len(allowed) == 1:
        client_id = allowed[0]
    if client_id:
        world = registry.get(client_id)
        if world is None or world.account != key.account:
            raise error(
                404,
                "Invalid client ID",
                clientId=client_id,
                message="No Foundry client connected with this ID.",
            )
        return world
    live = [w for w in registry.for_account(key.account) if not allowed or w.client_id in allowed]
    if not live:
        raise error(404, "No connected Foundry clients found")
    if len(live) > 1:
        raise error(
            400,
            "Multiple clients connected. Please specify clientId.",
            connectedClients=sorted(w.client_id for w in live),
        )
    return live[0]


# 4. Requests: the frame and the round trip -------------------------------------------------------

_counter = itertools.count(1)
_process = secrets.token_hex(4)  # random per process (and per forked child): made once


def _new_process_id() -> None:
    global _process
    _process = secrets.token_hex(4)


def seed_request_ids(seed: int) -> None:
    """Make this process's request ids reproducible (`vttrelay serve --seed`, one process): the
    counter starts again at 1 and the process part is the seed's (`s<seed>`), so the same
    requests get the same ids, and the embedded world's replies, which echo them, the same
    bytes. Not for several processes serving the same worlds: their ids would collide."""
    global _counter, _process
    _counter = itertools.count(1)
    _process = f"s{seed}"


os.register_at_fork(after_in_child=_new_process_id)


def new_request_id(action: str) -> str:
    """`<action>_<counter>_<process>`: unique within a process by the counter, across processes
    and restarts by a random part made once per process (no random bytes per request)."""
    return f"{action}_{next(_counter)}_{_process}"


def build_frame(
    route: Route, params: Mapping[str, Any], key: KeyRecord, client_id: str = ""
) -> dict[str, Any]:
    """The frame world `client_id` receives: type, requestId, declared params, _scopes, and the
    key's forced userId for that world in place of the caller's."""
    assert route.action is not None
    frame: dict[str, Any] = {"type": route.action, "requestId": new_request_id(route.action)}
    for name, value in params.items():
        if name not in ("clientId", "type"):
            frame[name] = value
    frame["_scopes"] = list(key.scopes)
    forced = key.forced_user(client_id)
    if forced:
        frame["userId"] = forced
    return frame


def check_system(route: Route, world: WorldHandle) -> None:
    """A route that needs a game system (dnd5e) fails at once on a world running another."""
    if route.system and world.system_id != route.system:
        raise error(
            400,
            f"This endpoint needs a {route.system} world; "
            f"world '{world.client_id}' runs '{world.system_id or 'unknown'}'",
        )


# 4. Streams: the filter --------------------------------------------------------------------------

# Streams a non-GM user bound to a key may not open: they carry whole documents unfiltered.
GM_ONLY_CHANNELS: Final = frozenset(
    {protocol.HOOK_CHANNEL, protocol.ACTOR_CHANNEL, protocol.COMBAT_CHANNEL, protocol.SCENE_CHANNEL}
)


def build_filter(
    channel: str, params: Mapping[str, Any], forced_user: str | None, users: Any
) -> EventFilter:
    """A subscriber's filter from a stream route's parameters; raises RelayError (400/403).

    `forced_user` (the key's bound user) wins over the caller's `userId`. A user is resolved in
    the world's user list by id, then by name; a non-GM bound user may open only the chat and
    roll streams.
    """
    wanted = forced_user or params.get("userId")
    viewer = None
    if wanted:
        viewer = resolve_user(users, str(wanted))
        if viewer is None:
            raise error(400, f"User not found: {wanted}")
        if forced_user and not viewer.is_gm and channel in GM_ONLY_CHANNELS:
            raise error(403, f"User '{viewer.name}' must be a GM to subscribe to {channel}")
    chat_type = params.get("type")
    if chat_type is not None and (not isinstance(chat_type, int) or not 0 <= chat_type <= 4):
        raise error(400, "'type' must be a chat type from 0 to 4")
    return EventFilter(
        speaker=params.get("speaker") or None,
        chat_type=chat_type,
        whisper_only=bool(params.get("whisperOnly")),
        viewer=viewer,
        hooks=parse_hooks(params.get("hooks")),
        encounter_id=params.get("encounterId") or None,
        actor_uuid=params.get("actorUuid") or None,
        scene_id=params.get("sceneId") or None,
    )
